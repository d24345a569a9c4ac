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
  it is off by default because every form measured slower on the H200: 45 MB of weights
  in flight at kernel start slow the attn CTAs' own loads, the critical path into XRDY,
  and the gemv groups take no less time after it. NVIDIA loads need not retire in order,
  so either way a poll never waits behind weights (the role rule holds trivially);
* every poll pair is loaded by inline asm and counted stale over every thread's copy
  (``mailbox.py``: ``_load_pairs``, ``_count_bad``): Triton otherwise re-materialises a
  volatile load in a second layout and checks one replica of a replicated tensor. QUIET
  (the default) predicates each load on its lane's mask and reads the XRDY flags once a
  CTA: masked lanes and replicas otherwise re-read a few hot L2 lines thousands of times a
  try;
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

The device code lives a concern a module: ``mailbox`` (put, poll), ``record`` (the trace
record), ``machine`` (clocks, sleeps, prefetch), ``attn``, ``gemv`` and ``kda`` (the roles);
this module holds the kernel itself.

Build switches (constexpr): WATCHDOG bounds every wait by a globaltimer budget and records
the first one a CTA gives up on, and with it the fault injection (inj_mode: drop or corrupt
one put); TRACE stamps every stage boundary and poll site into a register-resident record
of 32-bit words flushed once at the end; GATE_LOCAL is the protocol's variant
``gate_local``: no gate stage and no WGT hand-off, every attn CTA's mix polls PART for
every token and computes all the weights itself (``attn._local_weights``); INTERP swaps the
inline PTX for stand-ins so the Triton interpreter can run it (see ``interp.py``);
KDA_TICKETS is the schedule ``LaunchConfig.kda_tickets``: after its role every CTA takes
kda tasks from a ticket counter (``tickets.py``) instead of the static placement
(``static_tasks.py``); PROBE_TAKE and PROBE_STATIC_ITEM are ``Build.probe``'s lab
experiments on the two (a take before each static task; the static placement's item for
each take), described where they are built.
Tuning constexprs (BK, NSTAGE, TC_BK, TC_SPLIT, TB, SRC_MIN_S, MIX_MIN_S, BLK_FIRST,
NW_FIRST, MSQ_SP, SLEEP_NS, EARLY, PREFETCH, QUIET; MAXS, the largest S a build serves) come
from ``launch.Build``, where each default says what measured it.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.attn import _attn
from kda_kernel.triton.constexprs import (
    BLOCKS,
    COUNTER_WORD,
    EPOCH_MOD,
    EV_END,
    EV_END_HI,
    EV_NTASK,
    EV_SMID,
    EV_START,
    EV_START_HI,
    EV_TAG,
    N_GEMV,
    NA,
    TAG_SLOTS,
)
from kda_kernel.triton.gemv import _gemv
from kda_kernel.triton.machine import _now, _smid, _warp_jitter
from kda_kernel.triton.mailbox import layout
from kda_kernel.triton.record import _ev
from kda_kernel.triton.static_tasks import _kda_static_tasks
from kda_kernel.triton.tickets import _kda_ticket_loop


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
    KDA_TICKETS: tl.constexpr = False,
    TICKET_UNROLL: tl.constexpr = 0,
    PROBE_TAKE: tl.constexpr = False,
    PROBE_STATIC_ITEM: tl.constexpr = False,
    GATE_SLEEP_NS: tl.constexpr = 0,
    GATE_DELAY_NS: tl.constexpr = 0,
    GATE_STAGGER_NS: tl.constexpr = 0,
    NORM_DELAY_NS: tl.constexpr = 0,
    NORM_STAGGER_NS: tl.constexpr = 0,
    ONRM_PUT_DELAY_NS: tl.constexpr = 0,
    RECUR_ROLLED: tl.constexpr = 0,
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
            GATE_SLEEP_NS,
            GATE_DELAY_NS,
            GATE_STAGGER_NS,
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
    if KDA_TICKETS:  # every CTA takes kda tasks from the counter (tickets.py)
        tr, dead, ntask = _kda_ticket_loop(
            pid,
            tag,
            dead,
            tr,
            epoch + COUNTER_WORD,
            R,
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
            BLOCKS,
            L,
            LP,
            SL,
            SLP,
            WATCHDOG,
            TRACE,
            INTERP,
            SLEEP_NS,
            QUIET,
            JITTER_NS,
            TICKET_UNROLL,
            KDA0,
            PROBE_STATIC_ITEM,
        )
    else:  # kda tasks: task i on CTA (i + KDA0) mod 256 (static_tasks.py)
        tr, dead, ntask = _kda_static_tasks(
            pid,
            tag,
            dead,
            tr,
            epoch + COUNTER_WORD,
            R,
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
            BLOCKS,
            KDA0,
            MAXT,
            L,
            LP,
            SL,
            SLP,
            WATCHDOG,
            TRACE,
            INTERP,
            SLEEP_NS,
            QUIET,
            JITTER_NS,
            PROBE_TAKE,
            NORM_DELAY_NS,
            NORM_STAGGER_NS,
            ONRM_PUT_DELAY_NS,
            RECUR_ROLLED,
        )
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
