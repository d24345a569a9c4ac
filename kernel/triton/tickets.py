"""kda_tickets (``LaunchConfig.kda_tickets``): the kda tasks taken from an atomic ticket
counter by every CTA once its static role is done, as the model's ``kda_sim/kernels/k1/
tickets.py`` (docs/whatif/ticket_k1.md says what the build must do to compare).

A take is one scalar ``atomic_add`` (relaxed, gpu scope): Triton issues a scalar atomic
from one thread and hands its result to the CTA through shared memory behind a barrier.
Nothing orders on it: the tasks' hand-offs keep their own acquire polls and release puts.
Ticket t < R * 96 is task t; the CTA whose take returns R * 96 + NPROG - 1 (each of the
NPROG CTAs ends on one ticket past the items, that one last) stores 0, so the counter is
zero for the next launch without the host touching it (graph-safe).

The task code is one copy in a dynamic loop (not unrolled a slot, as the static
placement's ``static_range``): the model charges a ticket item no ``cold_code``.
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
):
    """Take tickets until one is past the items, running task t for each ticket t below
    them; returns the record, the watchdog's flag and the tasks this CTA ran."""
    items = R * TASKS_A_REQ
    ntask = pid * 0
    t, tr = _take(counter, ntask, tr, TRACE, INTERP)
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
        t, tr = _take(counter, ntask, tr, TRACE, INTERP)
    if t == items + NPROG - 1:  # the last take of the launch: every CTA has seen the end
        tl.store(counter, 0)
    if TRACE:
        tr = _ev(tr, EV_NTAKE, ntask + 1)
    return tr, dead, ntask
