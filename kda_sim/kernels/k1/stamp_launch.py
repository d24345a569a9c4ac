"""The launch record the FlyDSL K1 writes into every stamps row it flushes, in the twin's
never-stamped columns 12..14: the stamps hold times only, and every L and nb runs the
same stages on the same CTAs, so without it a tensor read at another shape would decode
as that launch.

====  =====================================================================
12    :data:`FORMAT`: ``0x6B31`` ("k1") << 16 | the record's version (1)
13    R | L << 16 | nb << 32
14    kda0 | gate_local << 16 | nw_first << 17 | onw_first << 18
====  =====================================================================

Each CTA writes its own row's record (one lane, with its id and task count), so a
tensor cut from, or mixed with, another launch's rows is caught row by row.
"""

from __future__ import annotations

import numpy as np

from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig

COLUMNS = (12, 13, 14)
VERSION = 1
MARK = 0x6B31  # "k1": a record, not a stray stamp
FORMAT = MARK << 16 | VERSION
FIELD_BITS = 16  # R, L, nb, kda0 each fit (S <= 16, nb <= 30, kda0 < 256)
SHAPE = ("R", "L", "nb")
FLAGS = ("gate_local", "nw_first", "onw_first")  # the variants the FlyDSL K1 builds


def launch_record(cfg: LaunchConfig) -> tuple[int, int, int]:
    """Columns 12..14 of every row the FlyDSL K1 at ``cfg`` flushes."""
    shape = sum(getattr(cfg, f) << (FIELD_BITS * i) for i, f in enumerate(SHAPE))
    flags = sum(int(getattr(cfg, f)) << (FIELD_BITS + i) for i, f in enumerate(FLAGS))
    return FORMAT, shape, cfg.kda0 | flags


def _fields(record: np.ndarray) -> dict[str, int]:
    shape, rest = (int(v) for v in record[1:])
    mask = (1 << FIELD_BITS) - 1
    got = {f: shape >> (FIELD_BITS * i) & mask for i, f in enumerate(SHAPE)}
    got["kda0"] = rest & mask
    got |= {f: rest >> (FIELD_BITS + i) & 1 for i, f in enumerate(FLAGS)}
    return got


def _said(got: dict[str, int], fields: list[str]) -> str:
    def value(f: str, v: int) -> str:
        return ("on" if v else "off") if f in FLAGS else str(v)

    return " ".join(f"{f}={value(f, got[f])}" for f in fields)


def check_launch_records(
    full: np.ndarray, cfg: LaunchConfig, *, required: bool, source: str
) -> None:
    """Refuse a row whose record is not the claimed launch's, naming the CTA and the
    fields that differ. ``required`` (the FlyDSL K1's own layout): every flushed row
    (any column non-zero) holds a record. Without it (the twin's 15 columns, where these
    columns stay 0), only a row holding a record (column 12 = :data:`FORMAT`: a FlyDSL
    tensor cut to 15 columns) is checked, and any other value there is a point the twin
    never stamps."""
    rec = full[:, list(COLUMNS)]
    want = np.array(launch_record(cfg), dtype=np.int64)
    matches = (rec == want).all(axis=1)
    wrong = ~matches & (full.any(axis=1) if required else rec.any(axis=1))
    if not wrong.any():
        return  # (without required, an all-zero row was never flushed)
    cta = int(np.argmax(wrong))
    row, where = rec[cta], f"{source}: CTA {cta}"
    if required and not row.any():
        raise TraceFormatError(
            f"no launch record in columns 12..14 (the FlyDSL K1 writes one in every row, "
            f"format {VERSION}): not the stamps of a build that names its launch",
            what="launch record",
            where=where,
        )
    if int(row[0]) >> 16 == MARK and int(row[0]) != FORMAT:
        raise TraceFormatError(
            f"a launch record of format {int(row[0]) & 0xFFFF}; this reader reads format {VERSION}",
            what="launch record",
            where=where,
        )
    if int(row[0]) != FORMAT:
        col = COLUMNS[int(np.argmax(row != 0))]
        raise TraceFormatError(
            f"column {col} holds {int(row[col - COLUMNS[0]])}, not a launch record "
            f"(column 12 = {FORMAT:#x}, format {VERSION})"
            if required
            else f"point {col} is stamped ({int(row[col - COLUMNS[0]])}); the twin never "
            f"stamps points 12..14 (the FlyDSL K1's launch record: column 12 = {FORMAT:#x})",
            what="launch record",
            where=where,
        )
    got = _fields(row)
    claimed = {f: int(getattr(cfg, f)) for f in got}
    differ = [f for f in got if got[f] != claimed[f]]
    if not differ:  # bits outside the fields: not a record this format writes
        raise TraceFormatError(
            f"columns 12..14 hold {[int(v) for v in row]}, not the launch record of "
            f"{cfg.label()} ({list(launch_record(cfg))})",
            what="launch record",
            where=where,
        )
    # a row of the claimed launch elsewhere: the tensor mixes launches' rows
    mixed = "; other rows record the claimed launch: rows of more than one launch"
    raise TraceFormatError(
        f"the stamps record a launch at {_said(got, differ)}, read as "
        f"{_said(claimed, differ)}{mixed if matches.any() else ''}",
        what=differ[0],
        where=where,
    )
