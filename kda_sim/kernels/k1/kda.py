"""The kda tasks: (req, h, ch) = task i = (req 12 + h) 8 + ch, on CTA (i + kda0) mod blocks."""

from __future__ import annotations

from typing import Any

import numpy as np

from kda_sim.kernels.k1 import poll_sites as sites
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
from kda_sim.kernels.k1.new_ops import new_begin, new_compute, new_end, new_load, new_poll, new_put
from kda_sim.kernels.k1.regions import Region
from kda_sim.memo import memo
from kda_sim.protocol.ops import (
    Barrier,
    Compute,
    Load,
    LoadKind,
    Op,
    Poll,
    Store,
    Use,
)
from kda_sim.protocol.space import CellSpace

# the ops a kda task makes anew (new_ops: without their dataclass's __init__)
_poll, _put, _compute, _load = new_poll, new_put, new_compute, new_load
_begin, _end = new_begin, new_end


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


def onrm_put(req: int, h: int, ch: int, cfg: LaunchConfig, space: CellSpace) -> np.ndarray:
    """kda_recur: the task's ONRM flag of each of its L tokens."""
    return space.gid(Region.ONRM, onrm_index(req, h, np.arange(cfg.L), ch, cfg))


class _Shifted:
    """A poll or put array of task (0, 0, 0) and how another task's follows from it.

    Every array of a kda task is its region's index formula plus a term of (req, h, ch)
    alone (the functions above: each index is affine in them, its clamps relative to the
    same base), so task (req, h, ch)'s array is task 0's with each cell moved by its
    block's shift, and its padding (-1) kept. Moving a sorted, unique cell list keeps it
    sorted and unique: a block's cells move together and stay in their region, and the
    blocks of one poll lie in different regions. Every task's array is made in one numpy
    call for all of them (:meth:`every`, a task's is a row of it) instead of some twenty
    a poll (K1 builds 2,237 polls a launch, 1,920 of them kda's);
    tests/kernels/test_k1_kda.py checks every task against the formulas."""

    def __init__(
        self, base: np.ndarray, block: np.ndarray | None = None, *, frozen: bool = True
    ) -> None:
        # block: each element's block (None: one block); the padding's block is the last,
        # whose shift is 0. frozen: read-only, as a poll's arrays are (a put's are not)
        self.base = base
        self.block = block
        self.pad = bool(block is None and base.size and base.min() < 0)
        self.frozen = frozen

    def every(self, shifts: np.ndarray) -> list[np.ndarray]:
        """Each task's array: ``shifts`` is [tasks] (one block) or [tasks, blocks]. A
        frozen (read-only) array is made once a distinct shift and shared by the tasks
        that have it (a gates poll's f_a rows are one request's, the same for its 96
        tasks; its QK and beta rows one head's), a put's once a task."""
        if self.frozen:
            distinct, which = np.unique(shifts, axis=0, return_inverse=True)
        else:
            distinct, which = shifts, None
        if self.block is not None:
            table = np.zeros((distinct.shape[0], distinct.shape[1] + 1), dtype=np.int64)
            table[:, :-1] = distinct
            out = self.base + table[:, self.block]
        else:
            # in the base's dtype, as a task's int shift added to it keeps it
            moves = distinct.astype(self.base.dtype, copy=False)
            out = self.base + moves.reshape((-1,) + (1,) * self.base.ndim)
            if self.pad:
                out[:, self.base < 0] = -1
        if self.frozen:
            out.setflags(write=False)
        rows = list(out)  # row t a view of the stack
        return rows if which is None else [rows[j] for j in which.ravel().tolist()]


class _ShiftedPoll:
    def __init__(self, template: Poll, blocks: tuple[np.ndarray, ...]) -> None:
        """``blocks``: the template poll's row blocks (as given to :func:`poll`), each
        shifted alike."""
        self.label, self.tag = template.label, template.tag
        self.lanes, self.backoff = template.lanes, template.backoff
        if len(blocks) == 1:
            self.batches, self.cells = _Shifted(template.batches), _Shifted(template.cells)
            return
        # which block each batch element and each cell came from: the blocks' values
        # lie in disjoint ranges (different regions), the padding below them all
        edges = [(int(b.min()), int(b.max())) for b in blocks]
        self.batches = _Shifted(template.batches, _blocks(template.batches, edges))
        self.cells = _Shifted(template.cells, _blocks(template.cells, edges))

    def every(self, shifts: np.ndarray) -> list[Poll]:
        """Each task's poll (``shifts`` as :meth:`_Shifted.every` takes them)."""
        label, tag, lanes, backoff = self.label, self.tag, self.lanes, self.backoff
        return [
            _poll(label, b, c, tag, lanes, backoff)
            for b, c in zip(self.batches.every(shifts), self.cells.every(shifts), strict=True)
        ]


def _blocks(values: np.ndarray, edges: list[tuple[int, int]]) -> np.ndarray:
    out = np.full(values.shape, len(edges), dtype=np.intp)
    for k, (lo, hi) in enumerate(edges):
        out[(values >= lo) & (values <= hi)] = k
    return out


class _Task:
    """One kda task's polls (conv, the three gates, norm) and put arrays (QK, ONRM)."""

    __slots__ = ("conv", "gates", "norm", "onrm_put", "qk_put")

    def __init__(
        self, conv: Poll, gates: tuple[Poll, ...], norm: Poll, qk: np.ndarray, onrm: np.ndarray
    ) -> None:
        self.conv, self.gates, self.norm = conv, gates, norm
        self.qk_put, self.onrm_put = qk, onrm


class KdaTemplate:
    """Task (0, 0, 0)'s polls and puts, from which every kda task's are shifted."""

    def __init__(self, cfg: LaunchConfig, space: CellSpace) -> None:
        self.cfg = cfg
        fa, qk, beta = gates_rows(0, 0, cfg, space)
        conv = conv_rows(0, 0, 0, cfg, space)
        norm = norm_rows(0, 0, 0, cfg, space)
        self.conv = _ShiftedPoll(poll("PROJ", conv, site=sites.CONV), (conv,))
        self.gates = tuple(
            _ShiftedPoll(poll(label, rows, site=site), (rows,))
            for label, rows, site in (
                ("PROJ", fa, sites.GATES_FA),
                ("QK", qk, sites.qk(cfg.L)),
                ("PROJ", beta, sites.GATES_BETA),
            )
        )
        # norm: its ONRM columns, then the g2 column (PROJ)
        self.norm = _ShiftedPoll(
            poll("ONRM+PROJ", norm, site=sites.NORM), (norm[:, :-1], norm[:, -1:])
        )
        self.qk_put = _Shifted(qk_put(0, 0, 0, cfg, space), frozen=False)
        self.onrm_put = _Shifted(onrm_put(0, 0, 0, cfg, space), frozen=False)
        self._tasks: list[_Task] | None = None
        self.same = _SameOps(cfg)

    def task(self, i: int) -> _Task:
        """Task ``i``'s polls and puts; every task's are made together the first time."""
        if self._tasks is None:
            self._tasks = self._every()
        return self._tasks[i]

    def _every(self) -> list[_Task]:
        cfg = self.cfg
        i = np.arange(cfg.n_tasks, dtype=np.int64)
        req, h, ch = task_coords(i)  # type: ignore[arg-type]  # elementwise on arrays
        s = self.shifts(req, h, ch, cfg)
        conv = self.conv.every(s["conv"])
        gates = [g.every(s[k]) for g, k in zip(self.gates, ("fa", "qk", "beta"), strict=True)]
        norm = self.norm.every(np.stack((s["norm"], s["g2"]), axis=1))
        qk = self.qk_put.every(s["qk_put"])
        onrm = self.onrm_put.every(s["onrm_put"])
        return [
            _Task(conv[t], (gates[0][t], gates[1][t], gates[2][t]), norm[t], qk[t], onrm[t])
            for t in range(cfg.n_tasks)
        ]

    @staticmethod
    def shifts(req: Any, h: Any, ch: Any, cfg: LaunchConfig) -> dict[str, Any]:
        """Each array's move from task (0, 0, 0) to (req, h, ch), in its region's index:
        the terms of (req, h, ch) in :func:`conv_rows`, :func:`gates_rows`,
        :func:`norm_rows`, :func:`qk_put` and :func:`onrm_put` (ints, or arrays of
        tasks elementwise)."""
        proj = req * cfg.L * NPROJ  # a request's L token rows of PROJ
        qk = (req * NH + h) * cfg.L * 2 * HD  # QK[req][h]
        onrm = (req * NH + h) * cfg.L * NVCH  # ONRM[req][h]
        chan = h * HD + ch * VCH  # the chunk's columns of a PROJ row
        return {
            "conv": proj + chan,
            "fa": proj,
            "qk": qk,
            "beta": proj + h,
            "norm": onrm,  # every chunk's flag of the head's tokens
            "g2": proj + chan,
            "qk_put": qk + ch * VCH,
            "onrm_put": onrm + ch,
        }


@memo(16)
def kda_template(cfg: LaunchConfig, space: CellSpace) -> KdaTemplate:
    return KdaTemplate(cfg, space)


# the ops of one task (:func:`kda_program`): k.stage 6 (on_w's load in k.stage or
# k.norm), k.conv 8, k.gates 9, k.recur 7, k.norm 7
KDA_TASK_OPS = 37


class _SameOps:
    """The ops every kda task of a launch has alike, made once a launch: ops are frozen
    values, so one instance serves every task (a third of a task's 37 ops; making 14,000
    frozen dataclasses one at a time was half of building K1's protocol)."""

    def __init__(self, cfg: LaunchConfig) -> None:
        L = cfg.L
        self.hbm, l2 = staging_bytes(cfg)
        self.on_w = Load("k.on_w", LoadKind.STAGING, VCH * BF16, "on_w", hbm=False)
        self.fb = [  # a head's f_b rows
            Load("k.fb", LoadKind.STAGING, l2, f"f_b rows of head {h}", hbm=False)
            for h in range(NH)
        ]
        self.barrier = Barrier()
        self.stage = Compute("k.stage", 1)
        self.use_in, self.use_fb, self.use_on_w = Use(("k.in",)), Use(("k.fb",)), Use(("k.on_w",))
        self.conv_state = Store("conv_state", 3 * VCH * cfg.SL * BF16)
        # beside the launch's S tokens: a profile may make its cost grow with them
        # (GpuProfile.cost_growth; the traces' k.recur does, within one build)
        self.recur = Compute("k.recur", L, launch_units=cfg.S)
        self.rstate = Store("rstate", L * VCH * HD * F32)
        self.core_out = Store("core_out", L * VCH * BF16)


_STAGING = LoadKind.STAGING

# each task's Begin and End of every stage, by task index: they depend on the index alone,
# so one set serves every launch of the process (a sweep's shapes repeat the same task
# indices: each shape's tasks would make them again)
_MARKS: list[tuple[Op, ...]] = []


def task_marks(i: int) -> tuple[Op, ...]:
    """Task ``i``'s Begin and End of each of its stages in program order (k.stage, k.conv,
    k.gates, k.recur, k.norm: ``cells.KDA_STAGES``)."""
    while len(_MARKS) <= i:
        t = len(_MARKS)
        _MARKS.append(
            (  # made by ops.positional: a cold launch makes them all
                _begin("k.stage", t),
                _end("k.stage", t),
                _begin("k.conv", t),
                _end("k.conv", t),
                _begin("k.gates", t),
                _end("k.gates", t),
                _begin("k.recur", t),
                _end("k.recur", t),
                _begin("k.norm", t),
                _end("k.norm", t),
            )
        )
    return _MARKS[i]


def kda_program(i: int, cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    h = task_coords(i)[1]
    L = cfg.L
    template = kda_template(cfg, space)
    t, same = template.task(i), template.same
    on_w, barrier = same.on_w, same.barrier
    b_stage, e_stage, b_conv, e_conv, b_gates, e_gates, b_recur, e_recur, b_norm, e_norm = (
        task_marks(i)
    )
    # a stage reads what its polls load (the same arrays, held once); the recurrence's
    # ONRM is computed from the conv's q / k / v and the gates' inputs
    conv, gates, norm = t.conv, t.gates, t.norm
    gated = tuple(g.cells for g in gates)
    recur = (conv.cells, *gated)
    return [
        b_stage,
        _load("k.in", _STAGING, same.hbm, f"state rows / conv window of task {i}", True, ()),
        same.fb[h],
        *([on_w] if cfg.onw_first else []),  # LaunchConfig.onw_first
        same.stage,
        e_stage,
        b_conv,
        conv,
        same.use_in,
        _compute("k.conv", L, conv.cells, 0.0),
        same.conv_state,
        _put(Region.QK, t.qk_put, conv.cells, TAG_EXPR),
        barrier,
        e_conv,
        b_gates,
        *gates,
        barrier,
        same.use_fb,
        _compute("k.gates", L, gated, 0.0),
        barrier,
        e_gates,
        b_recur,
        same.recur,
        same.rstate,
        barrier,
        _put(Region.ONRM, t.onrm_put, recur, TAG_EXPR),
        barrier,
        e_recur,
        b_norm,
        norm,
        *([] if cfg.onw_first else [on_w]),
        same.use_on_w,
        _compute("k.norm", L, norm.cells, 0.0),
        same.core_out,
        barrier,
        e_norm,
    ]
