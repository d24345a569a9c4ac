"""The kda tasks: (req, h, ch) = task i = (req 12 + h) 8 + ch, on CTA (i + kda0) mod blocks."""

from __future__ import annotations

import numpy as np

from kda_sim.kernels.k1.batches import poll
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BETA_0,
    BF16,
    CONV_W,
    F32,
    FA_0,
    G2_0,
    HD,
    NH,
    NPROJ,
    NVCH,
    PROJ,
    TAG_EXPR,
    THREADS,
    VCH,
    WAVES,
)
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.ops import Barrier, Begin, Compute, End, Load, LoadKind, Op, Put, Store, Use
from kda_sim.protocol.space import CellSpace


def task_coords(i: int) -> tuple[int, int, int]:
    """Task index -> (req, h, ch)."""
    return i // (NH * NVCH), (i // NVCH) % NH, i % NVCH


def task_cta(i: int, cfg: LaunchConfig) -> int:
    return (i + cfg.kda0) % cfg.blocks


def tasks_of(cta: int, cfg: LaunchConfig) -> list[int]:
    """The tasks CTA ``cta`` runs after its role work, in order."""
    first = (cta - cfg.kda0) % cfg.blocks
    return list(range(first, cfg.n_tasks, cfg.blocks))


def qk_index(
    req: int,
    h: int,
    j: np.ndarray | int,
    part: np.ndarray | int,
    lane: np.ndarray | int,
    cfg: LaunchConfig,
) -> np.ndarray:
    """QK[req][h][j][q|k][128]: ((req NH + h) L + j) 2 HD + part HD + lane."""
    return ((req * NH + h) * cfg.L + np.asarray(j)) * 2 * HD + np.asarray(part) * HD + lane


def onrm_index(req: int, h: int, j: np.ndarray | int, ch: np.ndarray | int, cfg: LaunchConfig):
    return ((req * NH + h) * cfg.L + np.asarray(j)) * NVCH + ch


def conv_rows(req: int, h: int, ch: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """kda_conv: thread ct < 48 owns channel (part, d) and polls its L tokens' PROJ."""
    ct = np.arange(3 * VCH)
    chan = (ct // VCH) * PROJ + h * HD + ch * VCH + ct % VCH
    idx = (req * cfg.L + np.arange(cfg.L)[None, :]) * NPROJ + chan[:, None]
    return space.gid(Region.PROJ, idx)


def qk_put(req: int, h: int, ch: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    ct = np.arange(2 * VCH)  # part 0 (q) and 1 (k); v stays in LDS
    j = np.arange(cfg.L)[:, None]
    idx = qk_index(req, h, j, ct[None, :] // VCH, ch * VCH + ct[None, :] % VCH, cfg)
    return space.gid(Region.QK, idx.ravel())


def gates_rows(req: int, h: int, cfg: LaunchConfig, space: CellSpace) -> tuple[np.ndarray, ...]:
    """kda_gates: each thread's f_a batch, its q / k batch (both clamped as the seed
    clamps them), and the beta pair of threads tid < L."""
    L = cfg.L
    n_fa = L * HD
    n = n_fa + L * 2 * HD
    per = (n + THREADS - 1) // THREADS
    e = np.minimum(np.arange(THREADS)[:, None] + THREADS * np.arange(per)[None, :], n - 1)
    fa_at = (req * L + e // HD) * NPROJ + FA_0 + e % HD
    fa_at = np.minimum(fa_at, (req * L + L) * NPROJ - 1)
    qk0 = (req * NH + h) * L * 2 * HD
    qk_at = np.maximum(qk0 + (e - n_fa), qk0)
    beta = (req * L + np.arange(L)[:, None]) * NPROJ + BETA_0 + h
    return (
        space.gid(Region.PROJ, fa_at),
        space.gid(Region.QK, qk_at),
        space.gid(Region.PROJ, beta),
    )


def norm_rows(req: int, h: int, ch: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """kda_norm: thread j 16 + e polls the 8 chunks' ONRM of token j and its g2 row."""
    tid = np.arange(cfg.L * VCH)
    j, e = tid // VCH, tid % VCH
    onrm = space.gid(Region.ONRM, onrm_index(req, h, j[:, None], np.arange(NVCH)[None, :], cfg))
    g2 = space.gid(Region.PROJ, (req * cfg.L + j) * NPROJ + G2_0 + h * HD + ch * VCH + e)
    return np.concatenate([onrm, g2[:, None]], axis=1)


def staging_bytes(cfg: LaunchConfig) -> tuple[int, int]:
    """(HBM bytes, L2 bytes) kda_stage loads: metadata, conv window and weights, the 16
    state rows, per-head constants; the head's f_b rows (shared by its 8 chunk tasks)."""
    sl = cfg.SL
    meta = (cfg.L + 3) * 4
    conv = 3 * VCH * ((CONV_W - 1) + (sl - cfg.L)) * BF16 + 3 * VCH * CONV_W * F32
    state = VCH * HD * F32
    consts = (1 + HD) * F32
    fb = WAVES * 16 * HD * BF16
    return meta + conv + state + consts, fb


# the ops of one task (:func:`kda_program`): k.stage 6 (on_w's load in k.stage or
# k.norm), k.conv 8, k.gates 9, k.recur 7, k.norm 7
KDA_TASK_OPS = 37


def kda_program(i: int, cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    req, h, ch = task_coords(i)
    L = cfg.L
    sl = cfg.SL
    hbm, l2 = staging_bytes(cfg)
    fa, qk, beta = gates_rows(req, h, cfg, space)
    on_w = Load("k.on_w", LoadKind.STAGING, VCH * BF16, "on_w", hbm=False)
    # a stage reads what its polls load (the same arrays, held once); the recurrence's
    # ONRM is computed from the conv's q / k / v and the gates' inputs
    conv = poll("PROJ", conv_rows(req, h, ch, cfg, space))
    gates = (poll("PROJ", fa), poll("QK", qk), poll("PROJ", beta))
    gated = tuple(g.cells for g in gates)
    recur = (conv.cells, *gated)
    norm = poll("ONRM+PROJ", norm_rows(req, h, ch, cfg, space))
    return [
        Begin("k.stage", i),
        Load("k.in", LoadKind.STAGING, hbm, f"state rows / conv window of task {i}"),
        Load("k.fb", LoadKind.STAGING, l2, f"f_b rows of head {h}", hbm=False),
        *([on_w] if cfg.onw_first else []),  # LaunchConfig.onw_first
        Compute("k.stage", 1),
        End("k.stage", i),
        Begin("k.conv", i),
        conv,
        Use(("k.in",)),
        Compute("k.conv", L, reads=conv.cells),
        Store("conv_state", 3 * VCH * sl * BF16),
        Put(Region.QK, qk_put(req, h, ch, cfg, space), reads=conv.cells, tag=TAG_EXPR),
        Barrier(),
        End("k.conv", i),
        Begin("k.gates", i),
        *gates,
        Barrier(),
        Use(("k.fb",)),
        Compute("k.gates", L, reads=gated),
        Barrier(),
        End("k.gates", i),
        Begin("k.recur", i),
        Compute("k.recur", L),
        Store("rstate", L * VCH * HD * F32),
        Barrier(),
        Put(
            Region.ONRM,
            space.gid(Region.ONRM, onrm_index(req, h, np.arange(L), ch, cfg)),
            reads=recur,
            tag=TAG_EXPR,
        ),
        Barrier(),
        End("k.recur", i),
        Begin("k.norm", i),
        norm,
        *([] if cfg.onw_first else [on_w]),
        Use(("k.on_w",)),
        Compute("k.norm", L, reads=norm.cells),
        Store("core_out", L * VCH * BF16),
        Barrier(),
        End("k.norm", i),
    ]
