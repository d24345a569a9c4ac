"""K1's gemv CTAs 56..252: two 16-row groups of in_proj each, against x in LDS.

Order as the seed gives it: rg0's weights issued at kernel start (so the XRDY poll
waits behind them: accepted by design), load_x, rg1's first RG1_EARLY chunks, gemv
rg0 + put, rg1's last chunks, gemv rg1 + put. A lane holds 64 contiguous bytes of its
row a chunk (4 dwordx4, ``nt``), the A operand of a 16x16 bf16 MFMA as it lands.

The windowed gemv (``x_rows`` < S: gfx942's 64 KiB from S = 4, ``k1_lds.x_window``):
the LDS holds ``x_rows`` tokens' rows at a time. load_x polls XRDY once and copies the
first window; each gemv stage then runs the seed's MFMA loop and reduction once a
window, each thread putting its token's sum in its token's window, reloading x from
``xbuf`` (L2) between windows; gemv1 takes the windows in reverse so the last one
loaded serves it first. A token's column gets the same weights, the same x row and the
same MFMA and reduction order as with every row in LDS: the sums are bit-identical.
"""

from __future__ import annotations

import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl import k1_index as idx
from kda_kernel.flydsl.k1_ctx import Ctx
from kda_kernel.flydsl.k1_lds import windows
from kda_kernel.flydsl.k1_math import bf16r, bits_of, imax, imin
from kda_kernel.flydsl.k1_mfma import mfma_bf16, zero_acc
from kda_sim.kernels.k1.constants import (
    GEMV_TASKS,
    HIDDEN,
    KCH,
    LDS_PAD,
    NA,
    PER_WAVE,
    RG1_EARLY,
    ROWS,
    THREADS,
    WAVE_LANES,
    WAVES,
)
from kda_sim.kernels.k1.regions import Region

Operands = list[list[object]]  # [chunk][q] vector<4xi32>: 8 bf16 each


def gemv_loads(c: Ctx, rg: object, chunks: range) -> Operands:
    row = imin(rg, GEMV_TASKS - 1) * ROWS + c.lane % ROWS
    g = c.lane // ROWS
    out = []
    for i in chunks:
        k = (c.wave + WAVES * i) * KCH + g * 8
        base = (row * HIDDEN + k) // 2  # dwords
        out.append(
            [dsl.load(c.rs["w_in"], base + 16 * q, width=4, aux=dsl.CM_NT) for q in range(4)]
        )
    return out


def load_x(c: Ctx, rows: int) -> None:
    """Every slice's x ready -> the bf16 x rows of the first ``rows`` tokens into LDS
    (rows padded; all S but in the windowed gemv)."""
    dsl.when(c.tid < NA, lambda: c.poll("XRDY", [c.cell(Region.XRDY, imin(c.tid, NA - 1))]))
    dsl.barrier()
    copy_x(c, 0, rows)


def copy_x(c: Ctx, first: int, rows: int) -> None:
    """The bf16 x rows of tokens first .. first + rows - 1 (after XRDY) into LDS rows
    0 .., then a barrier. The caller has every wave past its last read of the LDS x."""
    words = rows * HIDDEN // 8  # 16-byte pieces
    row = HIDDEN + LDS_PAD
    xl = c.lds["x"]
    for i in fx.range_constexpr((words + THREADS - 1) // THREADS):
        e = imin(c.tid + THREADS * i, words - 1)
        src = e * 4 if first == 0 else (e + first * (HIDDEN // 8)) * 4  # dwords of xbuf
        v = dsl.load(c.rs["xbuf"], src, width=4, aux=dsl.CM_DEV)
        t, k = e // (HIDDEN // 8), e % (HIDDEN // 8) * 8
        dst = (t * row + k) // 2
        dsl.when((c.tid + THREADS * i) < words, lambda v=v, dst=dst: _put_words(xl, dst, v))
    dsl.barrier()


def _put_words(xl: fx.Pointer, at: object, v: object) -> None:
    for j in range(4):
        fx.ptr_store(dsl.element(v, j), xl + (dsl.i32(at) + j))


def stage_gemv(
    c: Ctx, rg: object, ops: Operands, first: int = 0, rows: int = 0, last: bool = True
) -> None:
    """Rows 16 rg .. of in_proj against the LDS x -> PROJ (bf16-rounded f32), by MFMA:
    A = this wave's weights (row lane % 16), B = x (token lane % 16), as the seed.
    ``first``, ``rows``: the LDS holds tokens first .. first + rows - 1 (all S when
    rows is 0) and only their sums are put; a lane of another token reads a row of the
    window (its column is not put). ``last``: the group's last window, after whose put
    the ktrace build marks the site (where the group is one of in_proj's)."""
    s = c.cfg.S
    whole = rows == 0 or (first == 0 and rows == s)  # the seed's: every row in LDS
    end = s if whole else first + rows
    xl, red = c.lds["x"], c.lds["red"]
    g = c.lane // ROWS
    t = imin(c.lane % ROWS, s - 1)
    if not whole:  # the token's row in the window (clamped into it for other tokens)
        t = imin(imax(t - first, 0), rows - 1)
    row = HIDDEN + LDS_PAD
    acc = zero_acc()
    for i in fx.range_constexpr(PER_WAVE):
        k = (c.wave + WAVES * i) * KCH + g * 8
        for q in fx.range_constexpr(4):
            at = (t * row + k + 32 * q) // 2  # words; 16 B aligned (row and k even x 8)
            xb = fx.ptr_load(xl + at, result_type=fx.Vector.make_type(4, fx.Int32))
            acc = mfma_bf16(ops[i][q], xb, acc)
    fx.ptr_store(fx.Vector(acc, (4,), fx.Float32), red + (c.wave * WAVE_LANES + c.lane) * 4)
    dsl.barrier()
    # row r, token tt: lane (r / 4) 16 + tt of every wave, element r % 4
    r, tt = c.tid % ROWS, imin(c.tid // ROWS, s - 1)  # as idx.gemv_put
    total = fx.Float32(0.0)
    for w in fx.range_constexpr(WAVES):
        total = total + fx.ptr_load(red + ((w * WAVE_LANES + (r // 4) * ROWS + tt) * 4 + r % 4))
    live = (c.tid < ROWS * end) & (dsl.i32(rg) < GEMV_TASKS)
    if not whole:  # this window's tokens only
        live = live & (c.tid >= ROWS * first)
    # past the end a group puts nothing (no mark); the compare only where it is used
    mark = last and c.ktrace and (dsl.i32(rg) < GEMV_TASKS)
    c.put(
        Region.PROJ, [(idx.gemv_put(c.tid, dsl.i32(rg), s), bits_of(bf16r(total)))], live, mark=mark
    )
    dsl.barrier()


def gemv_windows(c: Ctx, rg: object, ops: Operands, wins: list[tuple[int, int]]) -> None:
    """stage_gemv once a window of ``wins``; the first is in LDS, each next one copied."""
    for n, (first, rows) in enumerate(wins):
        if n:
            copy_x(c, first, rows)
        stage_gemv(c, rg, ops, first, rows, last=n == len(wins) - 1)


def gemv_role(c: Ctx, cta: object, x_rows: int | None = None) -> None:
    """The gemv CTA's two groups; ``x_rows``: token rows of x the LDS holds at once
    (``k1_lds.x_window``; all S when None)."""
    wins = windows(c.cfg.S, x_rows or c.cfg.S)
    rg0 = (dsl.i32(cta) - NA) * 2
    rg1 = rg0 + 1
    ops0 = gemv_loads(c, rg0, range(PER_WAVE))  # issued first: in flight during the XRDY poll
    with c.stage("load_x", c.layout.role("load_x")):
        load_x(c, wins[0][1])
    ops1 = gemv_loads(c, rg1, range(RG1_EARLY))
    with c.stage("gemv0", c.layout.role("gemv0")):
        gemv_windows(c, rg0, ops0, wins)
    ops1 += gemv_loads(c, rg1, range(RG1_EARLY, PER_WAVE))
    with c.stage("gemv1", c.layout.role("gemv1")):
        # reversed: the window gemv0 ended with is still in LDS
        gemv_windows(c, rg1, ops1, wins[::-1])
