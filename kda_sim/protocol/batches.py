"""Poll batches: one row of pairs a polling thread, split at the kernel's batch width."""

from __future__ import annotations

import numpy as np

from kda_sim.protocol.ops import Poll
from kda_sim.protocol.tagexpr import TagExpr


def split_rows(rows: np.ndarray, width: int) -> np.ndarray:
    """A thread's list longer than ``width`` becomes several batches (padded with -1)."""
    rows = np.atleast_2d(np.asarray(rows, dtype=np.int64))
    if rows.shape[1] <= width:
        return rows
    parts = []
    for lo in range(0, rows.shape[1], width):
        part = rows[:, lo : lo + width]
        if part.shape[1] < width:
            pad = np.full((part.shape[0], width - part.shape[1]), -1, dtype=np.int64)
            part = np.concatenate([part, pad], axis=1)
        parts.append(part)
    return np.concatenate(parts, axis=0)


def poll(
    label: str,
    *row_blocks: np.ndarray,
    width: int,
    tag: TagExpr | None = None,
    lanes: int = 1,
    backoff: bool = False,
) -> Poll:
    """A poll site from the threads' rows of global cell ids, each split at ``width``
    pairs (several blocks may differ in width; they are padded to one), waiting for the
    tag ``tag`` computes (None: the kernel does not say); ``lanes`` and ``backoff`` are
    :class:`Poll`'s."""
    blocks = [split_rows(b, width) for b in row_blocks]
    width = max(b.shape[1] for b in blocks)
    if len(blocks) == 1:
        batches = blocks[0].copy()
    else:
        batches = np.full((sum(b.shape[0] for b in blocks), width), -1, dtype=np.int64)
        row = 0
        for b in blocks:
            batches[row : row + b.shape[0], : b.shape[1]] = b
            row += b.shape[0]
    # sorted, the -1 padding comes first: cut it off and drop repeats (fewer numpy calls
    # than a mask a step; K1 builds 2,237 polls a launch)
    flat = np.sort(batches, axis=None)
    if flat.size and flat[0] < 0:
        flat = flat[int(np.searchsorted(flat, 0)) :]
    if flat.size > 1:
        keep = np.empty(flat.size, dtype=bool)
        keep[0] = True
        np.not_equal(flat[1:], flat[:-1], out=keep[1:])
        cells = flat[keep]
    else:
        cells = flat.copy()
    batches.setflags(write=False)
    cells.setflags(write=False)
    return Poll(label, batches, cells, tag, lanes, backoff)
