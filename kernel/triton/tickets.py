"""kda_tickets (``LaunchConfig.kda_tickets``): the kda tasks taken from an atomic ticket
counter by every CTA once its static role is done, as the model's ``kda_sim/kernels/k1/
tickets.py`` (docs/whatif/ticket_k1.md says what the build must do to compare).

A take is one scalar ``atomic_add`` (relaxed, gpu scope): Triton issues a scalar atomic
from one thread and hands its result to the CTA through shared memory behind a barrier.
Nothing orders on it: the tasks' hand-offs keep their own acquire polls and release puts.
Ticket t < R * 96 is task t; the CTA whose take returns R * 96 + NPROG - 1 (each of the
NPROG CTAs ends on one ticket past the items, that one last) stores 0, so the counter is
zero for the next launch without the host touching it (graph-safe).

With ``UNROLL`` = 0 the task code is one copy in a dynamic loop: the model charges a
ticket item no ``cold_code``. That build spills (18 registers at L = 1, 64 to 68 above, at
128 a thread): the compiler keeps the task's loop-invariant address terms live across the
loop, where the static placement's unrolled copies compute them at their use. With
``UNROLL`` = U > 0 the first U takes run unrolled copies of the task, as the static
placement's ``static_range`` does (the model charges copies 1.. ``cold_code``, as it
charges the static second task), and the loop after them only runs a CTA's takes past U
(kept so that any number of takes is right; the preheader's spills land after the last
copy, so U is one more than the items a CTA is expected to run).

PROBE_STATIC_ITEM (``Build.probe`` "static_item", a lab experiment: docs/whatif/
ticket_k1.md, "The experiment, built") keeps every take and this code, but the item a
CTA runs for its m-th take is the one the static placement gives it as its m-th task: a
CTA takes once a static task and once past them, R * 96 + NPROG takes in all, as here,
and the one that returns the last ticket resets the counter. The placement is static, the
code path the ticket build's.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import (
    EV_NTAKE,
    EV_TAKE0,
    TAKE_ISSUE,
    TAKE_RETURN,
    TAKE_STRIDE,
    TAKE_TICKET,
    TASKS_A_REQ,
    TICKET_TAKE_SLOTS,
    TICKET_TASK_SLOTS,
)
from kda_kernel.triton.kda import _kda_task
from kda_kernel.triton.machine import _stamp_now, _warp_jitter
from kda_kernel.triton.record import _ev

# a slot index past every record: a task or take beyond the record's slots writes nothing
_NO_SLOT = tl.constexpr(1 << 20)


@triton.jit
def _take(counter, m, tr, TRACE: tl.constexpr, INTERP: tl.constexpr):
    """One take: the ticket, shared with the CTA; take m of this CTA recorded in its slot
    (issue and return stamps, the ticket) while it has one."""
    if TRACE:
        t0 = _stamp_now(False, INTERP)
    t = tl.atomic_add(counter, 1, sem="relaxed", scope="gpu")
    if TRACE:
        t1 = _stamp_now(False, INTERP)
        slot = tl.where(m < TICKET_TAKE_SLOTS, m, _NO_SLOT)
        base = EV_TAKE0 + slot * TAKE_STRIDE
        if (TRACE == 1) | (TRACE == 2) | (TRACE == 4):  # see Build.trace_level
            tr = _ev(tr, base + TAKE_ISSUE, t0)
            tr = _ev(tr, base + TAKE_RETURN, t1)
        tr = _ev(tr, base + TAKE_TICKET, t)
    return t, tr


@triton.jit
def _take_item(
    counter,
    pid,
    m,
    tr,
    items,
    NPROG: tl.constexpr,
    KDA0: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    PROBE_STATIC_ITEM: tl.constexpr,
):
    """Take m of this CTA (``_take``) and the item it runs: the ticket; under
    PROBE_STATIC_ITEM the task the static placement gives this CTA as its m-th (task i on
    CTA (i + KDA0) mod NPROG; past the items once it has run them all), made to depend on
    the ticket (never negative) so that it is known when the take returns, as a ticket
    is; there the launch's last taker resets the counter, as the loop's end does without
    the probe (where the item past a CTA's last need not be the last ticket)."""
    t, tr = _take(counter, m, tr, TRACE, INTERP)
    if PROBE_STATIC_ITEM:
        if t == items + NPROG - 1:
            tl.store(counter, 0)
        i = ((pid - KDA0) % NPROG + NPROG) % NPROG + m * NPROG
        t = tl.where(t >= 0, i, t)
    return t, tr


@triton.jit
def _kda_ticket_loop(
    pid,
    tag,
    dead,
    tr,
    counter,
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
    NPROG: tl.constexpr,
    L: tl.constexpr,
    LP: tl.constexpr,
    SL: tl.constexpr,
    SLP: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TRACE: tl.constexpr,
    INTERP: tl.constexpr,
    SLEEP_NS: tl.constexpr,
    QUIET: tl.constexpr,
    JITTER_NS: tl.constexpr,
    UNROLL: tl.constexpr = 0,
    KDA0: tl.constexpr = 0,
    PROBE_STATIC_ITEM: tl.constexpr = False,
):
    """Take tickets until one is past the items, running task t for each ticket t below
    them (the first ``UNROLL`` in unrolled copies, the rest in the loop); returns the
    record, the watchdog's flag and the tasks this CTA ran. PROBE_STATIC_ITEM: t is the
    static placement's item for the take instead (``_take_item``)."""
    items = R * TASKS_A_REQ
    ntask = pid * 0
    t, tr = _take_item(
        counter, pid, ntask, tr, items, NPROG, KDA0, TRACE, INTERP, PROBE_STATIC_ITEM
    )
    for u in tl.static_range(UNROLL):
        if t < items:
            _warp_jitter(JITTER_NS, INTERP)
            tr, dead = _kda_task(
                t,
                u,
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
            t, tr = _take_item(
                counter, pid, ntask, tr, items, NPROG, KDA0, TRACE, INTERP, PROBE_STATIC_ITEM
            )
    while t < items:
        _warp_jitter(JITTER_NS, INTERP)
        slot = tl.where(ntask < TICKET_TASK_SLOTS, ntask, _NO_SLOT)
        tr, dead = _kda_task(
            t,
            slot,
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
        t, tr = _take_item(
            counter, pid, ntask, tr, items, NPROG, KDA0, TRACE, INTERP, PROBE_STATIC_ITEM
        )
    if not PROBE_STATIC_ITEM:  # noqa: SIM102 (a compile-time if; under it _take_item resets)
        if t == items + NPROG - 1:  # the last take of the launch: every CTA has seen the end
            tl.store(counter, 0)
    if TRACE:
        tr = _ev(tr, EV_NTAKE, ntask + 1)
    return tr, dead, ntask
