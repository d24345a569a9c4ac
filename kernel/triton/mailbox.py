"""Mailboxes: the (value, tag) put, the poll (inline-asm loads, a CTA-wide stale count),
the watchdog's alarm record and the scratch layout's offsets.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import (
    AL_NO_CELL,
    AL_REC0,
    AL_WORDS,
    HD,
    INJ_CORRUPT,
    INJ_DROP,
    K_RELEASED,
    K_REUSE,
    K_TIMEOUT,
    NA,
    NH,
    NPROJ,
    SITE_PUT,
)
from kda_kernel.triton.machine import _backoff, _now, _stamp_now
from kda_kernel.triton.record import _poll_rec


@triton.jit
def _record(alarm, pid, kind, gidx, expect, seen, t, site, task, tag):
    rf = tl.arange(0, 8)
    rec = tl.zeros([8], tl.int64)
    rec = tl.where(rf == 0, tag, rec)
    rec = tl.where(rf == 1, kind, rec)
    rec = tl.where(rf == 2, gidx, rec)
    rec = tl.where(rf == 3, expect, rec)
    rec = tl.where(rf == 4, seen, rec)
    rec = tl.where(rf == 5, t, rec)
    rec = tl.where(rf == 6, site, rec)
    rec = tl.where(rf == 7, task, rec)
    tl.store(alarm + AL_REC0 + pid * AL_WORDS + rf, rec)


@triton.jit
def _put(
    scratch,
    gidx,
    val,
    mask,
    tag,
    dead,
    alarm,
    pid,
    task,
    inj_mode,
    inj_gidx,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
):
    """Store (val, tag) pairs, one 64-bit store each, at scratch words gidx."""
    bits = val.to(tl.float32).to(tl.int32, bitcast=True).to(tl.int64) & 0xFFFFFFFF
    word = (tag.to(tl.int64) << 32) | bits
    if WATCHDOG:
        # fault injection lives in the watchdog build only (the production build has none)
        hit = gidx == inj_gidx
        mask = mask & ~(hit & (inj_mode == INJ_DROP))
        word = tl.where(hit & (inj_mode == INJ_CORRUPT), word ^ (1 << 52), word)
        # a cell that already holds this launch's tag before its only put means the tag is
        # not fresh (an epoch that was not bumped): readers may already have passed on it
        old = tl.load(scratch + gidx, mask=mask, other=0, volatile=True)
        reuse = (((old >> 32).to(tl.int32) == tag) & mask).to(tl.int32)
        if (tl.sum(reuse) > 0) & (dead == 0):
            first = tl.min(tl.where(reuse != 0, gidx, AL_NO_CELL))
            _record(alarm, pid, K_REUSE, first, tag, tag, _now(INTERP), SITE_PUT, task, tag)
            tl.atomic_xchg(alarm, tag.to(tl.int64), sem="release", scope="gpu")
            dead = dead + 1
    tl.store(scratch + gidx, word, mask=mask)
    return dead


@triton.jit
def _load_pairs(scratch, gidx, mask, QUIET: tl.constexpr, INTERP: tl.constexpr):
    """One poll's pairs. On the GPU each pair is one relaxed gpu-scope 64-bit load (the
    form the PTX memory model pairs with a fence for an acquire) in inline asm with side
    effects: Triton re-materialises a plain (even volatile) tt.load in each layout its
    uses want, which gives two loads of one mailbox at two moments, only one of them
    checked (seen in the TTGIR of the k.conv poll). An impure asm op is never duplicated.

    QUIET: a masked lane issues no load (a predicated ld). Otherwise it reads cell 0, a
    valid word: with 96 to 256 CTAs re-polling tensors mostly masked (the k.gates poll
    uses 128 of 2048 lanes at L = 1), that is one L2 line hammered by every try, in the
    slice the gemv's weight stream also goes through."""
    if INTERP:
        w = tl.load(scratch + gidx, mask=mask, other=0, volatile=True)
    elif QUIET:
        w = tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.s32 p, $2, 0; mov.b64 $0, 0; "
            "@p ld.relaxed.gpu.global.b64 $0, [$1]; }",
            "=l,l,r",
            [scratch + tl.where(mask, gidx, 0), mask.to(tl.int32)],
            dtype=tl.int64,
            is_pure=False,
            pack=1,
        )
    else:
        w = tl.inline_asm_elementwise(
            "ld.relaxed.gpu.global.b64 $0, [$1];",
            "=l,l",
            [scratch + tl.where(mask, gidx, 0)],  # masked lanes read cell 0, a valid word
            dtype=tl.int64,
            is_pure=False,
            pack=1,
        )
        w = tl.where(mask, w, 0)
    return w


@triton.jit
def _count_bad(bad, INTERP: tl.constexpr):
    """How many stale pairs, counted over every thread's copy. A tensor smaller than the
    CTA is replicated across warps, each replica loads its own copy, and Triton's
    reductions read one replica (they assume replicas are equal): a poll could pass on
    one warp's fresh copy while another warp goes on with its stale one. bar.red.popc
    counts over all 256 threads, one register slot at a time (every thread holds as many)."""
    b = bad.to(tl.int32)
    if not INTERP:
        b = tl.inline_asm_elementwise(
            "{ .reg .pred p; setp.ne.s32 p, $1, 0; bar.red.popc.u32 $0, 0, p; }",
            "=r,r",
            [b],
            dtype=tl.int32,
            is_pure=False,
            pack=1,
        )
    return tl.sum(b)


@triton.jit
def _cta_any(x, INTERP: tl.constexpr):
    """A per-thread condition (a clock, a load) made one answer for the whole CTA, so no
    two warps part ways before a barrier."""
    v = tl.zeros([1], tl.int32) + x.to(tl.int32)
    return _count_bad(v != 0, INTERP) > 0


@triton.jit
def _acquire(INTERP: tl.constexpr):
    """After a spin that read flags published with release: each thread's relaxed loads
    saw its flags, its fence.acq_rel makes that an acquire (PTX fence-based
    synchronisation), and the barrier carries it to the threads that saw other flags.
    No RMW: 197 CTAs x 56 acquire RMWs on the 4 lines of XRDY serialise in L2."""
    if not INTERP:
        tl.inline_asm_elementwise(
            "fence.acq_rel.gpu; mov.u32 $0, 0;", "=r", [], dtype=tl.int32, is_pure=False, pack=1
        )
    tl.debug_barrier()


@triton.jit
def _poll(
    scratch,
    gidx,
    mask,
    tag,
    dead,
    alarm,
    pid,
    site,
    task,
    budget_ns,
    max_retry,
    ACQ: tl.constexpr,
    WATCHDOG: tl.constexpr,
    INTERP: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
    tr,
    k,
    TRACE: tl.constexpr,
):
    """One poll batch: re-load every pair until every tag is this launch's.

    Returns (words, tr, dead): with TRACE, words k, k + 1, k + 2 of tr get the batch's first
    issue, the time it was satisfied and its retries (see Build.trace_level). A dead CTA
    (one that gave up already) does not wait: it passes through with whatever it read."""
    t0 = _stamp_now(WATCHDOG, INTERP)
    w = _load_pairs(scratch, gidx, mask, QUIET, INTERP)
    bad = ((w >> 32).to(tl.int32) != tag) & mask
    nbad = _count_bad(bad, INTERP)
    nr = tl.zeros([], tl.int64)
    while (nbad > 0) & (dead == 0):
        _backoff(SLEEP_NS, INTERP)
        w = _load_pairs(scratch, gidx, mask, QUIET, INTERP)
        bad = ((w >> 32).to(tl.int32) != tag) & mask
        nbad = _count_bad(bad, INTERP)
        nr += 1
        if WATCHDOG:
            t = _now(INTERP)
            released = _cta_any(tl.load(alarm, volatile=True) == tag.to(tl.int64), INTERP)
            late = _cta_any(((t - t0) > budget_ns) | (nr > max_retry), INTERP)
            if (late | released) & (nbad > 0):
                first = tl.min(tl.where(bad, gidx, AL_NO_CELL))
                seen = tl.max(tl.where(bad & (gidx == first), w >> 32, -1))
                kind = tl.where(released, K_RELEASED, K_TIMEOUT)
                _record(alarm, pid, kind, first, tag, seen, t, site, task, tag)
                if kind == K_TIMEOUT:
                    tl.atomic_xchg(alarm, tag.to(tl.int64), sem="release", scope="gpu")
                dead = dead + 1
    if ACQ:
        _acquire(INTERP)
    t1 = _stamp_now(WATCHDOG, INTERP)
    tr = _poll_rec(tr, k, t0, t1, nr, TRACE)
    return w, tr, dead


@triton.jit
def _up(x, A: tl.constexpr):
    return (x + (A - 1)) // A * A


@triton.jit
def layout(R, L: tl.constexpr, NB, ALIGN: tl.constexpr):
    """S and the mailbox offsets (cells) after PART's, which is 0: the simulator's
    CellSpace.of(cfg, ALIGN), regions in the seed's order, each from a multiple of ALIGN."""
    S = R * L
    NS = NB + 1
    OFF_WGT = _up(NA * S * NS * 2, ALIGN)
    OFF_MSQ = _up(OFF_WGT + S * (NS + 1), ALIGN)
    OFF_XRDY = _up(OFF_MSQ + NA * S, ALIGN)
    OFF_PROJ = _up(OFF_XRDY + NA, ALIGN)
    OFF_QK = _up(OFF_PROJ + S * NPROJ, ALIGN)
    OFF_ONRM = _up(OFF_QK + R * NH * L * 2 * HD, ALIGN)
    return S, OFF_WGT, OFF_MSQ, OFF_XRDY, OFF_PROJ, OFF_QK, OFF_ONRM


# public names for probes (bench/): the same jit functions
put = _put
poll = _poll
load_pairs = _load_pairs
count_bad = _count_bad
