"""K1's attn CTAs 0..55: slice -> PART (and the sources into LDS ``vals``; with delta,
the prefix + delta rounded to bf16 and written back), gate (token t on CTA t) -> WGT,
mix (from ``vals``) -> MSQ, the x rows and the XRDY flag. ``gate_local``: no gate
stage; each attn CTA's mix polls PART for every token and computes the weights itself
with the gate stage's arithmetic (so its x rows are the gate stage's bit for bit). Index
arithmetic as the seed's (PROTOCOL.md)."""

from __future__ import annotations

import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl import k1_index as idx
from kda_kernel.flydsl.k1_ctx import Ctx
from kda_kernel.flydsl.k1_math import (
    LOG2E,
    bf16r,
    bf_hi,
    bf_lo,
    bf_pack,
    bits_of,
    butterfly,
    butterfly_max,
    exp2,
    f32_of,
    imin,
    rsq,
)
from kda_kernel.reference import RMS_EPS as EPS
from kda_sim.kernels.k1.constants import COLS, GSL, HIDDEN, QC, THREADS, WAVES
from kda_sim.kernels.k1.regions import Region


def ld_bf4(c: Ctx, arg: str, element: object) -> list[fx.Float32]:
    """bf16 elements i .. i + 4 (i a multiple of 4) of ``arg`` as four f32 (one dwordx2)."""
    w = dsl.load(c.rs[arg], dsl.i32(element) // 2, width=2)
    w0, w1 = dsl.element(w, 0), dsl.element(w, 1)
    return [bf_lo(w0), bf_hi(w0), bf_lo(w1), bf_hi(w1)]


def source_cols(c: Ctx, t: object, src: object, col: object, live: object) -> list[fx.Float32]:
    """Source ``src`` of token t (a block, or the prefix when src == nb) at 4 columns.
    With delta the prefix is bf16(prefix + delta), written back by the thread that
    owns it (``live``, src == nb): the seed's prefix out."""
    nb = c.cfg.nb
    blk = ld_bf4(c, "blocks", (dsl.i32(t) * nb + imin(src, nb - 1)) * HIDDEN + col)
    pre = ld_bf4(c, "prefix", dsl.i32(t) * HIDDEN + col)
    is_pre = dsl.i32(src) == nb
    if c.has_delta:
        dl = ld_bf4(c, "delta", dsl.i32(t) * HIDDEN + col)
        pre = [bf16r(pre[j] + dl[j]) for j in range(4)]
        words = fx.Vector.from_elements(
            [bf_pack(pre[0], pre[1]), bf_pack(pre[2], pre[3])], fx.Int32
        )
        at = (dsl.i32(t) * HIDDEN + col) // 2
        dsl.when(live & is_pre, lambda: dsl.store(words, c.rs["prefix"], at))
    return [is_pre.select(pre[j], blk[j]) for j in range(4)]


def mix_col(c: Ctx, a: object) -> object:
    """The first of the 4 columns this thread mixes, normalises and stores."""
    return dsl.i32(a) * COLS + (c.tid % QC) * 4


def vals_at(c: Ctx, t: object, src: object, cc: object) -> object:
    """LDS ``vals``: token t's source src, column cc of the slice's COLS (the seed's)."""
    return (dsl.i32(t) * c.cfg.NS + src) * COLS + cc


def stage_slice(c: Ctx, a: object) -> list[fx.Float32] | None:
    """The slice's sources into LDS ``vals`` and its partials -> PART; with
    ``nw_first`` also in_nw, which it returns."""
    s, ns = c.cfg.S, c.cfg.NS
    n = s * ns * QC
    vals = c.lds["vals"]
    w = ld_bf4(c, "ares_nw", dsl.i32(a) * COLS + (c.tid % QC) * 4)
    q = ld_bf4(c, "ares_qk", dsl.i32(a) * COLS + (c.tid % QC) * 4)
    # LaunchConfig.nw_first: asked with the slice's loads, so that its round trip is not
    # between the MSQ poll and XRDY (the norm is the only use)
    wn = ld_bf4(c, "in_nw", mix_col(c, a)) if c.cfg.nw_first else None
    for i in fx.range_constexpr((n + THREADS - 1) // THREADS):
        e = imin(c.tid + THREADS * i, n - 1)
        live = (c.tid + THREADS * i) < n
        row = e // QC  # (token, source): 32 lanes a row
        t, src = row // ns, row % ns
        v = source_cols(c, t, src, dsl.i32(a) * COLS + (e % QC) * 4, live)
        at_v = vals_at(c, t, src, (e % QC) * 4)

        def keep(v: list[fx.Float32] = v, at_v: object = at_v) -> None:
            # a thread past the end holds a clamped copy of the last item: it stores nothing
            for j in range(4):
                fx.ptr_store(v[j], vals + (dsl.i32(at_v) + j))

        dsl.when(live, keep)
        sq = butterfly(v[0] * v[0] + v[1] * v[1] + v[2] * v[2] + v[3] * v[3])
        dt = butterfly(
            v[0] * w[0] * q[0] + v[1] * w[1] * q[1] + v[2] * w[2] * q[2] + v[3] * w[3] * q[3]
        )
        at = idx.part(dsl.i32(a), t, src * 2, s, ns)
        last = i == (n + THREADS - 1) // THREADS - 1  # the site's ktrace mark: after its last
        cond = live & (c.lane % 32 == 0)
        c.put(Region.PART, [(at, bits_of(sq)), (at + 1, bits_of(dt))], cond, mark=last)
    dsl.barrier()
    return wn


GATE_SCRATCH = 1024  # red's words from here: gate_local's partials (the mix uses < 1024)


def gate_weights(
    c: Ctx, t: object, scratch: int, opens: bool = True, closes: bool = True
) -> tuple[fx.Float32, fx.Float32]:
    """Token t: the 56 slices' partials (PART, polled) -> this lane's softmax weight
    (lanes < NS) and their sum, in every wave; ``scratch``: the words of ``red`` its
    partial sums go through; ``opens`` / ``closes``: as :meth:`Ctx.poll`'s."""
    s, ns = c.cfg.S, c.cfg.NS
    nq = ns * 2
    red = c.lds["red"] + scratch
    me = imin(c.tid, 8 * nq - 1)
    g, qq = me // nq, me % nq
    cells = [c.cell(Region.PART, idx.gate_part(me, k, t, s, ns)) for k in range(GSL)]

    def gather() -> None:
        got = c.poll("PART", cells, opens=opens, closes=closes)
        total = fx.Float32(0.0)
        for v in got:
            total = total + f32_of(v)
        fx.ptr_store(total, red + (g * nq + qq))

    dsl.when(c.tid < 8 * nq, gather)
    dsl.barrier()
    src = imin(c.lane, ns - 1)
    sq, dt = fx.ptr_load(red + src * 2), fx.ptr_load(red + src * 2 + 1)
    for gg in fx.range_constexpr(1, 8):
        sq = sq + fx.ptr_load(red + (gg * nq + src * 2))
        dt = dt + fx.ptr_load(red + (gg * nq + src * 2 + 1))
    logit = dt * rsq(sq * fx.Float32(1.0 / HIDDEN) + fx.Float32(EPS)) * fx.Float32(LOG2E)
    logit = (c.lane < ns).select(logit, fx.Float32(-3.0e38))
    ex = (c.lane < ns).select(exp2(logit - butterfly_max(logit)), fx.Float32(0.0))
    return ex, butterfly(ex, (32, 16, 8, 4, 2, 1))


def stage_gate(c: Ctx, t: object) -> None:
    """Token t: the 56 slices' partials -> NS softmax weights and their sum (WGT)."""
    ns = c.cfg.NS
    ex, den = gate_weights(c, t, 0)
    wave0 = c.wave == 0
    c.put(
        Region.WGT,
        [(idx.wgt(dsl.i32(t), imin(c.lane, ns - 1), ns), bits_of(ex))],
        wave0 & (c.lane < ns),
        mark=False,  # one site with the sum's put, marked after it
    )
    c.put(Region.WGT, [(idx.wgt(dsl.i32(t), ns, ns), bits_of(den))], wave0 & (c.lane == 0))
    dsl.barrier()


def local_gate(c: Ctx) -> None:
    """gate_local: every token's weights and sum into ``red`` where the mix reads WGT's
    (token t's at t (NS + 1)), computed here as the gate stage computes them."""
    ns = c.cfg.NS
    red = c.lds["red"]
    for t in fx.range_constexpr(c.cfg.S):
        # one PART poll site over the tokens (the model's): its ktrace range spans them
        ex, den = gate_weights(c, t, GATE_SCRATCH, opens=t == 0, closes=t == c.cfg.S - 1)
        wave0 = c.wave == 0
        at = idx.wgt(t, 0, ns)
        dsl.when(wave0 & (c.lane < ns), lambda ex=ex, at=at: fx.ptr_store(ex, red + (at + c.lane)))
        dsl.when(wave0 & (c.lane == 0), lambda den=den, at=at: fx.ptr_store(den, red + (at + ns)))
        dsl.barrier()  # every wave has read the partials before the next token's


def stage_mix(c: Ctx, a: object, wn: list[fx.Float32] | None = None) -> None:
    """Columns 128 a ..: the softmax mix of ``vals``, its sum of squares (MSQ), every
    slice's -> rstd, x = mixed rstd w -> the x rows (plain device-scope stores), XRDY.
    The weights: WGT, or (``gate_local``) computed here. ``wn``: in_nw as the slice
    loaded it (``nw_first``); without, it is loaded after the MSQ poll."""
    s, ns = c.cfg.S, c.cfg.NS
    red, vals = c.lds["red"], c.lds["vals"]
    nw = s * (ns + 1)

    def weights() -> None:
        v = c.poll("WGT", [c.cell(Region.WGT, imin(c.tid, nw - 1))])[0]
        fx.ptr_store(f32_of(v), red + c.tid)

    if c.cfg.gate_local:
        local_gate(c)
    else:
        dsl.when(c.tid < nw, weights)
        dsl.barrier()
    mine = c.tid < s * QC
    t = imin(c.tid // QC, s - 1)
    col = mix_col(c, a)
    cc = (c.tid % QC) * 4
    mixed = [fx.Float32(0.0)] * 4
    for src in fx.range_constexpr(ns):
        at_v = vals_at(c, t, src, cc)
        wgt = fx.ptr_load(red + (t * (ns + 1) + src))
        mixed = [mixed[j] + wgt * fx.ptr_load(vals + (at_v + j)) for j in range(4)]
    den = fx.ptr_load(red + (t * (ns + 1) + ns))
    mixed = [m / den for m in mixed]
    sq = butterfly(
        mixed[0] * mixed[0] + mixed[1] * mixed[1] + mixed[2] * mixed[2] + mixed[3] * mixed[3]
    )
    c.put(Region.MSQ, [(idx.msq(dsl.i32(a), t, s), bits_of(sq))], mine & (c.lane % 32 == 0))
    dsl.barrier()
    me = imin(c.tid, 8 * s - 1)
    g, tt = me // s, me % s

    def sums() -> None:
        got = c.poll("MSQ", [c.cell(Region.MSQ, idx.mix_msq(me, k, s)) for k in range(GSL)])
        total = fx.Float32(0.0)
        for v in got:
            total = total + f32_of(v)
        fx.ptr_store(total, red + (128 + g * s + tt))

    dsl.when(c.tid < 8 * s, sums)
    dsl.barrier()
    tot = fx.ptr_load(red + (128 + t))
    for gg in fx.range_constexpr(1, WAVES):
        tot = tot + fx.ptr_load(red + (128 + gg * s + t))
    r = rsq(tot * fx.Float32(1.0 / HIDDEN) + fx.Float32(EPS))
    if wn is None:
        wn = ld_bf4(c, "in_nw", col)
    x = [mixed[j] * r * wn[j] for j in range(4)]
    words = fx.Vector.from_elements([bf_pack(x[0], x[1]), bf_pack(x[2], x[3])], fx.Int32)
    at = (t * HIDDEN + col) // 2
    dsl.when(mine, lambda: dsl.store(words, c.rs["xbuf"], at, aux=dsl.CM_DEV))
    c.publish(Region.XRDY, a, c.tid == 0)
    dsl.barrier()
