"""The attn role (CTAs 0..NA-1): the slice (PART puts), the gate (WGT), the mix (MSQ), the
x rows' RMSNorm and their XRDY publish; the local-weights variant ``gate_local``.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import (
    COLS,
    EV_ROLE,
    EV_RPOLL,
    HIDDEN,
    INJ_DROP,
    MAX_NB,
    NA,
    SITE_MIX_PART,
)
from kda_kernel.triton.machine import _bf16r, _now, _sleep_until, _to_bf16, _value
from kda_kernel.triton.mailbox import _poll, _put
from kda_kernel.triton.record import _poll_rec, _stamp


@triton.jit
def _sources(blocks, blk_sm, blk_sr, pre, t, tm, c0, NB):
    """Tokens t's sources for columns c0 .. c0+128, [TB, 16, 128] fp32: blocks, then the
    prefix row ``pre`` (p' = bf16(prefix + delta), fp32 [TB, 128]), zero past NS and for
    tokens off ``tm``. (It spells out ``_blocks``'s load: written as a call to it, ptxas
    schedules the L = 4 builds differently, and that code is not the measured one.)"""
    src = tl.arange(0, 16)
    cols = tl.arange(0, COLS)
    blk = tl.load(
        blocks + t[:, None, None] * blk_sm + src[None, :, None] * blk_sr + c0 + cols[None, None, :],
        mask=tm[:, None, None] & (src < NB)[None, :, None],
        other=0.0,
    ).to(tl.float32)
    return tl.where((src == NB)[None, :, None], pre[:, None, :], blk)


@triton.jit
def _blocks(blocks, blk_sm, blk_sr, t, tm, c0, NB):
    """Tokens t's NB block rows for columns c0 .. c0+128, [TB, 16, 128] bf16 (zero past NB
    and for tokens off ``tm``)."""
    src = tl.arange(0, 16)
    cols = tl.arange(0, COLS)
    return tl.load(
        blocks + t[:, None, None] * blk_sm + src[None, :, None] * blk_sr + c0 + cols[None, None, :],
        mask=tm[:, None, None] & (src < NB)[None, :, None],
        other=0.0,
    )


@triton.jit
def _with_prefix(blk, pre, NB):
    """The sources in fp32: the block rows, the prefix row ``pre`` as source NB."""
    src = tl.arange(0, 16)
    return tl.where((src == NB)[None, :, None], pre[:, None, :], blk.to(tl.float32))


@triton.jit
def _p_prime(prefix, delta, t, tm, c0, HAS_DELTA: tl.constexpr, BARRIER: tl.constexpr):
    """p' = bf16(prefix + delta) of tokens t (off where not tm), columns c0 .. c0+128,
    stored back into prefix; fp32 [len(t), 128]."""
    cols = tl.arange(0, COLS)
    at = prefix + t[:, None] * HIDDEN + c0 + cols[None, :]
    pre = tl.load(at, mask=tm[:, None], other=0.0).to(tl.float32)
    if HAS_DELTA:
        dl = tl.load(delta + t[:, None] * HIDDEN + c0 + cols[None, :], mask=tm[:, None], other=0.0)
        pre = _bf16r(pre + dl.to(tl.float32))
        # the store overwrites what the load read, from other threads: Triton loads prefix
        # once in each layout its uses want (the sources take another), so without this
        # barrier a warp could re-read a row another warp had already updated and add
        # delta twice (on the H200 a store at the kernel's entry moving the warps was enough
        # to corrupt PART in 13 of 56 attn CTAs at 1x1). BARRIER is
        # off only to prove the stress build finds this race (Build.slice_barrier)
        if BARRIER:
            tl.debug_barrier()
        tl.store(at, pre.to(tl.bfloat16), mask=tm[:, None])
    return pre


@triton.jit
def _put_part(
    scratch,
    a,
    S,
    NS,
    t,
    tm,
    src,
    sq,
    dt,
    tag,
    dead,
    alarm,
    task,
    inj_mode,
    inj_gidx,
    OFF_PART,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
):
    """Put the slice's PART pairs of tokens t (live where tm) and sources src: the sum of
    squares and the dot with the query weight, [len(t), 16] each, for attn CTA a."""
    at = OFF_PART + ((a * S + t[:, None]) * NS + src[None, :]) * 2
    mp = tm[:, None] & (src < NS)[None, :]
    dead = _put(
        scratch, at, sq, mp, tag, dead, alarm, a, task, inj_mode, inj_gidx, WATCHDOG, INTERP
    )
    dead = _put(
        scratch, at + 1, dt, mp, tag, dead, alarm, a, task, inj_mode, inj_gidx, WATCHDOG, INTERP
    )
    return dead


@triton.jit
def _slice_by_token(
    a,
    tag,
    dead,
    wq,
    prefix,
    delta,
    blocks,
    blk_sm,
    blk_sr,
    scratch,
    alarm,
    task,
    inj_mode,
    inj_gidx,
    S,
    NB,
    OFF_PART,
    HAS_DELTA: tl.constexpr,
    TB: tl.constexpr,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
    BARRIER: tl.constexpr,
    BLK_FIRST: tl.constexpr,
):
    """The slice TB tokens an iteration: p' stored back, PART[a][t][src] = (sum of squares,
    qk dot) over this CTA's columns. With BLK_FIRST the block rows are asked for before
    p': the barrier in ``_p_prime`` waits for the prefix and delta loads, and a load after
    it is a second round trip to HBM."""
    NS = NB + 1
    c0 = a * COLS
    src = tl.arange(0, 16)
    tb = tl.arange(0, TB)
    for tk in range(0, S, TB):
        # TB tokens at once: their loads are in flight together (one token at a time, the
        # slice was a chain of S round trips). p' stays in registers for the sources (no
        # store, barrier, re-load before the first put); the mix reads it back.
        t = tk + tb
        tm = t < S
        if BLK_FIRST:
            blk = _blocks(blocks, blk_sm, blk_sr, t, tm, c0, NB)
            pre = _p_prime(prefix, delta, t, tm, c0, HAS_DELTA, BARRIER)
            v = _with_prefix(blk, pre, NB)
        else:
            pre = _p_prime(prefix, delta, t, tm, c0, HAS_DELTA, BARRIER)
            v = _sources(blocks, blk_sm, blk_sr, pre, t, tm, c0, NB)
        sq = tl.sum(v * v, 2)  # [TB, 16]
        dt = tl.sum(v * wq[None, None, :], 2)
        dead = _put_part(
            scratch,
            a,
            S,
            NS,
            t,
            tm,
            src,
            sq,
            dt,
            tag,
            dead,
            alarm,
            task,
            inj_mode,
            inj_gidx,
            OFF_PART,
            WATCHDOG,
            INTERP,
        )
    return dead


@triton.jit
def _slice_by_source(
    a,
    tag,
    dead,
    wq,
    prefix,
    delta,
    blocks,
    blk_sm,
    blk_sr,
    scratch,
    alarm,
    task,
    inj_mode,
    inj_gidx,
    S,
    NB,
    OFF_PART,
    HAS_DELTA: tl.constexpr,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
    BARRIER: tl.constexpr,
):
    """The slice one source an iteration for all 16 tokens: a [16, 128] tile whose two
    reductions stay within a warp (the token form reduced [TB, 16, 128] across warps, a
    chain of round trips). The sums gather into [16 tokens, 16 sources] and every PART
    pair is put at once after the loop: a put between iterations kept the next source's
    loads behind it, one load round trip a source (8.3 us at S = 4)."""
    NS = NB + 1
    c0 = a * COLS
    cols = tl.arange(0, COLS)
    tt = tl.arange(0, 16)
    src = tl.arange(0, 16)
    tm = tt < S
    pre = _p_prime(prefix, delta, tt, tm, c0, HAS_DELTA, BARRIER)
    sq = tl.zeros([16, 16], tl.float32)
    dt = tl.zeros([16, 16], tl.float32)
    for s in tl.static_range(MAX_NB + 1):  # source NB is the prefix row
        v = tl.load(
            blocks + tt[:, None] * blk_sm + s * blk_sr + c0 + cols[None, :],
            mask=(tm & (s < NB))[:, None],
            other=0.0,
        ).to(tl.float32)
        v = tl.where(s == NB, pre, v)
        at = (src == s)[None, :]
        sq = tl.where(at, tl.sum(v * v, 1)[:, None], sq)
        dt = tl.where(at, tl.sum(v * wq[None, :], 1)[:, None], dt)
    return _put_part(
        scratch,
        a,
        S,
        NS,
        tt,
        tm,
        src,
        sq,
        dt,
        tag,
        dead,
        alarm,
        task,
        inj_mode,
        inj_gidx,
        OFF_PART,
        WATCHDOG,
        INTERP,
    )


@triton.jit
def _gate_weights(w, m3, NS, eps):
    """A token's softmax weights from its PART words ([64 slices, 16 sources, 2]): e_s, [16
    sources] (0 from NS on), and their sum; WGT holds e_s at s < NS and the sum at NS. The
    gate stage and GATE_LOCAL's mix both call this, on the same [64, 16, 2] shape, so
    their weights are the same bits."""
    src = tl.arange(0, 16)
    q2 = tl.arange(0, 2)
    part = tl.sum(tl.where(m3, _value(w), 0.0), 0)  # [16, 2]
    sq = tl.sum(tl.where((q2 == 0)[None, :], part, 0.0), 1)
    dt = tl.sum(tl.where((q2 == 1)[None, :], part, 0.0), 1)
    logit = dt * tl.rsqrt(sq / HIDDEN + eps)
    logit = tl.where(src < NS, logit, float("-inf"))
    e = tl.exp(logit - tl.max(logit, 0))
    e = tl.where(src < NS, e, 0.0)
    den = tl.sum(e, 0)
    return e, den


@triton.jit
def _word(rec, k):
    """Word k of a small record tensor, as a scalar."""
    return tl.sum(tl.where(tl.arange(0, rec.shape[0]) == k, rec, 0), 0)


@triton.jit
def _local_weights(
    scratch,
    tag,
    dead,
    alarm,
    a,
    task,
    budget_ns,
    max_retry,
    eps,
    S,
    NS,
    OFF_PART,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
    QUIET: tl.constexpr,
    tr,
    TRACE: tl.constexpr,
):
    """GATE_LOCAL: every token's weights computed by this CTA from PART, [16 tokens, 16
    sources] as the WGT poll reads them (e_s at s < NS, the sum at NS, 0 elsewhere).
    A token a poll batch, the gate's own, in turn: all tokens in one batch would hold 128
    pairs a thread (256 registers). The record's site EV_RPOLL + 0 gets the first batch's
    issue, the last one's satisfaction and the retries of all (kda_kernel.triton.trace: the mix's
    PART poll); each batch records into a record of its own (``one``) that ``site``
    gathers, so _poll, and every other poll's code, stays as it is."""
    tt = tl.arange(0, 16)
    src = tl.arange(0, 16)
    k3 = tl.arange(0, 4)
    wt = tl.zeros([16, 16], tl.float32)
    site = tl.zeros([4], tr.dtype)  # first issue, satisfied, retries (as _poll_rec's words)
    # token 0's [64 slices, 16 sources, 2] cells, the gate stage's batch for t = 0
    ap = tl.arange(0, 64)
    q2 = tl.arange(0, 2)
    g0 = OFF_PART + ((ap[:, None, None] * S) * NS + src[None, :, None]) * 2 + q2[None, None, :]
    m3 = (ap < NA)[:, None, None] & (src < NS)[None, :, None] & (q2 >= 0)[None, None, :]
    for t in range(S):
        g3 = g0 + t * (NS * 2)  # PART[a'][t][src][q] = ((a' S + t) NS + src) 2 + q
        w, one, dead = _poll(
            scratch,
            g3,
            m3,
            tag,
            dead,
            alarm,
            a,
            SITE_MIX_PART,
            task,
            budget_ns,
            max_retry,
            False,
            WATCHDOG,
            INTERP,
            0,
            QUIET,
            tl.zeros([4], tr.dtype),
            0,
            TRACE,
        )
        e, den = _gate_weights(w, m3, NS, eps)
        wv = tl.where(src < NS, e, den)
        wt = tl.where((tt == t)[:, None] & (src <= NS)[None, :], wv[None, :], wt)
        site = tl.where(k3 == 2, site + one, tl.where((k3 == 0) & (t > 0), site, one))
    tr = _poll_rec(tr, EV_RPOLL + 0, _word(site, 0), _word(site, 1), _word(site, 2), TRACE)
    return wt, tr, dead


@triton.jit
def _mix_by_token(wt, prefix, blocks, blk_sm, blk_sr, c0, S, NB, TB: tl.constexpr):
    """The mix TB tokens an iteration: each token's sources [TB, 16, 128] reduced over the
    sources (cross-warp), the iterations a chain. [16, 128] mixed rows, [16] sums of
    squares."""
    NS = NB + 1
    cols = tl.arange(0, COLS)
    src = tl.arange(0, 16)
    tt = tl.arange(0, 16)
    tb = tl.arange(0, TB)
    mixed = tl.zeros([16, COLS], tl.float32)
    msq = tl.zeros([16], tl.float32)
    for tk in range(0, S, TB):
        t = tk + tb
        tm = t < S
        hit = tt[None, :] == t[:, None]  # [TB, 16 tokens]
        row = tl.sum(tl.where(hit[:, :, None], wt[None, :, :], 0.0), 1)  # [TB, 16 sources]
        den = tl.sum(tl.where((src == NS)[None, :], row, 0.0), 1)
        den = tl.where(tm, den, 1.0)
        e = tl.where((src < NS)[None, :], row, 0.0)
        pre = tl.load(
            prefix + t[:, None] * HIDDEN + c0 + cols[None, :], mask=tm[:, None], other=0.0
        ).to(tl.float32)  # p', stored by this CTA above
        v = _sources(blocks, blk_sm, blk_sr, pre, t, tm, c0, NB)
        mx = tl.sum(e[:, :, None] * v, 1) / den[:, None]  # [TB, 128]
        mixed += tl.sum(tl.where(hit[:, :, None], mx[:, None, :], 0.0), 0)
        msq += tl.sum(tl.where(hit, tl.sum(mx * mx, 1)[:, None], 0.0), 0)
    return mixed, msq


@triton.jit
def _pick_source(wt, s, m):
    """Source s's weight of each token from wt, [16] (0 off m): the other sources add +0.0,
    so these are wt's bits."""
    src = tl.arange(0, 16)
    return tl.sum(tl.where(m[:, None] & (src == s)[None, :], wt, 0.0), 1)


@triton.jit
def _mix_by_source(
    scratch, wt, prefix, blocks, blk_sm, blk_sr, c0, S, NB, OFF_WGT, GATE_LOCAL: tl.constexpr
):
    """The mix one source an iteration for all 16 tokens: mixed += w[:, s] v[:, s] is
    elementwise (no reduction until the sums of squares), and no iteration waits on the
    previous one's loads. The weights are re-read from the mailbox words the poll checked
    (.cg: from L2, where the puts landed), a [16] token vector in the layout the mix
    takes; GATE_LOCAL has no such words and picks them out of wt. (Each site spells out
    its WGT load: a helper around it would put a debug-line label in the default build's
    PTX, see the gate stage.)"""
    NS = NB + 1
    cols = tl.arange(0, COLS)
    src = tl.arange(0, 16)
    tt = tl.arange(0, 16)
    tm = tt < S
    den = tl.sum(tl.where((src == NS)[None, :], wt, 0.0), 1)
    den = tl.where(tm, den, 1.0)
    row = c0 + cols[None, :]
    pre = tl.load(prefix + tt[:, None] * HIDDEN + row, mask=tm[:, None], other=0.0)
    if GATE_LOCAL:
        wp = _pick_source(wt, NB, tm)
    else:
        wp = _value(
            tl.load(scratch + OFF_WGT + tt * (NS + 1) + NB, mask=tm, other=0, cache_modifier=".cg")
        )
    mixed = wp[:, None] * pre.to(tl.float32)
    for s in tl.static_range(MAX_NB):
        ms = tm & (s < NB)
        v = tl.load(blocks + tt[:, None] * blk_sm + s * blk_sr + row, mask=ms[:, None], other=0.0)
        if GATE_LOCAL:
            ws = _pick_source(wt, s, ms)
        else:
            ws = _value(
                tl.load(
                    scratch + OFF_WGT + tt * (NS + 1) + s, mask=ms, other=0, cache_modifier=".cg"
                )
            )
        mixed += ws[:, None] * v.to(tl.float32)
    mixed = mixed / den[:, None]
    msq = tl.sum(mixed * mixed, 1)
    return mixed, msq


@triton.jit
def _attn(
    a,
    tag,
    dead,
    tr,
    prefix,
    delta,
    blocks,
    blk_sm,
    blk_sr,
    ares_nw,
    ares_qk,
    in_nw,
    scratch,
    xbuf,
    alarm,
    eps,
    out_eps,
    budget_ns,
    max_retry,
    inj_mode,
    inj_gidx,
    S,
    NB,
    OFF_PART,
    OFF_WGT,
    OFF_MSQ,
    OFF_XRDY,
    HAS_DELTA: tl.constexpr,
    TB: tl.constexpr,
    SRC_MIN_S: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
    BARRIER: tl.constexpr,
    GATE_LOCAL: tl.constexpr = False,
    BLK_FIRST: tl.constexpr = False,
    MSQ_SP: tl.constexpr = 16,
    MIX_MIN_S: tl.constexpr = 1,
    NW_FIRST: tl.constexpr = False,
    GATE_SLEEP_NS: tl.constexpr = 0,
    GATE_DELAY_NS: tl.constexpr = 0,
    GATE_STAGGER_NS: tl.constexpr = 0,
):
    NS = NB + 1
    c0 = a * COLS
    cols = tl.arange(0, COLS)
    src = tl.arange(0, 16)
    task = (a * 0 - 1).to(tl.int64)
    # ---- slice: p' stored back, PART[a][t][src] = (sum of squares, qk dot)
    wq = tl.load(ares_nw + c0 + cols).to(tl.float32) * tl.load(ares_qk + c0 + cols).to(tl.float32)
    if NW_FIRST:  # the x rows' norm weights, asked with the slice's (Build.NW_FIRST)
        nw = tl.load(in_nw + c0 + cols).to(tl.float32)
    if S >= SRC_MIN_S:
        dead = _slice_by_source(
            a,
            tag,
            dead,
            wq,
            prefix,
            delta,
            blocks,
            blk_sm,
            blk_sr,
            scratch,
            alarm,
            task,
            inj_mode,
            inj_gidx,
            S,
            NB,
            OFF_PART,
            HAS_DELTA,
            WATCHDOG,
            INTERP,
            BARRIER,
        )
    else:
        dead = _slice_by_token(
            a,
            tag,
            dead,
            wq,
            prefix,
            delta,
            blocks,
            blk_sm,
            blk_sr,
            scratch,
            alarm,
            task,
            inj_mode,
            inj_gidx,
            S,
            NB,
            OFF_PART,
            HAS_DELTA,
            TB,
            WATCHDOG,
            INTERP,
            BARRIER,
            BLK_FIRST,
        )
    tr = _stamp(tr, EV_ROLE + 0, TRACE, INTERP)
    # ---- gate: token t = a, on CTAs a < S (none with GATE_LOCAL: the mix computes them all;
    # nor its end stamp: kda_kernel.triton.trace starts that build's mix where the slice ended)
    if not GATE_LOCAL:
        if a < S:
            # token a's cells as _local_weights polls token t's, written out here: a helper's
            # call puts a debug-line label in the PTX, and ptxas schedules the default
            # build differently around it (282 SASS lines at 1x1)
            ap = tl.arange(0, 64)
            q2 = tl.arange(0, 2)
            g3 = (
                OFF_PART
                + ((ap[:, None, None] * S + a) * NS + src[None, :, None]) * 2
                + q2[None, None, :]
            )
            m3 = (ap < NA)[:, None, None] & (src < NS)[None, :, None] & (q2 >= 0)[None, None, :]
            # a lab build's wait (Build.gate_delay_ns); the interpreter's clock stands at 0
            if GATE_DELAY_NS + GATE_STAGGER_NS > 0:  # noqa: SIM102 (constexpr branches)
                if not INTERP:
                    _sleep_until(_now(INTERP) + GATE_DELAY_NS + a * GATE_STAGGER_NS, 128, INTERP)
            w, tr, dead = _poll(
                scratch,
                g3,
                m3,
                tag,
                dead,
                alarm,
                a,
                0,
                task,
                budget_ns,
                max_retry,
                False,
                WATCHDOG,
                INTERP,
                GATE_SLEEP_NS,  # 0 as shipped: Build.gate_sleep_ns
                QUIET,
                tr,
                EV_RPOLL + 0,
                TRACE,
            )
            e, den = _gate_weights(w, m3, NS, eps)
            dead = _put(
                scratch,
                OFF_WGT + a * (NS + 1) + src,
                tl.where(src < NS, e, den),
                src <= NS,
                tag,
                dead,
                alarm,
                a,
                task,
                inj_mode,
                inj_gidx,
                WATCHDOG,
                INTERP,
            )
        tr = _stamp(tr, EV_ROLE + 1, TRACE, INTERP)
    # ---- mix: every token's weights, the mix, MSQ all-to-all, RMSNorm, x rows, XRDY
    tt = tl.arange(0, 16)
    if GATE_LOCAL:
        wt, tr, dead = _local_weights(
            scratch,
            tag,
            dead,
            alarm,
            a,
            task,
            budget_ns,
            max_retry,
            eps,
            S,
            NS,
            OFF_PART,
            WATCHDOG,
            INTERP,
            QUIET,
            tr,
            TRACE,
        )
    else:
        gw = OFF_WGT + tt[:, None] * (NS + 1) + src[None, :]
        mw = (tt < S)[:, None] & (src <= NS)[None, :]
        w, tr, dead = _poll(
            scratch,
            gw,
            mw,
            tag,
            dead,
            alarm,
            a,
            1,
            task,
            budget_ns,
            max_retry,
            False,
            WATCHDOG,
            INTERP,
            0,
            QUIET,
            tr,
            EV_RPOLL + 3,
            TRACE,
        )
        wt = tl.where(mw, _value(w), 0.0)
    if S >= MIX_MIN_S:
        mixed, msq = _mix_by_source(
            scratch, wt, prefix, blocks, blk_sm, blk_sr, c0, S, NB, OFF_WGT, GATE_LOCAL
        )
    else:
        mixed, msq = _mix_by_token(wt, prefix, blocks, blk_sm, blk_sr, c0, S, NB, TB)
    dead = _put(
        scratch,
        OFF_MSQ + a * S + tt,
        msq,
        tt < S,
        tag,
        dead,
        alarm,
        a,
        task,
        inj_mode,
        inj_gidx,
        WATCHDOG,
        INTERP,
    )
    # the all-to-all over [64 slices, MSQ_SP tokens], MSQ_SP the build's largest S rounded
    # up to a power of two, not 16: [64, 16] is 4 pairs a thread, and a poll's try counts
    # the stale pairs one register slot at a time (a barrier each). bench.handoff_probe
    # measures that shape's all-to-all at 1.57 us a round against 1.02 with one pair a
    # thread; in the K1, 0.1 to 0.7 us a launch (1x1 44.77 -> 44.10)
    ap = tl.arange(0, 64)
    tp = tl.arange(0, MSQ_SP)
    gm = OFF_MSQ + ap[:, None] * S + tp[None, :]
    mm = (ap < NA)[:, None] & (tp < S)[None, :]
    w, tr, dead = _poll(
        scratch,
        gm,
        mm,
        tag,
        dead,
        alarm,
        a,
        2,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        0,
        QUIET,
        tr,
        EV_RPOLL + 6,
        TRACE,
    )
    tot = tl.sum(tl.where(mm, _value(w), 0.0), 0)  # [MSQ_SP] over tokens
    if MSQ_SP < 16:
        tot = tl.sum(tl.where(tt[:, None] == tp[None, :], tot[None, :], 0.0), 1)  # [16]
    rstd = tl.rsqrt(tot / HIDDEN + out_eps)
    if not NW_FIRST:
        nw = tl.load(in_nw + c0 + cols).to(tl.float32)
    x = _to_bf16(mixed * rstd[:, None] * nw[None, :])
    tl.store(
        xbuf + tt[:, None] * HIDDEN + c0 + cols[None, :],
        x,
        mask=(tt < S)[:, None],
        cache_modifier=".cg",
    )
    # publish: every thread's x stores before the flag (barrier, then a gpu-scope release)
    tl.debug_barrier()
    flag = (tag.to(tl.int64) << 32) | 1
    if WATCHDOG:
        if (inj_mode != INJ_DROP) | (inj_gidx != OFF_XRDY + a):
            tl.atomic_xchg(scratch + OFF_XRDY + a, flag, sem="release", scope="gpu")
    else:
        tl.atomic_xchg(scratch + OFF_XRDY + a, flag, sem="release", scope="gpu")
    tr = _stamp(tr, EV_ROLE + 2, TRACE, INTERP)
    return tr, dead
