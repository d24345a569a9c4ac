"""A kda task: the PROJ poll, short conv, gates, the QK and ONRM hand-offs, the recurrent
state update and the output norm of one (request, head, value chunk).
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import (
    BETA_0,
    CONV_W,
    EV_TASK0,
    FA_0,
    G2_0,
    HD,
    NH,
    NPROJ,
    NVCH,
    PROJ,
    TASK_POLL,
    TASK_STRIDE,
    TASK_T,
    TASKS_A_REQ,
    VCH,
)
from kda_kernel.triton.machine import _bf16r, _dot, _now, _sleep_until, _to_bf16, _value
from kda_kernel.triton.mailbox import _poll, _put
from kda_kernel.triton.record import _ev, _stamp


@triton.jit
def _recur_token(
    j, st, o_t, qk, decay, vv, beta, slots, r2, j16, jj, vr, rows, rstate, rs_seq, live0
):
    """k.recur's token j: the 16 state rows decayed and updated, the output row kept in
    ``o_t``, the state stored to its slot; returns (st, o_t)."""
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
    return st, o_t


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
    NORM_DELAY_NS: tl.constexpr = 0,
    NORM_STAGGER_NS: tl.constexpr = 0,
    ONRM_PUT_DELAY_NS: tl.constexpr = 0,
    RECUR_ROLLED: tl.constexpr = 0,
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
    if RECUR_ROLLED:
        # a lab build (Build.recur_rolled): the token loop as a loop, one copy of its code
        # whatever L, where the shipped build unrolls it into L copies
        for j in tl.range(0, L, loop_unroll_factor=1):
            st, o_t = _recur_token(
                j, st, o_t, qk, decay, vv, beta, slots, r2, j16, jj, vr, rows, rstate, rs_seq, live0
            )
    else:
        for j in tl.static_range(L):
            st, o_t = _recur_token(
                j, st, o_t, qk, decay, vv, beta, slots, r2, j16, jj, vr, rows, rstate, rs_seq, live0
            )
    ss = tl.sum(o_t * o_t, 1)  # [LP]
    go = OFF_ONRM + ((req * NH + h) * L + jj) * NVCH + ch
    # a lab build's wait (Build.onrm_put_delay_ns): the state's stores leave the SM first
    if ONRM_PUT_DELAY_NS > 0:  # noqa: SIM102 (constexpr branches)
        if not INTERP:
            _sleep_until(_now(INTERP) + ONRM_PUT_DELAY_NS, 128, INTERP)
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
    # a lab build's wait (Build.norm_delay_ns, norm_stagger_ns); the interpreter's clock
    # stands at 0
    if NORM_DELAY_NS + NORM_STAGGER_NS > 0:  # noqa: SIM102 (constexpr branches)
        if not INTERP:
            _sleep_until(_now(INTERP) + NORM_DELAY_NS + ch * NORM_STAGGER_NS, 128, INTERP)
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
