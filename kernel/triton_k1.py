"""K1 ``kda_pre`` in Triton: one persistent launch of 256 programs in the seed's three roles.

Written for the NVIDIA H200 from the seed's documentation (``shared/seed/kda_pre.txt``) and
``shared/PROTOCOL.md``; the AMD build of this file is untested. Protocol, as in the seed:

* every mailbox value is a (32-bit value, 32-bit tag) pair written in one 64-bit store;
* a poll batch re-loads all its pairs until every tag equals this launch's tag,
  ``step_tag(epoch, slot)``, computed here from the device epoch (bumped in the graph);
* scratch is never cleared; x rows are plain stores published by XRDY (release / acquire).

Differences forced by the H200 and Triton (each kept minimal, each said where it is made):

* a CTA is 8 warps of 32 (256 threads), so two fit an SM: 256 CTAs on 132 SMs;
* "issue the first group's weights before the XRDY poll": the weights of one group cannot
  sit in the registers of two CTAs an SM (2 x 229 KB). EARLY (the default) issues the FMA
  loop's first step of group rg0 (16 KB a CTA) into registers before the poll and hands
  it to the loop; the rest streams after the poll. PREFETCH also asks L2 for rg0 before
  the poll (and rg1 as x lands), a line at a time or by the copy engine's bulk prefetch;
  it is off by default because every form measured slower (docs/measurements/
  kernel_h200.md, runs 9b and 32): 45 MB of weights in flight at kernel start slow the
  attn CTAs' own loads, the critical path into XRDY, and the gemv groups took no less
  time after it. NVIDIA loads need not retire in order, so either way a poll never waits
  behind weights (the role rule holds trivially);
* every poll pair is loaded by inline asm and counted stale over every thread's copy
  (``_load_pairs``, ``_count_bad``): Triton otherwise re-materialises a volatile load in
  a second layout and checks one replica of a replicated tensor. QUIET (the default)
  predicates each load on its lane's mask and reads the XRDY flags once a CTA: masked
  lanes and replicas otherwise re-read a few hot L2 lines thousands of times a try;
* x is read from L2 (``.cg``) in the gemv loop instead of being staged whole in LDS;
* the gemv runs on FMA units up to S = FMA_MAX_S (3), one accumulator a token S has, and
  on the tensor cores above;
* the gemv's tensor-core form (S > FMA_MAX_S) splits K over the warps (TC_SPLIT slices, a batched
  dot): a [16, 16] dot is one warp's tile, which Triton otherwise replicates on all 8;
* from S = SRC_MIN_S on, the attn slice takes one source row of all 16 tokens an
  iteration (elementwise, no cross-warp reduction a step), and so does the mix from S =
  MIX_MIN_S (1: always). The slice's PART puts then land source by source instead of token
  by token; every one still precedes the stage's next poll, as in the seed, so the
  protocol's order of puts and polls is unchanged.

Build switches (constexpr): WATCHDOG bounds every wait by a globaltimer budget and records
the first one a CTA gives up on, and with it the fault injection (inj_mode: drop or corrupt
one put); TRACE stamps every stage boundary and poll site into a register-resident record
of 32-bit words flushed once at the end; GATE_LOCAL is the protocol's variant
``gate_local``: no gate stage and no WGT hand-off, every attn CTA's mix polls PART for
every token and computes all the weights itself (``_local_weights``); INTERP swaps the
inline PTX for stand-ins so the Triton interpreter can run it (see ``kernel/interp.py``).
Tuning constexprs (BK, NSTAGE, TC_BK, TC_SPLIT, TB, SRC_MIN_S, MIX_MIN_S, BLK_FIRST,
NW_FIRST, MSQ_SP, SLEEP_NS, EARLY, PREFETCH, QUIET; MAXS, the largest S a build serves) come
from ``kda_kernel.launch.Build``, where each default says what measured it.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel import alarm_layout as A
from kda_kernel import faults as F
from kda_kernel import launch as K
from kda_kernel import trace_layout as T
from kda_sim import constants as C

# the protocol constants, as constexprs (their values live in kda_sim/constants.py)
HIDDEN = tl.constexpr(C.HIDDEN)
NA = tl.constexpr(C.NA)
COLS = tl.constexpr(C.COLS)
NH = tl.constexpr(C.NH)
HD = tl.constexpr(C.HD)
PROJ = tl.constexpr(C.PROJ)
VCH = tl.constexpr(C.VCH)
NVCH = tl.constexpr(C.NVCH)
CONV_W = tl.constexpr(C.CONV_W)
NPROJ = tl.constexpr(C.NPROJ)
FA_0 = tl.constexpr(C.FA_0)
BETA_0 = tl.constexpr(C.BETA_0)
G2_0 = tl.constexpr(C.G2_0)
ROWS = tl.constexpr(C.ROWS)
MAX_NB = tl.constexpr(K.MAX_NB)
GEMV_TASKS = tl.constexpr(C.GEMV_TASKS)
N_GEMV = tl.constexpr(C.N_GEMV)
BLOCKS = tl.constexpr(C.BLOCKS)
TAG_SLOTS = tl.constexpr(C.TAG_SLOTS)
EPOCH_MOD = tl.constexpr(1 << C.EPOCH_BITS)
TASKS_A_REQ = tl.constexpr(C.NH * C.NVCH)  # 96
LINES_A_GROUP = tl.constexpr(C.ROWS * C.HIDDEN * C.BF16 // 128)  # 128 B L2 lines: 1792
BULK_ELEMS = tl.constexpr(C.ROWS * C.HIDDEN // 256)  # a group over 256 lanes: 448
# a lane's share of a group (896 B), asked of L2 by the copy engine in one request
BULK_ASM = tl.constexpr(
    f"cp.async.bulk.prefetch.L2.global [$1], {C.ROWS * C.HIDDEN * C.BF16 // 256};"
)

# record layouts
EV_START = tl.constexpr(T.EV_START)
EV_END = tl.constexpr(T.EV_END)
EV_SMID = tl.constexpr(T.EV_SMID)
EV_NTASK = tl.constexpr(T.EV_NTASK)
EV_TAG = tl.constexpr(T.EV_TAG)
EV_START_HI = tl.constexpr(T.EV_START_HI)
EV_END_HI = tl.constexpr(T.EV_END_HI)
EV_ROLE = tl.constexpr(T.EV_ROLE)
EV_RPOLL = tl.constexpr(T.EV_RPOLL)
EV_TASK0 = tl.constexpr(T.EV_TASK0)
TASK_STRIDE = tl.constexpr(T.TASK_STRIDE)
TASK_T = tl.constexpr(T.TASK_T)
TASK_POLL = tl.constexpr(T.TASK_POLL)
AL_REC0 = tl.constexpr(A.REC0)
AL_NO_CELL = tl.constexpr(A.NO_CELL)
AL_WORDS = tl.constexpr(A.REC_WORDS)
K_TIMEOUT = tl.constexpr(A.KIND_TIMEOUT)
K_RELEASED = tl.constexpr(A.KIND_RELEASED)
K_REUSE = tl.constexpr(A.KIND_REUSE)
SITE_PUT = tl.constexpr(A.SITE_PUT)
SITE_MIX_PART = tl.constexpr(A.SITE_MIX_PART)

INJ_DROP = tl.constexpr(F.INJECT_CODES["drop"])  # drop the put of scratch word inj_gidx
INJ_CORRUPT = tl.constexpr(F.INJECT_CODES["corrupt"])  # write that word with a wrong tag


# --------------------------------------------------------------------------- machine bits


@triton.jit
def _now(INTERP: tl.constexpr, LO: tl.constexpr = False):
    """globaltimer in ns (32 ns steps on the H200), or with LO its low 32 bits alone (the
    trace record's stamps, kda_kernel.trace.widen); 0 in the interpreter."""
    if INTERP:
        t = tl.full([], 0, tl.int32 if LO else tl.int64)
    elif LO:
        t = tl.inline_asm_elementwise(
            "mov.u32 $0, %globaltimer_lo;", "=r", [], dtype=tl.int32, is_pure=False, pack=1
        )
    else:
        t = tl.inline_asm_elementwise(
            "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
        )
    return t


@triton.jit
def _stamp_now(WATCHDOG: tl.constexpr, INTERP: tl.constexpr):
    """A stamp for the trace record: the low half of globaltimer, one register live where
    the whole time took two; the whole time where the watchdog measures waits with it.

    The record keeps 32-bit words (the host widens them, kda_kernel.trace.widen): with 64-bit
    words the traced build ran +3.6 to +3.8 % over the untraced one at 4x4, with 32-bit
    words +2.2 to +3.3 %, a median +2.7 % of ten paired runs (H200 runs 59 to 63; 352
    instructions over the untraced build, not 488)."""
    return _now(INTERP, not WATCHDOG)


@triton.jit
def _smid(INTERP: tl.constexpr):
    if INTERP:
        s = tl.full([], -1, tl.int32)
    else:
        s = tl.inline_asm_elementwise(
            "mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1
        )
    return s


@triton.jit
def _backoff(SLEEP_NS: tl.constexpr, INTERP: tl.constexpr):
    # between tries, as the seed's s_sleep 1: keeps ~200 polling CTAs off the L2 a little
    if not INTERP:  # noqa: SIM102 (constexpr branches: Triton folds each on its own)
        if SLEEP_NS > 0:
            tl.inline_asm_elementwise(
                f"nanosleep.u32 {SLEEP_NS}; mov.u32 $0, 0;",
                "=r",
                [],
                dtype=tl.int32,
                is_pure=False,
                pack=1,
            )


@triton.jit
def _ask_l2(p, ASM: tl.constexpr):
    """One asm request a lane of p (no result): ASM names the address $1."""
    tl.inline_asm_elementwise(
        ASM + " mov.u32 $0, 0;", "=r,l", [p], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def _prefetch_group(w_in, rg, INTERP: tl.constexpr):
    """Ask L2 for in_proj rows 16 rg .. (one 229 KB run), a ``prefetch.global.L2`` a line."""
    if not INTERP:
        ln = tl.minimum(tl.arange(0, 2048), LINES_A_GROUP - 1)
        _ask_l2(w_in + rg.to(tl.int64) * (ROWS * HIDDEN) + ln * 64, "prefetch.global.L2 [$1];")


@triton.jit
def _bulk_prefetch_group(w_in, rg, INTERP: tl.constexpr):
    """The same run handed to the copy engine: one ``cp.async.bulk.prefetch.L2`` of 896 B
    a thread (256 threads, one lane each), so the SM issues 256 requests, not 1792."""
    if not INTERP:
        ln = tl.arange(0, 256)
        _ask_l2(w_in + rg.to(tl.int64) * (ROWS * HIDDEN) + ln * BULK_ELEMS, BULK_ASM)


@triton.jit
def _warp_jitter(JITTER_NS: tl.constexpr, INTERP: tl.constexpr):
    """Warp w of the CTA sleeps about w * JITTER_NS ns (a stress build, Build.jitter_ns):
    warps that run in step hide a missing barrier between one warp's load and another's
    store; staggered, the later warps load after the earlier ones stored."""
    if not INTERP:  # noqa: SIM102 (constexpr branches: Triton folds each on its own)
        if JITTER_NS > 0:
            tl.inline_asm_elementwise(
                "{ .reg .u32 w; mov.u32 w, %tid.x; shr.u32 w, w, 5; "
                f"mul.lo.u32 w, w, {JITTER_NS}; nanosleep.u32 w; mov.u32 $0, 0; }}",
                "=r",
                [],
                dtype=tl.int32,
                is_pure=False,
                pack=1,
            )


@triton.jit
def _sleep_until(t_end, SLEEP_NS: tl.constexpr, INTERP: tl.constexpr):
    while _now(INTERP) < t_end:
        _backoff(SLEEP_NS, INTERP)


@triton.jit
def _ev(tr, k, v):
    """Set word k of the register-resident trace record. The word index is made here, at
    each use, not once before the roles: a record index made in the entry block had the
    compiler compute the thread-index terms of every role's layouts there, live through
    the whole kernel: a traced build with no stamp in it ran 3 to 13 % slower than the
    untraced one (run 26, ``trace_level=3``; docs/measurements/kernel_h200.md)."""
    return tl.where(tl.arange(0, tr.shape[0]) == k, v.to(tr.dtype), tr)


@triton.jit
def _stamp(tr, k, TRACE: tl.constexpr, INTERP: tl.constexpr):
    if (TRACE == 1) | (TRACE == 2) | (TRACE == 4):  # see Build.trace_level
        tr = _ev(tr, k, _stamp_now(False, INTERP))
    return tr


@triton.jit
def _poll_rec(tr, k, t0, t1, nr, TRACE: tl.constexpr):
    if (TRACE == 1) | (TRACE == 4):  # see Build.trace_level
        tr = _ev(tr, k, t0)
        tr = _ev(tr, k + 1, t1)
    if TRACE == 1:
        tr = _ev(tr, k + 2, nr)
    return tr


@triton.jit
def _bf16r(x):
    """Round fp32 to the nearest bf16 (ties to even), staying fp32. Integer arithmetic:
    the GPU's cast rounds, the interpreter's truncates; this is the same on both."""
    b = x.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _dot(a, b, acc, INTERP: tl.constexpr):
    """bf16 x bf16 -> fp32 on the tensor cores; the interpreter's bf16 dot is wrong (numpy has
    no bf16), so there the exact bf16 values go through an fp32 dot instead."""
    if INTERP:
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _to_bf16(x):
    return _bf16r(x).to(tl.bfloat16)


@triton.jit
def _value(w):
    """The fp32 value of a (value, tag) pair."""
    return (w & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)


# --------------------------------------------------------------------------- mailboxes


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


# --------------------------------------------------------------------------- attn CTAs


@triton.jit
def _sources(blocks, blk_sm, blk_sr, pre, t, tm, c0, NB):
    """Tokens t's sources for columns c0 .. c0+128, [TB, 16, 128] fp32: blocks, then the
    prefix row ``pre`` (p' = bf16(prefix + delta), fp32 [TB, 128]), zero past NS and for
    tokens off ``tm``. (It spells out ``_blocks``'s load: written as a call to it, ptxas
    scheduled the L = 4 builds differently, which run 74 did not measure.)"""
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
        # delta twice (seen on the H200, runs 42 to 45: an unrelated store at the kernel's entry
        # moved the warps enough to corrupt PART in 13 of 56 attn CTAs at 1x1). BARRIER is
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
    loads behind it, one load round trip a source (8.3 us at S = 4, run 24)."""
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
    issue, the last one's satisfaction and the retries of all (kda_kernel.trace: the mix's
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
    # nor its end stamp: kda_kernel.trace starts that build's mix where the slice ended)
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
                0,
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
    # measured that shape's all-to-all at 1.57 us a round against 1.02 with one pair a
    # thread (runs 72, 73); in the K1, 0.1 to 0.7 us a launch (run 74: 1x1 44.77 -> 44.10)
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


# --------------------------------------------------------------------------- gemv CTAs


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
    it. Measured alone (bench.kernel_gemv_probe --tma, run 67): with [16, 512] tiles the
    copy engine read a gemv CTA's two groups 3.2 us a launch faster than the FMA form's
    loads, and with [16, 128] tiles 7.8 us slower. In the K1, four [16, 128] tiles a step
    were slower at every S (run 68); this form, its descriptor made once a CTA (run 70),
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
        # slices splits K over the warps, summed once. Measured on the H200 (runs 21, 22):
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
    (MAXS) is FMA_MAX_S or less holds no tensor-core code. (Runs 22 and 23 saw a traced
    L = 1 build with the split dot compiled in, never run, give wrong outputs on the H200,
    cause unknown; since run 33 the L = 1 builds run S = 4 on it, and the checked launches
    of runs 33 to 35 were all right: docs/measurements/kernel_h200.md.)"""
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


# --------------------------------------------------------------------------- kda tasks


@triton.jit
def _kda_task(
    i,
    n,
    pid,
    tag,
    dead,
    tr,
    w_fb,
    conv_w,
    conv_st,
    cs_seq,
    cs_dim,
    cs_tok,
    a_log,
    dt_bias,
    on_w,
    rstate,
    rs_seq,
    st_idx,
    st_stride,
    num_acc,
    core_out,
    scratch,
    alarm,
    onorm_eps,
    lower_bound,
    budget_ns,
    max_retry,
    inj_mode,
    inj_gidx,
    OFF_PROJ,
    OFF_QK,
    OFF_ONRM,
    L: tl.constexpr,
    LP: tl.constexpr,
    SL: tl.constexpr,
    SLP: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
):
    req = i // TASKS_A_REQ
    h = (i // NVCH) % NH
    ch = i % NVCH
    task = i.to(tl.int64)
    base = EV_TASK0 + n * TASK_STRIDE
    if TRACE:
        tr = _ev(tr, base, i)
    tr = _stamp(tr, base + TASK_T + 0, TRACE, INTERP)
    # ---- k.stage: everything that needs no hand-off, issued before the first poll
    acc_idx = tl.load(num_acc + req) - 1
    slot_c = tl.load(st_idx + req * st_stride)
    slot0 = tl.load(st_idx + req * st_stride + acc_idx)
    c = tl.arange(0, 64)  # owned conv channels: q, k, v x 16 (48 used)
    cm = c < 3 * VCH
    part = c // VCH
    d = c % VCH
    chan = part * PROJ + h * HD + ch * VCH + d
    p4 = tl.arange(0, 4)
    cw = tl.load(conv_w + chan[:, None] * CONV_W + p4[None, :], mask=cm[:, None], other=0.0)
    csb = conv_st + tl.maximum(slot_c, 0).to(tl.int64) * cs_seq + chan[:, None] * cs_dim
    win = tl.load(
        csb + (acc_idx + p4[None, :]) * cs_tok,
        mask=cm[:, None] & (p4 < CONV_W - 1)[None, :],
        other=0.0,
    ).to(tl.float32)
    po = tl.arange(0, SLP)
    keep = cm[:, None] & (po < SL - L)[None, :]
    old = tl.load(csb + (acc_idx + 1 + po[None, :]) * cs_tok, mask=keep, other=0.0)
    vr = tl.arange(0, VCH)
    kk = tl.arange(0, HD)
    rows = (h * HD + ch * VCH + vr[:, None]) * HD + kk[None, :]
    st = tl.load(rstate + tl.maximum(slot0, 0).to(tl.int64) * rs_seq + rows)
    fb = tl.load(w_fb + (h * HD + kk[:, None]) * HD + kk[None, :])  # f_b rows of head h
    aa = tl.exp(tl.load(a_log + h))
    dtb = tl.load(dt_bias + h * HD + kk)
    jj = tl.arange(0, LP)
    slots = tl.load(st_idx + req * st_stride + jj, mask=jj < L, other=0)
    onw = tl.load(on_w + ch * VCH + vr).to(tl.float32)
    # every k.stage load is performed before any thread stores: k.conv overwrites conv
    # state that the window loads read and k.recur may overwrite the initial state rows,
    # from other threads (other layouts); without this the compiler may sink the loads
    # past the polls (volatile loads order nothing else) and a thread reads new values
    tl.debug_barrier()
    tr = _stamp(tr, base + TASK_T + 1, TRACE, INTERP)
    # ---- k.conv: the owned channels' L inputs, conv update, q / k out through QK
    gx = OFF_PROJ + (req * L + jj[None, :]) * NPROJ + chan[:, None]
    mx = cm[:, None] & (jj < L)[None, :]
    w, tr, dead = _poll(
        scratch,
        gx,
        mx,
        tag,
        dead,
        alarm,
        pid,
        4,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        SLEEP_NS,
        QUIET,
        tr,
        base + TASK_POLL + 0,
        TRACE,
    )
    xin = tl.where(mx, _value(w), 0.0)  # [64 chan, LP tokens]
    y = tl.zeros([64, LP], tl.float32)
    for j in tl.static_range(L):
        acc = tl.zeros([64], tl.float32)
        for q in tl.static_range(CONV_W):
            wq = tl.sum(tl.where((p4 == q)[None, :], cw, 0.0), 1)
            if j + q < CONV_W - 1:
                col = tl.sum(tl.where((p4 == j + q)[None, :], win, 0.0), 1)
            else:
                col = tl.sum(tl.where((jj == j + q - (CONV_W - 1))[None, :], xin, 0.0), 1)
            acc += wq * col
        yj = _bf16r(acc * tl.sigmoid(acc))
        y = tl.where((jj == j)[None, :], yj[:, None], y)
    # new conv state: the kept history, then the L inputs (only for a real slot)
    live_c = slot_c > 0
    tl.store(csb + po[None, :] * cs_tok, old, mask=keep & live_c)
    tl.store(csb + (SL - L + jj[None, :]) * cs_tok, xin.to(tl.bfloat16), mask=mx & live_c)
    gq = (
        OFF_QK
        + ((req * NH + h) * L + jj[None, :]) * (2 * HD)
        + part[:, None] * HD
        + (ch * VCH + d[:, None])
    )
    dead = _put(
        scratch,
        gq,
        y,
        (c < 2 * VCH)[:, None] & (jj < L)[None, :],
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
    # v rows to registers: row v is channel 2 VCH + v (a select, not a reshape: tensors
    # this small are replicated across threads and a select leaves nothing to layouts)
    vch = vr + 2 * VCH
    sel = c[None, :, None] == vch[:, None, None]
    vv = tl.sum(tl.where(sel, y[None, :, :], 0.0), 1)  # [16 v rows, LP]
    tr = _stamp(tr, base + TASK_T + 2, TRACE, INTERP)
    # ---- k.gates: f_a, the head's q / k (all 8 chunks' puts), beta
    j16 = tl.arange(0, 16)
    gf = OFF_PROJ + (req * L + j16[:, None]) * NPROJ + FA_0 + kk[None, :]
    mf = (j16 < L)[:, None] & (kk >= 0)[None, :]
    w, tr, dead = _poll(
        scratch,
        gf,
        mf,
        tag,
        dead,
        alarm,
        pid,
        5,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        SLEEP_NS,
        QUIET,
        tr,
        base + TASK_POLL + 3,
        TRACE,
    )
    fa = tl.where(mf, _value(w), 0.0)
    r2 = tl.arange(0, 2 * LP)  # row 2 j: q of token j, 2 j + 1: k
    gk = (
        OFF_QK
        + ((req * NH + h) * L + r2[:, None] // 2) * (2 * HD)
        + (r2[:, None] % 2) * HD
        + (kk[None, :])
    )
    mk = (r2 < 2 * L)[:, None] & (kk >= 0)[None, :]
    w, tr, dead = _poll(
        scratch,
        gk,
        mk,
        tag,
        dead,
        alarm,
        pid,
        6,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        0,
        QUIET,
        tr,
        base + TASK_POLL + 6,
        TRACE,
    )
    qk = tl.where(mk, _value(w), 0.0)
    # beta's L words polled over 16 lanes (L live) and moved to the jj layout by a masked
    # sum: a poll on a [LP] tensor (one element at L = 1) made the traced L = 1 build spill
    gb = OFF_PROJ + (req * L + j16) * NPROJ + BETA_0 + h
    w, tr, dead = _poll(
        scratch,
        gb,
        j16 < L,
        tag,
        dead,
        alarm,
        pid,
        7,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        0,
        QUIET,
        tr,
        base + TASK_POLL + 9,
        TRACE,
    )
    b16 = tl.where(j16 < L, _value(w), 0.0)
    beta = tl.sigmoid(tl.sum(tl.where(j16[None, :] == jj[:, None], b16[None, :], 0.0), 1))
    g1 = _bf16r(_dot(fa.to(tl.bfloat16), tl.trans(fb), tl.zeros([16, HD], tl.float32), INTERP))
    decay = tl.exp(lower_bound * tl.sigmoid(aa * (g1 + dtb[None, :])))
    sc = tl.rsqrt(tl.sum(qk * qk, 1) + 1e-6)
    sc = tl.where(r2 % 2 == 0, sc * (HD**-0.5), sc)
    qk = qk * sc[:, None]
    tr = _stamp(tr, base + TASK_T + 3, TRACE, INTERP)
    # ---- k.recur: 16 state rows over the L tokens, a state written a token
    live0 = slot0 > 0
    st = tl.where(live0, st, 0.0)
    o_t = tl.zeros([LP, VCH], tl.float32)  # [token, v row]
    for j in tl.static_range(L):
        qj = tl.sum(tl.where((r2 == 2 * j)[:, None], qk, 0.0), 0)
        kj = tl.sum(tl.where((r2 == 2 * j + 1)[:, None], qk, 0.0), 0)
        dj = tl.sum(tl.where((j16 == j)[:, None], decay, 0.0), 0)
        vj = tl.sum(tl.where((jj == j)[None, :], vv, 0.0), 1)
        bj = tl.sum(tl.where(jj == j, beta, 0.0), 0)
        st = st * dj[None, :]
        p = tl.sum(st * kj[None, :], 1)
        st = st + ((vj - p) * bj)[:, None] * kj[None, :]
        o = tl.where(live0, _bf16r(tl.sum(st * qj[None, :], 1)), 0.0)
        o_t = tl.where((jj == j)[:, None], o[None, :], o_t)
        sj = tl.sum(tl.where(jj == j, slots, 0), 0)
        tl.store(
            rstate + sj.to(tl.int64) * rs_seq + rows,
            st,
            mask=(vr >= 0)[:, None] & (live0 & (sj > 0)),
        )
    ss = tl.sum(o_t * o_t, 1)  # [LP]
    go = OFF_ONRM + ((req * NH + h) * L + jj) * NVCH + ch
    dead = _put(
        scratch, go, ss, jj < L, tag, dead, alarm, pid, task, inj_mode, inj_gidx, WATCHDOG, INTERP
    )
    tr = _stamp(tr, base + TASK_T + 4, TRACE, INTERP)
    # ---- k.norm: every chunk's partial norm and the g2 rows in one batch -> core_out
    q32 = tl.arange(0, 32)  # 0..7: ONRM chunks, 16..31: g2 of the 16 owned rows
    isn = q32 < NVCH
    isg = q32 >= 16
    gn = tl.where(
        isn[None, :],
        OFF_ONRM + ((req * NH + h) * L + jj[:, None]) * NVCH + q32[None, :],
        OFF_PROJ + (req * L + jj[:, None]) * NPROJ + G2_0 + h * HD + ch * VCH + (q32[None, :] - 16),
    )
    mn = (jj < L)[:, None] & (isn | isg)[None, :]
    w, tr, dead = _poll(
        scratch,
        gn,
        mn,
        tag,
        dead,
        alarm,
        pid,
        8,
        task,
        budget_ns,
        max_retry,
        False,
        WATCHDOG,
        INTERP,
        0,
        QUIET,
        tr,
        base + TASK_POLL + 12,
        TRACE,
    )
    got = tl.where(mn, _value(w), 0.0)
    ssum = tl.sum(tl.where(isn[None, :], got, 0.0), 1)  # [LP]
    rn = tl.rsqrt(ssum / HD + onorm_eps)
    g2c = vr + 16
    pick = q32[None, None, :] == g2c[None, :, None]
    g2 = tl.sum(tl.where(pick, got[:, None, :], 0.0), 2)  # [LP, 16]
    yo = o_t * rn[:, None] * onw[None, :] * tl.sigmoid(g2)
    tl.store(
        core_out + (req * L + jj[:, None]) * PROJ + h * HD + ch * VCH + vr[None, :],
        _to_bf16(yo),
        mask=(jj < L)[:, None] & (vr >= 0)[None, :],
    )
    tr = _stamp(tr, base + TASK_T + 5, TRACE, INTERP)
    return tr, dead


# --------------------------------------------------------------------------- the kernel


@triton.jit(do_not_specialize=["R", "NB", "slot", "inj_mode", "inj_gidx", "budget_ns", "max_retry"])
def kda_pre_k1(
    prefix,
    delta,
    blocks,
    blk_sm,
    blk_sr,
    ares_nw,
    ares_qk,
    in_nw,
    w_in,
    w_fb,
    conv_w,
    conv_st,
    cs_seq,
    cs_dim,
    cs_tok,
    a_log,
    dt_bias,
    on_w,
    rstate,
    rs_seq,
    st_idx,
    st_stride,
    num_acc,
    core_out,
    scratch,
    xbuf,
    epoch,
    slot,
    alarm,
    trace,
    inj_mode,
    inj_gidx,
    budget_ns,
    max_retry,
    eps,
    out_eps,
    onorm_eps,
    lower_bound,
    R,
    NB,
    L: tl.constexpr,
    SL: tl.constexpr,
    KDA0: tl.constexpr,
    HAS_DELTA: tl.constexpr,
    TB: tl.constexpr,
    LP: tl.constexpr,
    SLP: tl.constexpr,
    NEV: tl.constexpr,
    MAXT: tl.constexpr,
    BK: tl.constexpr,
    NSTAGE: tl.constexpr,
    FMA: tl.constexpr,
    PREFETCH: tl.constexpr,
    EARLY: tl.constexpr,
    TC_BK: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
    SRC_MIN_S: tl.constexpr,
    MAXS: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    PF_DELAY: tl.constexpr,
    ALIGN: tl.constexpr,
    JITTER_NS: tl.constexpr,
    SLICE_BARRIER: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    TMA_NS: tl.constexpr = 0,
    GATE_LOCAL: tl.constexpr = False,
    BLK_FIRST: tl.constexpr = False,
    MSQ_SP: tl.constexpr = 16,
    MIX_MIN_S: tl.constexpr = 1,
    NW_FIRST: tl.constexpr = False,
):
    # R and NB are run-time values (one compiled kernel serves every R and nb of an L)
    S, OFF_WGT, OFF_MSQ, OFF_XRDY, OFF_PROJ, OFF_QK, OFF_ONRM = layout(R, L, NB, ALIGN)
    OFF_PART = S * 0
    pid = tl.program_id(0)
    ep = tl.load(epoch)
    tag = (ep % EPOCH_MOD) * TAG_SLOTS + slot + 1  # step_tag, in int32 as in the seed
    dead = pid * 0
    tr = tl.zeros([NEV], tl.int32)  # 32-bit words: see _stamp_now
    # the header's words are set at the end (see _ev); the start time is read here
    t_start = _now(INTERP) if TRACE else 0
    _warp_jitter(JITTER_NS, INTERP)
    if pid < NA:
        tr, dead = _attn(
            pid,
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
            HAS_DELTA,
            TB,
            SRC_MIN_S,
            WATCHDOG,
            TRACE,
            INTERP,
            SLEEP_NS,
            QUIET,
            SLICE_BARRIER,
            GATE_LOCAL,
            BLK_FIRST,
            MSQ_SP,
            MIX_MIN_S,
            NW_FIRST,
        )
    elif pid < NA + N_GEMV:
        tr, dead = _gemv(
            pid - NA,
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
            BK,
            NSTAGE,
            FMA,
            PREFETCH,
            EARLY,
            TC_BK,
            TC_SPLIT,
            MAXS,
            FMA_MAX_S,
            FMA_BY_S,
            PF_DELAY,
            WATCHDOG,
            TRACE,
            INTERP,
            SLEEP_NS,
            QUIET,
            TMA_NS,
        )
    # kda tasks: task i on CTA (i + KDA0) mod 256, every 256th task, in order
    i0 = ((pid - KDA0) % BLOCKS + BLOCKS) % BLOCKS
    ntask = pid * 0
    for n in tl.static_range(MAXT):
        i = i0 + n * BLOCKS
        if i < R * TASKS_A_REQ:
            _warp_jitter(JITTER_NS, INTERP)
            tr, dead = _kda_task(
                i,
                n,
                pid,
                tag,
                dead,
                tr,
                w_fb,
                conv_w,
                conv_st,
                cs_seq,
                cs_dim,
                cs_tok,
                a_log,
                dt_bias,
                on_w,
                rstate,
                rs_seq,
                st_idx,
                st_stride,
                num_acc,
                core_out,
                scratch,
                alarm,
                onorm_eps,
                lower_bound,
                budget_ns,
                max_retry,
                inj_mode,
                inj_gidx,
                OFF_PROJ,
                OFF_QK,
                OFF_ONRM,
                L,
                LP,
                SL,
                SLP,
                WATCHDOG,
                TRACE,
                INTERP,
                SLEEP_NS,
                QUIET,
            )
            ntask += 1
    if TRACE:
        tr = _ev(tr, EV_START, t_start)
        tr = _ev(tr, EV_SMID, _smid(INTERP))
        tr = _ev(tr, EV_TAG, tag)
        tr = _ev(tr, EV_NTASK, ntask)
        t_end = _now(INTERP)
        tr = _ev(tr, EV_END, t_end)
        tr = _ev(tr, EV_START_HI, t_start >> 32)
        tr = _ev(tr, EV_END_HI, t_end >> 32)
        tl.store(trace + pid * NEV + tl.arange(0, NEV), tr)
