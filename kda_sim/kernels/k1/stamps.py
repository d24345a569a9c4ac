"""K1's stamp tensors (its ``trace_decoders`` hook, kind ``stamps``; the file is loaded
by :mod:`kda_sim.importers.stamps`). The public twin's timeline build: a [blocks, 15]
int64 tensor of ``s_memrealtime`` stamps (100 MHz), saved by torch (``.pt``) or numpy
(``.npy``).

What the columns hold, read from the twin (``vllm/models/kimi_k3/amd/mono/kda_pre.py``
and ``common/stamps.py``): ``stamp_begin`` zeroes all 15 LDS words, then stamps point
0 at the CTA's start; points 1..11 are stamped as the CTA *leaves* slice, gate, mix,
load_x, gemv0, gemv1, k.stage, k.conv, k.gates, k.recur, k.norm; ``stamp_flush`` copies
the 15 words out at the end. Columns 12..14 are never stamped (``TL_POINTS = 15`` leaves
room; they stay 0). A point a CTA never passed stays 0, and so does every point of the
role it does not have. The gate point (2) is stamped by every attn CTA, also those
with no gate work (a >= S), where it equals point 1.

So a stage runs from the previous stamped point of the CTA's program to its own.
The kda points are overwritten by every task: only the last task of a CTA survives,
and for a CTA that ran more than one task the start of that task's ``k.stage`` (the
previous task's k.norm point) is lost; its ``k.stage`` span is left out and the
CTA listed in ``meta.extra["k_stage_start_lost"]``. The stamps carry no CU id, so
``unit`` is ``None`` (clock alignment then treats each CTA as its own clock).

The FlyDSL K1's timeline build (``kernel/flydsl/``) writes [blocks, 18 + 5 T],
T = max(1, ceil(R 96 / blocks)) the most kda tasks a CTA runs: columns 0..11 as the
twin's, 12..14 its launch record (R, L, nb, kda0, the variants and the record's
format: :mod:`kda_sim.kernels.k1.stamp_launch`), then 15 the CTA's end, 16 its id, 17
the kda tasks it ran, and ``18 + 5 n + p`` point p (k.stage .. k.norm) of its n-th task.
Every task's spans are decoded (nothing is lost), and a tensor that is not the launch
it is said to be is refused: rows other than the launch's 256 CTAs, its width for the
claimed R, a flushed row with no launch record or another launch's (another L or nb
too: the stamps hold times only, and every L and nb runs the same stages on the same
CTAs), a row holding another CTA's stamps, a CTA whose task count is not the claimed
launch's (R, kda0), a last-task copy (7..11) that is not its last task's. A FlyDSL
tensor cut to the twin's 15 columns keeps its record, checked the same; the twin's own
tensor records no launch (12..14 stay 0), so one read at another L or nb decodes as
that launch.

In either layout a CTA stamps its points in program order (start <= each stage's end
<= its end); a point earlier than the one before it is refused, naming CTA and point.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers.caps import check_count, check_ctas
from kda_sim.importers.stamps import load_stamp_array
from kda_sim.kernels.k1.config import LaunchConfig, variants_of
from kda_sim.kernels.k1.constants import BLOCKS
from kda_sim.kernels.k1.kda import tasks_of
from kda_sim.kernels.k1.program import Role, role_of
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.kernels.k1.stamp_launch import check_launch_records
from kda_sim.timeline.model import CtaTrack, Meta, StageSpan, Timeline

POINTS = 15
TICK_NS = 10.0  # s_memrealtime runs at 100 MHz
NAMES = ("start", *STAGES)  # the twin's 12 stamp points: the start, then every stage
ATTN_POINTS = (1, 2, 3)
GEMV_POINTS = (4, 5, 6)
KDA_POINTS = (7, 8, 9, 10, 11)
# the FlyDSL K1's extension (module docstring)
END, CTA_ID, TASKS_RUN, EXT_BASE = 15, 16, 17, 18
TASK_POINTS = len(KDA_POINTS)


def ext_width(n_tasks: int, blocks: int) -> int:
    """Columns of the FlyDSL K1's stamps: 18 + 5 T, T the most tasks a CTA runs."""
    return EXT_BASE + TASK_POINTS * max(1, -(-n_tasks // blocks))


def _config(
    R: int, L: int, nb: int, kda0: int, blocks: int, variants: dict[str, bool], where: str
) -> LaunchConfig:
    try:
        return LaunchConfig(R, L, nb, kda0, blocks=blocks, **variants_of(variants)).validate()
    except InvalidInput as e:
        raise InvalidInput(f"the stamps' configuration: {e}", what=e.what, where=where) from e


def stamps_timeline(
    arr: np.ndarray,
    *,
    R: int,
    L: int,
    nb: int = 8,
    kda0: int = 0,
    gpu: str = "mi355x",
    source: str = "stamps",
    **variants: bool,
) -> Timeline:
    """A stamp array -> :class:`Timeline` (module docstring: what each column means);
    ``variants``: the protocol variants the launch ran (``gate_local=True``, ...)."""
    full = np.asarray(arr)
    if full.ndim != 2 or (full.shape[1] != POINTS and full.shape[1] < EXT_BASE):
        raise TraceFormatError(
            f"shape {list(full.shape)}: expected [blocks, {POINTS}] (the twin's) or "
            f"[blocks, {EXT_BASE} + 5 T] (the FlyDSL K1's)",
            where=source,
        )
    blocks = int(full.shape[0])
    check_count(blocks, "CTAs (stamp rows)", source)
    check_ctas(blocks, source)
    if full.shape[1] != POINTS and blocks != BLOCKS:  # build_k1 builds no other launch
        raise TraceFormatError(
            f"{blocks} rows (CTAs); the FlyDSL K1 is one launch of {BLOCKS} CTAs, a row each",
            what="CTA count",
            where=source,
        )
    cfg = _config(R, L, nb, kda0, blocks, variants, source)
    extended = full.shape[1] != POINTS
    if extended and full.shape[1] != ext_width(cfg.n_tasks, blocks):
        raise TraceFormatError(
            f"{full.shape[1]} columns; the FlyDSL K1 at R={R} on {blocks} CTAs writes "
            f"{ext_width(cfg.n_tasks, blocks)} (18 + 5 x the most tasks a CTA runs)",
            where=source,
        )
    check_launch_records(full, cfg, required=extended, source=source)
    arr = full[:, :POINTS]
    if (full < 0).any():
        cta, col = (int(v) for v in np.argwhere(full < 0)[0])
        raise TraceFormatError(
            f"negative stamp {int(full[cta, col])} at column {col}", where=f"{source}: CTA {cta}"
        )
    starts = arr[:, 0]
    if not (starts > 0).any():
        raise TraceFormatError("no CTA stamped its start (point 0)", where=source)
    t0 = int(starts[starts > 0].min())
    # a stamp more than ~1 day of ticks from the first start cannot be this launch's
    limit = t0 + 10**13
    if (full > limit).any():
        cta, col = (int(v) for v in np.argwhere(full > limit)[0])
        raise TraceFormatError(
            f"stamp {int(full[cta, col])} is not of this launch", where=f"{source}: CTA {cta}"
        )

    def ns(v: int) -> float:
        return (int(v) - t0) * TICK_NS

    ctas: list[CtaTrack] = []
    lost: list[int] = []
    for b in range(blocks):
        row = arr[b]
        role = role_of(b)
        tasks = tasks_of(b, cfg)
        track = CtaTrack(b, role.value)
        if row[0] == 0:
            ctas.append(track)  # never started (or its record was never flushed)
            continue
        track.start = ns(row[0])
        prog: list[tuple[int, str, int]] = []  # (point, stage, task) in program order
        if role is Role.ATTN:
            prog += [(1, "slice", -1), (2, "gate", -1), (3, "mix", -1)]
        elif role is Role.GEMV:
            prog += [(4, "load_x", -1), (5, "gemv0", -1), (6, "gemv1", -1)]
        if tasks:
            last = tasks[-1]
            prog += [(p, NAMES[p], last) for p in KDA_POINTS]
        wrong = [
            p
            for p in ATTN_POINTS + GEMV_POINTS + KDA_POINTS
            if row[p] != 0 and p not in {q for q, _, _ in prog}
        ]
        if wrong:
            raise TraceFormatError(
                f"point {wrong[0]} ({NAMES[wrong[0]]}) is stamped, but a {role.value} CTA "
                f"with {len(tasks)} kda task(s) never passes it",
                where=f"{source}: CTA {b}",
            )
        prev: int | None = int(row[0])
        before = "point 0 (start)"
        finished = True
        for point, stage, task in prog:
            if row[point] == 0:
                finished = False
                break
            here = int(row[point])
            if extended and task >= 0:
                break  # every task's kda spans come from the extension (below)
            before = _in_order(prev, before, here, f"point {point} ({stage})", f"{source}: CTA {b}")
            has_gate = not (cfg.gate_local or b >= cfg.S)
            if stage == "gate" and not has_gate:
                prev = here  # stamped right after slice: no gate work on this CTA
                continue
            if stage == "k.stage" and len(tasks) > 1:
                lost.append(b)  # its start is the previous task's k.norm point, overwritten
            elif prev is not None:
                track.stages.append(StageSpan(stage, task, ns(prev), ns(here)))
            prev = here
        if extended:
            _every_task(track, full[b], tasks, (prev, before), ns, f"{source}: CTA {b}", cfg)
        elif finished:
            track.end = ns(prev) if prev is not None else track.start
        ctas.append(track)
    meta = Meta.for_launch(
        cfg,
        source="measured",
        gpu=gpu,
        blocks=blocks,
        clock="s_memrealtime 100 MHz",
        extra={
            "format": "flydsl k1 stamps" if extended else "stamps",
            "clock_resolution_ns": TICK_NS,
            "t0_ticks": t0,
            "only_last_task": not extended,
            "k_stage_start_lost": lost,
        },
    )
    return Timeline(meta, ctas)


def _in_order(prev: int | None, before: str, here: int, this: str, where: str) -> str:
    """Refuse a stamp point earlier than the one its CTA passed before it (a CTA runs its
    points in program order: start, each stage's end, the end); ``this`` is then the
    point the next must follow."""
    if prev is not None and here < prev:
        raise TraceFormatError(
            f"{this} is stamped at tick {here}, before {before} at {prev}: "
            f"a CTA stamps its points in program order",
            where=where,
        )
    return this


def _every_task(
    track: CtaTrack,
    row: np.ndarray,
    tasks: list[int],
    last: tuple[int | None, str],
    ns: Any,
    where: str,
    cfg: LaunchConfig,
) -> None:
    """The FlyDSL K1's columns 15.. of one started CTA: every task's five spans, from the
    CTA's last role point (``prev``) on, and its end; refused where the row is not the
    claimed launch's or its points are out of order."""
    prev, before = last
    if row[CTA_ID] != track.cta:
        raise TraceFormatError(f"the row holds CTA {int(row[CTA_ID])}'s stamps", where=where)
    if row[TASKS_RUN] != len(tasks):
        raise TraceFormatError(
            f"ran {int(row[TASKS_RUN])} kda task(s); CTA {track.cta} of a launch at R={cfg.R} "
            f"kda0={cfg.kda0} runs {len(tasks)}",
            where=where,
        )
    cols = row[EXT_BASE:].reshape(-1, TASK_POINTS)
    if cols[len(tasks) :].any():
        raise TraceFormatError(f"stamps past its {len(tasks)} task(s)", where=where)
    if tasks and any(row[p] != 0 and row[p] != cols[len(tasks) - 1][k]
                     for k, p in enumerate(KDA_POINTS)):  # fmt: skip
        raise TraceFormatError("points 7..11 are not its last task's", where=where)
    for n, task in enumerate(tasks):
        for k, name in enumerate(NAMES[p] for p in KDA_POINTS):
            here = int(cols[n][k])
            if here == 0:
                return  # this task stopped here: no end either
            this = f"column {EXT_BASE + TASK_POINTS * n + k} ({name} of task {task})"
            before = _in_order(prev, before, here, this, where)
            if prev is not None:
                track.stages.append(StageSpan(name, task, ns(prev), ns(here)))
            prev = here
    if row[END]:
        _in_order(prev, before, int(row[END]), f"column {END} (end)", where)
        track.end = ns(row[END])


def read_stamps(path: str | Path, **cfg: Any) -> Timeline:
    """A ``.pt`` / ``.npy`` stamp tensor -> :class:`Timeline`; ``cfg``: R, L, nb, kda0,
    gpu and the protocol variants: the launch it is said to be (the twin's tensor records
    none of them; the FlyDSL K1's launch record must match them)."""
    return stamps_timeline(load_stamp_array(path), source=str(path), **cfg)
