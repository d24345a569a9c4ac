"""The static placement of the kda tasks (the schedule without ``kda_tickets``): task i on
CTA (i + KDA0) mod NPROG, every NPROG-th task, in order, in unrolled copies.

PROBE_TAKE (``Build.probe`` "take", a lab experiment: docs/whatif/ticket_k1.md, "The
experiment, built") makes one take on the ticket counter before each task, as the
ticket build takes before each item, and ignores its ticket: the task is still the
placement's. So that the CTA waits for the take's return as a ticket item does (an unused
atomic's result is never waited for), the task index is made to depend on it
(``tl.where(t >= 0, i, t)``: a ticket is never negative, so the index is i). The CTA
whose take returns the launch's last ticket (R * 96 - 1: one take a task) stores 0, so
the counter is 0 for the next launch without the host (graph-safe), as under kda_tickets.
The takes are recorded in the ticket build's take slots (its record layout).
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import EV_NTAKE, TASKS_A_REQ
from kda_kernel.triton.kda import _kda_task
from kda_kernel.triton.machine import _warp_jitter
from kda_kernel.triton.record import _ev
from kda_kernel.triton.tickets import _take


@triton.jit
def _kda_static_tasks(
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
    KDA0: tl.constexpr,
    MAXT: tl.constexpr,
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
    PROBE_TAKE: tl.constexpr = False,
    NORM_DELAY_NS: tl.constexpr = 0,
    NORM_STAGGER_NS: tl.constexpr = 0,
    ONRM_PUT_DELAY_NS: tl.constexpr = 0,
    RECUR_ROLLED: tl.constexpr = 0,
):
    """This CTA's tasks under the static placement (at most MAXT); returns the record,
    the watchdog's flag and the tasks run."""
    i0 = ((pid - KDA0) % NPROG + NPROG) % NPROG
    ntask = pid * 0
    for n in tl.static_range(MAXT):
        i = i0 + n * NPROG
        if i < R * TASKS_A_REQ:
            _warp_jitter(JITTER_NS, INTERP)
            if PROBE_TAKE:
                t, tr = _take(counter, ntask, tr, TRACE, INTERP)
                i = tl.where(t >= 0, i, t)  # i, known only once the take returns
                if t == R * TASKS_A_REQ - 1:  # the launch's last take
                    tl.store(counter, 0)
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
                NORM_DELAY_NS,
                NORM_STAGGER_NS,
                ONRM_PUT_DELAY_NS,
                RECUR_ROLLED,
            )
            ntask += 1
    if PROBE_TAKE and TRACE:
        tr = _ev(tr, EV_NTAKE, ntask)  # one take a task, none past them
    return tr, dead, ntask
