"""The attn CTAs 0..55: slice, gate (token t on CTA t), mix and publish x."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.batches import own_copy, poll
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BF16, COLS, GSL, NA, TAG_EXPR
from kda_sim.kernels.k1.new_ops import new_compute, new_load, new_publish, new_put, new_store
from kda_sim.kernels.k1.regions import Region
from kda_sim.memo import memo
from kda_sim.protocol.ops import (
    NO_CELLS,
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

# the attn CTAs' ops that hold no array and depend on no configuration: ops are frozen
# values, so every CTA's program holds these same ones (made at import, not a CTA)
_BARRIER = Barrier()
_SLICE = (Begin("slice"), Use(("slice.src",)), End("slice"))
_GATE = (Begin("gate"), End("gate"))
_MIX = (Begin("mix"), Use(("mix.in_nw",)), End("mix"))
# and those each CTA makes anew (new_ops: without their dataclass's __init__)
_compute, _load, _put, _store, _publish = new_compute, new_load, new_put, new_store, new_publish
_STAGING = LoadKind.STAGING


def part_index(
    a: np.ndarray | int, t: np.ndarray | int, src_q: np.ndarray | int, cfg: LaunchConfig
) -> np.ndarray:
    """PART[a][t][src][sq, dot] as the seed flattens it: ((a S + t) NS) 2 + q."""
    return ((np.asarray(a) * cfg.S + t) * cfg.NS) * 2 + src_q


def gate_rows(cfg: LaunchConfig, space: CellSpace, t: int) -> np.ndarray:
    """stage_gate(t): thread g nq + q polls PART of slices 7 g .. 7 g + 6, pair q."""
    nq = cfg.NS * 2
    tid = np.arange(8 * nq)
    g, q = tid // nq, tid % nq
    k = np.arange(GSL)
    idx = part_index(g[:, None] * GSL + k[None, :], t, q[:, None], cfg)
    return space.gid(Region.PART, idx)


def msq_rows(cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """stage_mix: thread g S + tt polls MSQ[(7 g + k) S + tt], k < 7."""
    s = cfg.S
    tid = np.arange(8 * s)
    g, tt = tid // s, tid % s
    idx = (g[:, None] * GSL + np.arange(GSL)[None, :]) * s + tt[:, None]
    return space.gid(Region.MSQ, idx)


def gate_poll(cfg: LaunchConfig, space: CellSpace, tokens: range) -> Poll:
    return poll("PART", *(gate_rows(cfg, space, t) for t in tokens), site=sites.PART)


@memo(16)
def _mix_polls(cfg: LaunchConfig, space: CellSpace) -> tuple[Poll, Poll]:
    """The mix stage's polls, the same for every attn CTA of a launch (batched once,
    each CTA given its own copy): its weights (WGT, or under ``gate_local`` every token's
    PART), then MSQ."""
    if cfg.gate_local:
        weights = gate_poll(cfg, space, range(cfg.S))
    else:
        n_wgt = cfg.S * (cfg.NS + 1)
        weights = poll("WGT", space.gid(Region.WGT, np.arange(n_wgt)[:, None]), site=sites.WGT)
    return weights, poll("MSQ", msq_rows(cfg, space), site=sites.msq(cfg.L))


def _in_nw() -> Load:
    """The x rows' RMSNorm weights, used by the norm after the MSQ poll. Served from L2,
    as on_w is: the same 14 KB every launch, and the weight stream that would evict it
    is read non-temporally (the seed's CM_NT, the Triton K1's evict_first). The H200's
    traces show its round trip at about 0.3 us, an L2 hit's, where an HBM load costs
    0.8 to 1.0 us in the fits (docs/calibration.md, "What the model has")."""
    return Load("mix.in_nw", LoadKind.STAGING, COLS * BF16, "in_nw", hbm=False)


_IN_NW = _in_nw()


def attn_ops(cfg: LaunchConfig) -> int:
    """The ops :func:`attn_program` makes over the NA attn CTAs, without building them:
    a CTA's slice (8), mix (13, or 14 with the gate's poll under ``gate_local``) and
    ``in_nw``'s load, and the gate stage (7) of CTAs 0..S-1 when the gate is not local."""
    if cfg.gate_local:
        return NA * 24
    return NA * 23 + 7 * min(cfg.S, NA)


class _Puts(NamedTuple):
    """CTA 0's put cells (PART, MSQ) and flag (XRDY) and x row (X), as global ids, and
    each one's move from one CTA to the next in its region's index: CTA ``a``'s are
    CTA 0's moved ``a`` steps (:func:`part_index` and the MSQ, XRDY and X rows are affine
    in ``a``), one numpy add a CTA where the formulas took several numpy calls."""

    part: np.ndarray
    part_step: int
    msq: np.ndarray
    msq_step: int
    xrdy: np.ndarray  # [1]
    x: int  # CTA 0's x row (one cell a CTA)


@memo(16)
def _puts(cfg: LaunchConfig, space: CellSpace) -> _Puts:
    s, ns = cfg.S, cfg.NS
    tok, pairs = np.arange(s)[:, None], np.arange(ns * 2)[None, :]
    # the last CTA's too: gid checks that every CTA's cells lie in their regions
    for a in (NA - 1, 0):
        part = space.gid(Region.PART, part_index(a, tok, pairs, cfg).ravel())
        msq = space.gid(Region.MSQ, a * s + np.arange(s))
        xrdy = space.gid(Region.XRDY, np.array([a]))
        x = int(space.gid(Region.X, a))
    return _Puts(part, s * ns * 2, msq, s, xrdy, x)


def attn_program(a: int, cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    s, ns = cfg.S, cfg.NS
    puts = _puts(cfg, space)
    src_bytes = s * ns * COLS * BF16 + s * COLS * BF16 + 2 * COLS * BF16
    begin, use, end = _SLICE
    ops: list[Op] = [
        begin,
        _load("slice.src", _STAGING, src_bytes, f"blocks/prefix/delta cols {COLS * a}..", True, ()),
        *([_IN_NW] if cfg.nw_first else []),
        use,
        _compute("slice", s * ns, NO_CELLS, 0.0),
        _store("prefix", s * COLS * BF16, ()),
        _put(Region.PART, puts.part + a * puts.part_step, NO_CELLS, TAG_EXPR),
        _BARRIER,
        end,
    ]
    # K1's threads consume the values their polls load: a stage's reads are its polls'
    # cells (the same arrays, held once), and its put depends on them
    if not cfg.gate_local and a < s:
        part = gate_poll(cfg, space, range(a, a + 1))
        ops += [
            _GATE[0],
            part,
            _BARRIER,
            _compute("gate", ns, part.cells, 0.0),
            _put(
                Region.WGT,
                space.gid(Region.WGT, a * (ns + 1) + np.arange(ns + 1)),
                part.cells,
                TAG_EXPR,
            ),
            _BARRIER,
            _GATE[1],
        ]
    begin, use, end = _MIX
    ops.append(begin)
    weights, msq = (own_copy(p) for p in _mix_polls(cfg, space))
    if cfg.gate_local:
        # every attn CTA reduces every token's partials itself: no WGT hand-off
        ops += [weights, _BARRIER, _compute("gate", ns * s, weights.cells, 0.0)]
    else:
        ops += [weights, _BARRIER]
    ops += [
        _compute("mix", s * ns, weights.cells, 0.0),
        _put(Region.MSQ, puts.msq + a * puts.msq_step, weights.cells, TAG_EXPR),
        _BARRIER,
        msq,
        _BARRIER,
        *([] if cfg.nw_first else [_IN_NW]),
        use,
        _compute("norm", s, msq.cells, 0.0),
        _store("x", s * COLS * BF16, (puts.x + a,)),
        _publish(
            Region.XRDY,
            puts.xrdy + a,
            True,
            (weights.cells, msq.cells),
            TAG_EXPR,
        ),
        _BARRIER,
        end,
    ]
    return ops
