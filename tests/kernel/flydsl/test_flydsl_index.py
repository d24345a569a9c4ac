"""The FlyDSL K1's index arithmetic (kernel/flydsl/k1_index.py, the functions the kernel
calls on traced values) evaluated on ints equals the protocol model's cells, thread by
thread. Pure Python: runs without FlyDSL."""

from __future__ import annotations

import numpy as np
import pytest

from kda_kernel.flydsl import k1_index as idx
from kda_sim.kernels.k1 import attn, gemv, kda
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GSL, HD, NA, NH, NPROJ, NVCH, PROJ, ROWS, THREADS, VCH
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.ops import Put
from kda_sim.protocol.space import CellSpace

SHAPES = [
    LaunchConfig(1, 1),
    LaunchConfig(2, 3, nb=4),
    LaunchConfig(3, 5, nb=2),
    LaunchConfig(1, 16, nb=1),
]


def gids(space: CellSpace, region: Region, rows: list[list[int]]) -> np.ndarray:
    return space.gid(region, np.asarray(rows, dtype=np.int64))


@pytest.mark.parametrize("cfg", SHAPES, ids=str)
def test_attn_indices(cfg: LaunchConfig) -> None:
    space, s, ns = CellSpace.of(cfg), cfg.S, cfg.NS
    for t in range(s):
        mine = [[idx.gate_part(tid, k, t, s, ns) for k in range(GSL)] for tid in range(8 * ns * 2)]
        assert np.array_equal(gids(space, Region.PART, mine), attn.gate_rows(cfg, space, t))
    mine = [[idx.mix_msq(tid, k, s) for k in range(GSL)] for tid in range(8 * s)]
    assert np.array_equal(gids(space, Region.MSQ, mine), attn.msq_rows(cfg, space))
    for a in (0, NA - 1):
        puts = {
            op.region: op.cells for op in attn.attn_program(a, cfg, space) if isinstance(op, Put)
        }
        part = sorted(idx.part(a, t, q, s, ns) for t in range(s) for q in range(2 * ns))
        assert np.array_equal(space.gid(Region.PART, np.asarray(part)), np.sort(puts[Region.PART]))
        msq = [idx.msq(a, t, s) for t in range(s)]
        assert np.array_equal(space.gid(Region.MSQ, np.asarray(msq)), np.sort(puts[Region.MSQ]))
        if a < s:  # the gate of token a
            wgt = [idx.wgt(a, j, ns) for j in range(ns + 1)]
            assert np.array_equal(space.gid(Region.WGT, np.asarray(wgt)), np.sort(puts[Region.WGT]))
        else:
            assert Region.WGT not in puts


@pytest.mark.parametrize("cfg", SHAPES, ids=str)
def test_gemv_indices(cfg: LaunchConfig) -> None:
    space = CellSpace.of(cfg)
    for rg in (0, 7, 392):
        mine = sorted({idx.gemv_put(tid, rg, cfg.S) for tid in range(ROWS * cfg.S)})
        assert np.array_equal(
            space.gid(Region.PROJ, np.asarray(mine)), np.sort(gemv.proj_rows_put(rg, cfg, space))
        )


@pytest.mark.parametrize("cfg", SHAPES, ids=str)
def test_kda_indices(cfg: LaunchConfig) -> None:
    space, L = CellSpace.of(cfg), cfg.L
    n = L * HD + L * 2 * HD
    per = (n + THREADS - 1) // THREADS
    for i in sorted({0, 95, cfg.n_tasks - 1, cfg.n_tasks // 2}):
        req, h, ch = idx.task_coords(i)
        assert (req, h, ch) == kda.task_coords(i)
        conv = [
            [idx.proj(req * L + j, idx.conv_chan(h, ch, ct)) for j in range(L)]
            for ct in range(3 * VCH)
        ]
        assert np.array_equal(gids(space, Region.PROJ, conv), kda.conv_rows(req, h, ch, cfg, space))
        qk_put = sorted(
            idx.qk(req, h, j, ct // VCH, ch * VCH + ct % VCH, L)
            for j in range(L)
            for ct in range(2 * VCH)
        )
        assert np.array_equal(
            space.gid(Region.QK, np.asarray(qk_put)), np.sort(kda.qk_put(req, h, ch, cfg, space))
        )
        es = [[min(tid + THREADS * k, n - 1) for k in range(per)] for tid in range(THREADS)]
        fa, qk, beta = kda.gates_rows(req, h, cfg, space)
        assert np.array_equal(
            gids(space, Region.PROJ, [[idx.gates_fa(req, e, L) for e in r] for r in es]), fa
        )
        assert np.array_equal(
            gids(space, Region.QK, [[idx.gates_qk(req, h, e, L) for e in r] for r in es]), qk
        )
        assert np.array_equal(
            gids(space, Region.PROJ, [[idx.beta(req, h, j, L)] for j in range(L)]), beta
        )
        norm = [
            [int(space.gid(Region.ONRM, idx.onrm(req, h, tid // VCH, q, L))) for q in range(NVCH)]
            + [int(space.gid(Region.PROJ, idx.g2(req, h, tid // VCH, ch * VCH + tid % VCH, L)))]
            for tid in range(L * VCH)
        ]
        assert np.array_equal(np.asarray(norm), kda.norm_rows(req, h, ch, cfg, space))
        onrm = [idx.onrm(req, h, j, ch, L) for j in range(L)]
        assert np.array_equal(np.asarray(onrm), kda.onrm_index(req, h, np.arange(L), ch, cfg))


def test_index_functions_are_not_trivially_equal() -> None:
    """A changed formula is caught: PART of slice 1 differs from slice 0's by S NS 2."""
    cfg = LaunchConfig(2, 2, nb=3)
    assert idx.part(1, 0, 0, cfg.S, cfg.NS) - idx.part(0, 0, 0, cfg.S, cfg.NS) == cfg.S * cfg.NS * 2
    assert idx.qk(0, 1, 0, 0, 0, cfg.L) == cfg.L * 2 * HD
    assert idx.proj(1, 0) == NPROJ and idx.task_coords(NH * NVCH) == (1, 0, 0)


def test_buffer_entries_are_the_tensors_elements() -> None:
    """The kda tasks' buffer offsets are the contiguous tensors' flat indices, and a
    padding slot (<= 0) reads slot 0 (the null slot, as the reference)."""
    cfg = LaunchConfig(2, 3)
    cs = np.arange(5 * 3 * PROJ * cfg.SL).reshape(5, 3 * PROJ, cfg.SL)
    rs = np.arange(4 * NH * HD * HD).reshape(4, NH, HD, HD)
    co = np.arange(cfg.S * PROJ).reshape(cfg.S, PROJ)
    for slot, chan, pos in [(3, 7, 2), (1, 3 * PROJ - 1, cfg.SL - 1), (0, 5, 0), (-1, 5, 1)]:
        assert cs.flat[idx.conv_entry(slot, chan, cfg.SL) + pos] == cs[max(slot, 0), chan, pos]
    for slot, h, v, k in [(2, 11, 127, 124), (-1, 0, 3, 4)]:
        assert rs.flat[idx.state_entry(slot, h, v, k)] == rs[max(slot, 0), h, v, k]
    assert co.flat[idx.core_out_entry(1, 2, 5, 9, cfg.L)] == co[1 * cfg.L + 2, 5 * HD + 9]
    assert idx.st_idx_entry(1, 2, cfg.L) == 1 * cfg.L + 2
