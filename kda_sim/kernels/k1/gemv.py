"""The gemv CTAs 56..252: in_proj, two 16-row groups each.

Program order as the seed gives it: group rg0's weights issued at kernel start,
the XRDY poll (behind those weights, by design), x rows into LDS, the first
RG1_EARLY chunks of rg1, gemv rg0 and its put, rg1's last chunks, gemv rg1 and
its put. The last CTA's second group is past the end: it loads the last group
again and puts nothing.
"""

from __future__ import annotations

from functools import cache

import numpy as np

from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.batches import own_copy, poll
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BF16,
    GEMV0,
    GEMV_TASKS,
    HIDDEN,
    N_GEMV,
    NA,
    NPROJ,
    PER_WAVE,
    RG1_EARLY,
    ROWS,
    TAG_EXPR,
)
from kda_sim.kernels.k1.new_ops import new_compute, new_load, new_put
from kda_sim.kernels.k1.regions import Region
from kda_sim.memo import memo
from kda_sim.protocol.ops import (
    Barrier,
    Begin,
    End,
    Load,
    LoadKind,
    Op,
    Poll,
    Use,
)
from kda_sim.protocol.space import CellSpace

GROUP_BYTES = ROWS * HIDDEN * BF16  # one 16-row group of w_in

# the ops each gemv CTA makes anew (new_ops: without their dataclass's __init__)
_compute, _load, _put = new_compute, new_load, new_put
_FLAGGED, _WEIGHT = LoadKind.FLAGGED, LoadKind.WEIGHT


def groups_of(cta: int) -> tuple[int, int]:
    rg0 = 2 * (cta - GEMV0)
    return rg0, rg0 + 1


def proj_rows_put(rg: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """PROJ[tt][16 rg + r] for every token tt and row r of the group."""
    idx = np.arange(cfg.S)[:, None] * NPROJ + rg * ROWS + np.arange(ROWS)[None, :]
    return space.gid(Region.PROJ, idx.ravel())


@memo(16)
def _group0_put(cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """:func:`proj_rows_put` of group 0 (read-only): group ``rg``'s is it plus 16 rg."""
    cells = proj_rows_put(0, cfg, space)
    cells.setflags(write=False)
    return cells


def group_put(rg: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """:func:`proj_rows_put`, as group 0's moved by the group's rows (one numpy call;
    the gemv CTAs put 393 groups a launch)."""
    if not 0 <= rg < GEMV_TASKS:
        raise IndexError(f"group {rg}: the gemv has groups 0..{GEMV_TASKS - 1}")
    return _group0_put(cfg, space) + rg * ROWS


# the weight loads made so far, by (name, group, chunks): they depend on no configuration,
# so one serves every launch of the process (a sweep's gemv CTAs issue the same few again)
_WEIGHT_LOADS: dict[tuple[str, int, int], Load] = {}


def weight_load(name: str, rg: int, chunks: int) -> Load:
    op = _WEIGHT_LOADS.get((name, rg, chunks))
    if op is None:
        row = min(rg, GEMV_TASKS - 1) * ROWS
        nbytes = GROUP_BYTES * chunks // PER_WAVE
        what = f"w_in rows {row}..{row + ROWS - 1}, {chunks} chunks"
        op = _WEIGHT_LOADS[(name, rg, chunks)] = _load(name, _WEIGHT, nbytes, what, True, ())
    return op


@memo(16)
def x_cells(space: CellSpace) -> tuple[int, ...]:
    """The x rows' flagged cells, one a slice: what a gemv reads and computes from
    (cached: the same for every gemv CTA of a launch)."""
    return tuple(int(c) for c in space.gid(Region.X, np.arange(NA)))


@memo(16)
def _x_array(space: CellSpace) -> np.ndarray:
    """:func:`x_cells` as an int64 array (read-only): each CTA's reads are a copy of it."""
    x = np.asarray(x_cells(space), dtype=np.int64)
    x.setflags(write=False)
    return x


@memo(16)
def _xrdy_poll(space: CellSpace) -> Poll:
    """The XRDY poll, the same for every gemv CTA of a launch."""
    return poll("XRDY", space.gid(Region.XRDY, np.arange(NA)[:, None]), site=sites.XRDY)


# the gemv CTAs' ops that hold no array and depend on no configuration: ops are frozen
# values, so every CTA's program holds these same ones (made at import, not a launch)
_BARRIER = Barrier()
_LOAD_X = (Begin("load_x"), Use(("x",)), End("load_x"))
_GEMV0 = (Begin("gemv0"), Use(("w.rg0",)), End("gemv0"))
_GEMV1 = (Begin("gemv1"), Use(("w.rg1a", "w.rg1b")), End("gemv1"))


def load_x(cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    """The x rows: their 56 XRDY flags polled, then the rows read (from L2). Each CTA's
    ops that hold arrays and tuples hold their own, as built from the formulas (the
    checks key a read on the very array a poll loaded): copies of the launch's one XRDY
    poll, a copy's cost, not the batching's."""
    xcells = tuple(list(x_cells(space)))
    begin, use, end = _LOAD_X
    return [
        begin,
        own_copy(_xrdy_poll(space)),
        _BARRIER,
        _load("x", _FLAGGED, cfg.S * HIDDEN * BF16, "x rows", False, xcells),
        use,
        _BARRIER,
        end,
    ]


@cache  # of constants alone: counted once, not at each launch's size check (a loop of
# N_GEMV calls, 20 to 40 us a launch)
def gemv_ops() -> int:
    """The ops :func:`gemv_program` makes over the N_GEMV gemv CTAs, without building
    them: 23 a CTA, and the second group's put of each CTA whose second group exists."""
    return 23 * N_GEMV + sum(groups_of(c)[1] < GEMV_TASKS for c in range(GEMV0, GEMV0 + N_GEMV))


def gemv_program(cta: int, cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    rg0, rg1 = groups_of(cta)
    s = cfg.S
    x = _x_array(space).copy()  # what each group's gemv reads (the CTA's own array)
    (begin0, use0, end0), (begin1, use1, end1) = _GEMV0, _GEMV1
    ops: list[Op] = [
        weight_load("w.rg0", rg0, PER_WAVE),
        *load_x(cfg, space),
        weight_load("w.rg1a", rg1, RG1_EARLY),
        begin0,
        use0,
        _compute("gemv", s, x, 0.0),
        _BARRIER,
        _put(Region.PROJ, group_put(rg0, cfg, space), x, TAG_EXPR),
        _BARRIER,
        end0,
        weight_load("w.rg1b", rg1, PER_WAVE - RG1_EARLY),
        begin1,
        use1,
        _compute("gemv", s, x, 0.0),
        _BARRIER,
    ]
    if rg1 < GEMV_TASKS:
        ops.append(_put(Region.PROJ, group_put(rg1, cfg, space), x, TAG_EXPR))
    ops += [_BARRIER, end1]
    return ops
