"""K1's mailbox index arithmetic, one function a formula, shared by the kernel (on
traced Int32 values) and the tests (on Python ints, against the protocol model's
cells). Every argument is >= 0, where floor division and remainder agree in both."""

from __future__ import annotations

from typing import Any

from kda_sim.kernels.k1.constants import (
    BETA_0,
    FA_0,
    G2_0,
    GSL,
    HD,
    NH,
    NPROJ,
    NVCH,
    PROJ,
    ROWS,
    VCH,
)

Idx = Any  # a Python int, or a traced fx.Int32


def lo(a: Idx, b: Idx) -> Idx:
    if isinstance(a, int) and isinstance(b, int):
        return min(a, b)
    # imported here: on ints (the tests) this module must not need FlyDSL
    from kda_kernel.flydsl.k1_math import imin

    return imin(a, b)


def hi(a: Idx, b: Idx) -> Idx:
    if isinstance(a, int) and isinstance(b, int):
        return max(a, b)
    from kda_kernel.flydsl.k1_math import imax  # (see lo)

    return imax(a, b)


def task_coords(i: Idx) -> tuple[Idx, Idx, Idx]:
    """kda task i -> (req, h, ch): i = (req 12 + h) 8 + ch."""
    return i // (NH * NVCH), (i // NVCH) % NH, i % NVCH


def part(a: Idx, t: Idx, src_q: Idx, s: int, ns: int) -> Idx:
    """PART[a][t][src][sq, dot], flattened ((a S + t) NS) 2 + (2 src + q)."""
    return ((a * s + t) * ns) * 2 + src_q


def gate_part(tid: Idx, k: int, t: Idx, s: int, ns: int) -> Idx:
    """stage_gate: thread g nq + q polls slice 7 g + k, pair q."""
    nq = ns * 2
    return part(tid // nq * GSL + k, t, tid % nq, s, ns)


def wgt(t: Idx, j: Idx, ns: int) -> Idx:
    return t * (ns + 1) + j


def msq(a: Idx, t: Idx, s: int) -> Idx:
    return a * s + t


def mix_msq(tid: Idx, k: int, s: int) -> Idx:
    """stage_mix: thread g S + tt polls MSQ of slice 7 g + k, token tt."""
    return msq(tid // s * GSL + k, tid % s, s)


def proj(token: Idx, row: Idx) -> Idx:
    return token * NPROJ + row


def gemv_put(tid: Idx, rg: Idx, s: int) -> Idx:
    """stage_gemv: thread tt 16 + r puts PROJ row 16 rg + r of token tt."""
    return proj(lo(tid // ROWS, s - 1), rg * ROWS + tid % ROWS)


def conv_chan(h: Idx, ch: Idx, ct: Idx) -> Idx:
    """Channel (part, d) of conv thread ct < 48: q, k or v row of head h, chunk ch."""
    return (ct // VCH) * PROJ + h * HD + ch * VCH + ct % VCH


def qk(req: Idx, h: Idx, j: Idx, part_: Idx, lane: Idx, length: int) -> Idx:
    """QK[req][h][j][q|k][128]."""
    return ((req * NH + h) * length + j) * 2 * HD + part_ * HD + lane


def onrm(req: Idx, h: Idx, j: Idx, ch: Idx, length: int) -> Idx:
    return ((req * NH + h) * length + j) * NVCH + ch


def gates_fa(req: Idx, e: Idx, length: int) -> Idx:
    """kda_gates: f_a element e (clamped into the request's rows, as the seed does)."""
    return lo((req * length + e // HD) * NPROJ + FA_0 + e % HD, (req * length + length) * NPROJ - 1)


def gates_qk(req: Idx, h: Idx, e: Idx, length: int) -> Idx:
    """kda_gates: q / k element e - L 128 (clamped below to the head's first)."""
    qk0 = (req * NH + h) * length * 2 * HD
    return hi(qk0 + (e - length * HD), qk0)


def beta(req: Idx, h: Idx, j: Idx, length: int) -> Idx:
    return proj(req * length + j, BETA_0 + h)


def g2(req: Idx, h: Idx, j: Idx, vr: Idx, length: int) -> Idx:
    return proj(req * length + j, G2_0 + h * HD + vr)


# -- buffer offsets of the kda tasks (elements of the named tensor, not mailbox cells) --


def conv_entry(slot_c: Idx, chan: Idx, sl: int) -> Idx:
    """conv_state [slots, 3 PROJ, SL] (contiguous): channel ``chan``'s first entry in slot
    ``max(slot_c, 0)`` (a padding request reads the null slot 0, as the reference)."""
    return (hi(slot_c, 0) * (3 * PROJ) + chan) * sl


def state_entry(slot: Idx, h: Idx, v_row: Idx, k0: Idx) -> Idx:
    """rstate [slots, NH, HD(V), HD(K)] f32 (contiguous): entry (h, v_row, k0) of slot
    ``max(slot, 0)``."""
    return ((hi(slot, 0) * NH + h) * HD + v_row) * HD + k0


def core_out_entry(req: Idx, j: Idx, h: Idx, vr: Idx, length: int) -> Idx:
    """core_out [S, PROJ]: token j of request req, column vr of head h."""
    return (req * length + j) * PROJ + h * HD + vr


def st_idx_entry(req: Idx, j: Idx, length: int) -> Idx:
    """st_idx as the kernel reads it, a contiguous [R, L] int32 (``st_idx[:, :L]``)."""
    return req * length + j
