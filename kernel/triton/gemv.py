"""The gemv role (CTAs NA..NA+N_GEMV-1): the x rows times w_in after the XRDY poll, on FMA
units (S <= FMA_MAX_S) or the tensor cores, and the PROJ puts.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import EV_ROLE, EV_RPOLL, GEMV_TASKS, HIDDEN, NA, NPROJ, ROWS
from kda_kernel.triton.machine import (
    _bf16r,
    _bulk_prefetch_group,
    _dot,
    _now,
    _prefetch_group,
    _sleep_until,
)
from kda_kernel.triton.mailbox import _poll, _put
from kda_kernel.triton.record import _stamp


@triton.jit
def _fma4(a0, a1, a2, a3, w, xbuf, k0, kk, S, NT: tl.constexpr):
    """The first NT (1, 2 or 4) tokens' accumulators += one [16, BK] weight chunk x that
    chunk of x; tokens past S multiply masked zeros."""
    wf = w.to(tl.float32)
    x0 = tl.load(xbuf + k0 + kk, cache_modifier=".cg").to(tl.float32)
    a0 = a0 + wf * x0[None, :]
    if NT > 1:
        x1 = tl.load(
            xbuf + HIDDEN + k0 + kk, mask=(kk >= 0) & (S > 1), other=0.0, cache_modifier=".cg"
        ).to(tl.float32)
        a1 = a1 + wf * x1[None, :]
    if NT > 2:
        x2 = tl.load(
            xbuf + 2 * HIDDEN + k0 + kk, mask=(kk >= 0) & (S > 2), other=0.0, cache_modifier=".cg"
        ).to(tl.float32)
        x3 = tl.load(
            xbuf + 3 * HIDDEN + k0 + kk, mask=(kk >= 0) & (S > 3), other=0.0, cache_modifier=".cg"
        ).to(tl.float32)
        a2 = a2 + wf * x2[None, :]
        a3 = a3 + wf * x3[None, :]
    return a0, a1, a2, a3


@triton.jit
def _first_step(w_in, rg, S, BK: tl.constexpr, FMA_MAX_S: tl.constexpr):
    """The FMA loop's first step of group rg: four [16, BK] weight chunks (16 KB a CTA at
    BK = 128), loaded only where the FMA form runs (S <= FMA_MAX_S)."""
    rows = rg * ROWS + tl.arange(0, ROWS)
    kk = tl.arange(0, BK)
    wp = w_in + rows[:, None].to(tl.int64) * HIDDEN + kk[None, :]
    m = (kk >= 0)[None, :] & (S <= FMA_MAX_S)
    w0 = tl.load(wp, mask=m, other=0.0, eviction_policy="evict_first")
    w1 = tl.load(wp + BK, mask=m, other=0.0, eviction_policy="evict_first")
    w2 = tl.load(wp + 2 * BK, mask=m, other=0.0, eviction_policy="evict_first")
    w3 = tl.load(wp + 3 * BK, mask=m, other=0.0, eviction_policy="evict_first")
    return w0, w1, w2, w3


@triton.jit
def _load_step(wp, k, BK: tl.constexpr):
    """One FMA step's weights: four [16, BK] chunks from column k (16 KB a CTA at BK = 128)."""
    w0 = tl.load(wp + k, eviction_policy="evict_first")
    w1 = tl.load(wp + k + BK, eviction_policy="evict_first")
    w2 = tl.load(wp + k + 2 * BK, eviction_policy="evict_first")
    w3 = tl.load(wp + k + 3 * BK, eviction_policy="evict_first")
    return w0, w1, w2, w3


@triton.jit
def _fma_step(a0, a1, a2, a3, w0, w1, w2, w3, xbuf, k0, kk, S, BK: tl.constexpr, NT: tl.constexpr):
    a0, a1, a2, a3 = _fma4(a0, a1, a2, a3, w0, xbuf, k0, kk, S, NT)
    a0, a1, a2, a3 = _fma4(a0, a1, a2, a3, w1, xbuf, k0 + BK, kk, S, NT)
    a0, a1, a2, a3 = _fma4(a0, a1, a2, a3, w2, xbuf, k0 + 2 * BK, kk, S, NT)
    a0, a1, a2, a3 = _fma4(a0, a1, a2, a3, w3, xbuf, k0 + 3 * BK, kk, S, NT)
    return a0, a1, a2, a3


@triton.jit
def _gemv_fma(
    w_in,
    xbuf,
    rg,
    S,
    p0,
    p1,
    p2,
    p3,
    BK: tl.constexpr,
    PRE: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    NT: tl.constexpr,
):
    """The FMA form (S <= FMA_MAX_S) of _gemv_group: NT [16, BK] fp32 accumulators over all
    256 threads (one a token; tokens past S multiply masked zeros), reduced once. With PRE
    the first step is p0 .. p3, loaded by the caller.

    Triton does not software-pipeline loads that only feed FMAs, so the double buffer is
    written out."""
    rows = rg * ROWS + tl.arange(0, ROWS)
    kk = tl.arange(0, BK)
    tok = tl.arange(0, 16)
    wp = w_in + rows[:, None].to(tl.int64) * HIDDEN + kk[None, :]
    res = tl.zeros([ROWS, 16], tl.float32)
    a0 = tl.zeros([ROWS, BK], tl.float32)
    a1 = tl.zeros([ROWS, BK], tl.float32)
    a2 = tl.zeros([ROWS, BK], tl.float32)
    a3 = tl.zeros([ROWS, BK], tl.float32)
    if PRE:
        w0, w1, w2, w3 = p0, p1, p2, p3
    else:
        w0, w1, w2, w3 = _first_step(w_in, rg, S, BK, FMA_MAX_S)
    # the next step's 16 KB loaded before this step's FMAs (a third step in flight,
    # measured: spills and 2 to 3 % slower at S = 4, no gain at S = 1)
    for k0 in range(0, HIDDEN - 4 * BK, 4 * BK):
        n0, n1, n2, n3 = _load_step(wp, k0 + 4 * BK, BK)
        a0, a1, a2, a3 = _fma_step(a0, a1, a2, a3, w0, w1, w2, w3, xbuf, k0, kk, S, BK, NT)
        w0, w1, w2, w3 = n0, n1, n2, n3
    kl = HIDDEN - 4 * BK
    a0, a1, a2, a3 = _fma_step(a0, a1, a2, a3, w0, w1, w2, w3, xbuf, kl, kk, S, BK, NT)
    res = tl.where((tok == 0)[None, :], tl.sum(a0, 1)[:, None], res)
    res = tl.where((tok == 1)[None, :], tl.sum(a1, 1)[:, None], res)
    res = tl.where((tok == 2)[None, :], tl.sum(a2, 1)[:, None], res)
    res = tl.where((tok == 3)[None, :], tl.sum(a3, 1)[:, None], res)
    return res


@triton.jit
def _gemv_fma_tma(
    wd, xbuf, rg, S, p0, p1, p2, p3, BK: tl.constexpr, PRE: tl.constexpr, TMA_NS: tl.constexpr
):
    """_gemv_fma for one token with its weights brought on chip by the copy engine: a
    step's [16, 4 BK] as one tile of a tensor descriptor, which Triton pipelines TMA_NS
    steps deep in shared memory (plain loads that only feed FMAs it does not pipeline).
    The early step (PRE) stays a register load before the XRDY poll, as the seed orders
    it. Measured alone (bench.kernel_gemv_probe --tma): with [16, 512] tiles the
    copy engine read a gemv CTA's two groups 3.2 us a launch faster than the FMA form's
    loads, and with [16, 128] tiles 7.8 us slower. In the K1, four [16, 128] tiles a step
    are slower at every S; this form, its descriptor made once a CTA,
    takes 1x1 from 44.7 to 44.3 us and the other L = 1 shapes 0.3 to 3.2 % slower, so
    Build.tma_ns is off by default. ``wd`` is the CTA's descriptor of w_in
    (_w_descriptor)."""
    TBK: tl.constexpr = 4 * BK
    kk = tl.arange(0, BK)
    kt = tl.arange(0, TBK)
    tok = tl.arange(0, 16)
    a0 = tl.zeros([ROWS, BK], tl.float32)
    acc = tl.zeros([ROWS, TBK], tl.float32)
    r0 = rg * ROWS
    k_first: tl.constexpr = TBK if PRE else 0
    if PRE:
        a0, _, _, _ = _fma_step(a0, a0, a0, a0, p0, p1, p2, p3, xbuf, 0, kk, S, BK, 1)
    for k0 in tl.range(k_first, HIDDEN, TBK, num_stages=TMA_NS):
        w = wd.load([r0, k0]).to(tl.float32)
        x = tl.load(xbuf + k0 + kt, cache_modifier=".cg").to(tl.float32)
        acc += w * x[None, :]
    tot = tl.sum(acc, 1) + tl.sum(a0, 1)
    return tl.where((tok == 0)[None, :], tot[:, None], tl.zeros([ROWS, 16], tl.float32))


@triton.jit
def _w_descriptor(w_in, BK: tl.constexpr, TMA_NS: tl.constexpr):
    """The copy engine's view of w_in, [16, 4 BK] tiles (TMA_NS > 0), made once a CTA,
    before its XRDY poll: making it writes a descriptor to global memory and fences it,
    which is latency the poll hides. Otherwise w_in itself, unused."""
    if TMA_NS > 0:
        wd = tl.make_tensor_descriptor(
            w_in, shape=[NPROJ, HIDDEN], strides=[HIDDEN, 1], block_shape=[ROWS, 4 * BK]
        )
    else:
        wd = w_in
    return wd


@triton.jit
def _gemv_fma_nt(
    w_in,
    wd,
    xbuf,
    rg,
    S,
    p0,
    p1,
    p2,
    p3,
    BK: tl.constexpr,
    PRE: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    NT: tl.constexpr,
    TMA_NS: tl.constexpr,
):
    """The FMA form for NT tokens: its weights by plain loads, or at one token by the copy
    engine (TMA_NS > 0: a [16, 512] accumulator a token leaves no registers for more)."""
    if TMA_NS > 0 and NT == 1:
        res = _gemv_fma_tma(wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, TMA_NS)
    else:
        res = _gemv_fma(w_in, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, NT)
    return res


@triton.jit
def _gemv_fma_by_s(
    w_in,
    wd,
    xbuf,
    rg,
    S,
    p0,
    p1,
    p2,
    p3,
    BK: tl.constexpr,
    PRE: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    TMA_NS: tl.constexpr,
):
    """The FMA form with as many accumulators as the launch has tokens (FMA_BY_S): at S = 1
    one FMA a weight, not four of which three multiply masked zeros."""
    if FMA_BY_S:
        if S == 1:
            res = _gemv_fma_nt(w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, 1, TMA_NS)
        elif S == 2:
            res = _gemv_fma_nt(w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, 2, TMA_NS)
        else:
            res = _gemv_fma_nt(w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, 4, TMA_NS)
    else:
        res = _gemv_fma_nt(w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, 4, TMA_NS)
    return res


@triton.jit
def _gemv_tc(
    w_in,
    xbuf,
    rg,
    S,
    NSTAGE: tl.constexpr,
    TC_BK: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    INTERP: tl.constexpr,
):
    """The tensor-core form of _gemv_group: tl.dot, software-pipelined by Triton, TC_BK
    columns a stage."""
    rows = rg * ROWS + tl.arange(0, ROWS)
    tok = tl.arange(0, 16)
    res = tl.zeros([ROWS, 16], tl.float32)
    if TC_SPLIT == 1:
        kt = tl.arange(0, TC_BK)
        wt = w_in + rows[:, None].to(tl.int64) * HIDDEN + kt[None, :]
        xp = xbuf + tok[:, None] * HIDDEN + kt[None, :]
        xm = (tok < S)[:, None]
        for k0 in tl.range(0, HIDDEN, TC_BK, num_stages=NSTAGE):
            wv = tl.load(wt + k0, eviction_policy="evict_first")
            xv = tl.load(xp + k0, mask=xm, other=0.0, cache_modifier=".cg")
            res = _dot(wv, tl.trans(xv), res, INTERP)
    else:
        # a [16, 16] dot is one warp's mma tile, which Triton replicates over the 8 warps
        # (each reading the whole stage from shared memory). Batching TC_SPLIT column
        # slices splits K over the warps, summed once. Measured on the H200:
        # 4 slices took 2x4 from 88.0 to 62.5 us and 4x4 from 104.2 to 80.9; 2 and 8 less
        KS: tl.constexpr = TC_BK // TC_SPLIT
        sb = tl.arange(0, TC_SPLIT)
        kc = tl.arange(0, KS)
        wt = (
            w_in
            + rows[None, :, None].to(tl.int64) * HIDDEN
            + (sb[:, None, None] * KS + kc[None, None, :])
        )
        xp = xbuf + tok[None, None, :] * HIDDEN + (sb[:, None, None] * KS + kc[None, :, None])
        xm = (tok < S)[None, None, :] & (kc >= 0)[None, :, None]
        acc = tl.zeros([TC_SPLIT, ROWS, 16], tl.float32)
        for k0 in tl.range(0, HIDDEN, TC_BK, num_stages=NSTAGE):
            wv = tl.load(wt + k0, eviction_policy="evict_first")
            xv = tl.load(xp + k0, mask=xm, other=0.0, cache_modifier=".cg")
            acc = _dot(wv, xv, acc, INTERP)
        res = tl.sum(acc, 0)
    return res


@triton.jit
def _gemv_group(
    w_in,
    wd,
    xbuf,
    rg,
    S,
    p0,
    p1,
    p2,
    p3,
    BK: tl.constexpr,
    NSTAGE: tl.constexpr,
    FMA: tl.constexpr,
    PRE: tl.constexpr,
    TC_BK: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    MAXS: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    TMA_NS: tl.constexpr,
    INTERP: tl.constexpr,
):
    """in_proj rows 16 rg .. against every token's x: [16 rows, 16 tokens] fp32, in the
    FMA form for S <= FMA_MAX_S and the tensor-core form above. A build whose largest S
    (MAXS) is FMA_MAX_S or less holds no tensor-core code; the L = 1 builds run S = 4 on
    it, checked against the reference on the H200."""
    # two branches, not one `or`: Triton drops the other code only for a constexpr test
    if FMA and MAXS <= FMA_MAX_S:  # noqa: SIM114
        res = _gemv_fma_by_s(
            w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, FMA_BY_S, TMA_NS
        )
    elif FMA and S <= FMA_MAX_S:
        res = _gemv_fma_by_s(
            w_in, wd, xbuf, rg, S, p0, p1, p2, p3, BK, PRE, FMA_MAX_S, FMA_BY_S, TMA_NS
        )
    else:
        res = _gemv_tc(w_in, xbuf, rg, S, NSTAGE, TC_BK, TC_SPLIT, INTERP)
    return res


@triton.jit
def _gemv(
    g,
    tag,
    dead,
    tr,
    w_in,
    xbuf,
    scratch,
    alarm,
    budget_ns,
    max_retry,
    inj_mode,
    inj_gidx,
    S,
    OFF_XRDY,
    OFF_PROJ,
    BK: tl.constexpr,
    NSTAGE: tl.constexpr,
    FMA: tl.constexpr,
    PREFETCH: tl.constexpr,
    EARLY: tl.constexpr,
    TC_BK: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    MAXS: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    PF_DELAY: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
    TMA_NS: tl.constexpr = 0,
):
    pid = g + NA
    task = (g * 0 - 1).to(tl.int64)
    rg0 = 2 * g
    rg1 = rg0 + 1
    rg1c = tl.minimum(rg1, GEMV_TASKS - 1)  # past the end: the last group again, no put
    # the seed's order: the first group's weights are issued before the XRDY poll. Into
    # registers, as on AMD, as much as the loop's first step holds (16 KB a CTA); NVIDIA
    # loads need not retire in order, so the poll does not wait behind them
    if FMA and EARLY:
        p0, p1, p2, p3 = _first_step(w_in, rg0, S, BK, FMA_MAX_S)
    else:  # loaded after the poll (and the tensor-core form pipelines its own loads)
        p0 = tl.zeros([ROWS, BK], tl.bfloat16)
        p1, p2, p3 = p0, p0, p0
    # and into L2 (PREFETCH): HBM is all but idle while the attn CTAs work towards XRDY,
    # and 60 MB of L2 holds a group of every CTA (45 MB); measured slower all the same,
    # so off by default (Build.prefetch says why)
    wd = _w_descriptor(w_in, BK, TMA_NS)
    if PF_DELAY > 0:
        _sleep_until(_now(INTERP) + PF_DELAY, SLEEP_NS, INTERP)
    if PREFETCH == 1:
        _prefetch_group(w_in, rg0, INTERP)
    elif PREFETCH >= 2:
        _bulk_prefetch_group(w_in, rg0, INTERP)
        if PREFETCH == 4:
            _bulk_prefetch_group(w_in, rg1c, INTERP)
    # the 56 flags over 256 lanes when QUIET: a 64-lane tensor is replicated on the CTA's
    # 8 warps, and each replica re-reads the 4 lines all 197 gemv CTAs poll
    ap = tl.arange(0, 256 if QUIET else 64)
    _, tr, dead = _poll(
        scratch,
        OFF_XRDY + ap,
        ap < NA,
        tag,
        dead,
        alarm,
        pid,
        3,
        task,
        budget_ns,
        max_retry,
        True,
        WATCHDOG,
        INTERP,
        SLEEP_NS,
        QUIET,
        tr,
        EV_RPOLL + 0,
        TRACE,
    )
    if PREFETCH == 1:
        _prefetch_group(w_in, rg1c, INTERP)
    elif PREFETCH == 3:
        _bulk_prefetch_group(w_in, rg1c, INTERP)
    tr = _stamp(tr, EV_ROLE + 0, TRACE, INTERP)
    r = tl.arange(0, ROWS)
    tok = tl.arange(0, 16)
    m = (tok < S)[None, :] & (r >= 0)[:, None]
    acc = _gemv_group(
        w_in,
        wd,
        xbuf,
        rg0,
        S,
        p0,
        p1,
        p2,
        p3,
        BK,
        NSTAGE,
        FMA,
        EARLY,
        TC_BK,
        TC_SPLIT,
        MAXS,
        FMA_MAX_S,
        FMA_BY_S,
        TMA_NS,
        INTERP,
    )
    gi = OFF_PROJ + tok[None, :] * NPROJ + rg0 * ROWS + r[:, None]
    dead = _put(
        scratch,
        gi,
        _bf16r(acc),
        m,
        tag,
        dead,
        alarm,
        pid,
        task,
        inj_mode,
        inj_gidx,
        WATCHDOG,
        INTERP,
    )
    tr = _stamp(tr, EV_ROLE + 1, TRACE, INTERP)
    acc = _gemv_group(
        w_in,
        wd,
        xbuf,
        rg1c,
        S,
        p0,
        p1,
        p2,
        p3,
        BK,
        NSTAGE,
        FMA,
        False,
        TC_BK,
        TC_SPLIT,
        MAXS,
        FMA_MAX_S,
        FMA_BY_S,
        TMA_NS,
        INTERP,
    )
    gi = OFF_PROJ + tok[None, :] * NPROJ + rg1 * ROWS + r[:, None]
    dead = _put(
        scratch,
        gi,
        _bf16r(acc),
        m & (rg1 < GEMV_TASKS),
        tag,
        dead,
        alarm,
        pid,
        task,
        inj_mode,
        inj_gidx,
        WATCHDOG,
        INTERP,
    )
    tr = _stamp(tr, EV_ROLE + 2, TRACE, INTERP)
    return tr, dead


# public name for probes (bench/): the same jit function
gemv = _gemv
