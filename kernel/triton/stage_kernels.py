"""Each role of K1 as its own small launch, for the interpreter and for debugging.

The persistent kernel's roles spin on each other; these wrappers run one role over just
the programs of that role, with the mailboxes it reads filled beforehand (by the previous
role's wrapper, or by the host from the reference). Same device functions as the kernel.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.attn import _attn
from kda_kernel.triton.constexprs import COUNTER_WORD, EPOCH_MOD, EV_NTASK, TAG_SLOTS
from kda_kernel.triton.gemv import _gemv
from kda_kernel.triton.kda import _kda_task
from kda_kernel.triton.mailbox import layout
from kda_kernel.triton.record import _ev
from kda_kernel.triton.static_tasks import _kda_static_tasks
from kda_kernel.triton.tickets import _kda_ticket_loop


@triton.jit
def attn_only(
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
    epoch,
    slot,
    alarm,
    R,
    NB,
    eps,
    out_eps,
    L: tl.constexpr,
    HAS_DELTA: tl.constexpr,
    NEV: tl.constexpr,
    WATCHDOG: tl.constexpr,
    TB: tl.constexpr,
    SRC_MIN_S: tl.constexpr,
    ALIGN: tl.constexpr,
    GATE_LOCAL: tl.constexpr = False,
    BLK_FIRST: tl.constexpr = False,
    MSQ_SP: tl.constexpr = 16,
    MIX_MIN_S: tl.constexpr = 1,
    NW_FIRST: tl.constexpr = False,
):
    S, OFF_WGT, OFF_MSQ, OFF_XRDY, _, _, _ = layout(R, L, NB, ALIGN)
    pid = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([NEV], tl.int64)
    _attn(
        pid,
        tag,
        pid * 0,
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
        1 << 40,
        1 << 20,
        0,
        -1,
        S,
        NB,
        0,
        OFF_WGT,
        OFF_MSQ,
        OFF_XRDY,
        HAS_DELTA,
        TB,
        SRC_MIN_S,
        WATCHDOG,
        False,
        True,
        0,
        True,
        True,
        GATE_LOCAL,
        BLK_FIRST,
        MSQ_SP,
        MIX_MIN_S,
        NW_FIRST,
    )


@triton.jit
def gemv_only(
    w_in,
    scratch,
    xbuf,
    epoch,
    slot,
    alarm,
    R,
    NB,
    g0,
    L: tl.constexpr,
    NEV: tl.constexpr,
    BK: tl.constexpr,
    FMA: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    ALIGN: tl.constexpr,
    TMA_NS: tl.constexpr = 0,
):
    S, _, _, OFF_XRDY, OFF_PROJ, _, _ = layout(R, L, NB, ALIGN)
    pid = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([NEV], tl.int64)
    _gemv(
        g0 + pid,
        tag,
        pid * 0,
        tr,
        w_in,
        xbuf,
        scratch,
        alarm,
        1 << 40,
        1 << 20,
        0,
        -1,
        S,
        OFF_XRDY,
        OFF_PROJ,
        BK,
        2,
        FMA,
        0,
        True,
        BK,
        TC_SPLIT,
        16,
        FMA_MAX_S,
        FMA_BY_S,
        0,
        False,
        False,
        True,
        0,
        True,
        TMA_NS,
    )


@triton.jit
def kda_only(
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
    epoch,
    slot,
    alarm,
    R,
    NB,
    onorm_eps,
    lower_bound,
    L: tl.constexpr,
    LP: tl.constexpr,
    SL: tl.constexpr,
    SLP: tl.constexpr,
    NEV: tl.constexpr,
    ALIGN: tl.constexpr,
):
    _, _, _, _, OFF_PROJ, OFF_QK, OFF_ONRM = layout(R, L, NB, ALIGN)
    i = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([NEV], tl.int64)
    _kda_task(
        i,
        0,
        i,
        tag,
        i * 0,
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
        1 << 40,
        1 << 20,
        0,
        -1,
        OFF_PROJ,
        OFF_QK,
        OFF_ONRM,
        L,
        LP,
        SL,
        SLP,
        False,
        False,
        True,
        0,
        True,
    )


@triton.jit
def kda_tickets_only(
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
    epoch,
    slot,
    alarm,
    trace,
    R,
    NB,
    onorm_eps,
    lower_bound,
    NPROG: tl.constexpr,
    L: tl.constexpr,
    LP: tl.constexpr,
    SL: tl.constexpr,
    SLP: tl.constexpr,
    NEV: tl.constexpr,
    ALIGN: tl.constexpr,
    UNROLL: tl.constexpr = 0,
    KDA0: tl.constexpr = 0,
    PROBE_STATIC_ITEM: tl.constexpr = False,
):
    """kda_tickets' loop alone over NPROG programs, PROJ filled beforehand: each program
    takes tickets from the counter (word COUNTER_WORD past the epoch) until one is past
    the tasks (the first ``UNROLL`` in unrolled copies), and leaves its record (task ids,
    takes and their counts) in ``trace``. PROBE_STATIC_ITEM: each take runs the static
    placement's task over the NPROG programs (``Build.probe`` "static_item")."""
    _, _, _, _, OFF_PROJ, OFF_QK, OFF_ONRM = layout(R, L, NB, ALIGN)
    pid = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([NEV], tl.int32)
    tr, _, ntask = _kda_ticket_loop(
        pid,
        tag,
        pid * 0,
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
        1 << 40,
        1 << 20,
        0,
        -1,
        OFF_PROJ,
        OFF_QK,
        OFF_ONRM,
        NPROG,
        L,
        LP,
        SL,
        SLP,
        False,
        1,
        True,
        0,
        True,
        0,
        UNROLL,
        KDA0,
        PROBE_STATIC_ITEM,
    )
    tr = _ev(tr, EV_NTASK, ntask)
    tl.store(trace + pid * NEV + tl.arange(0, NEV), tr)


@triton.jit
def kda_static_only(
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
    epoch,
    slot,
    alarm,
    trace,
    R,
    NB,
    onorm_eps,
    lower_bound,
    NPROG: tl.constexpr,
    KDA0: tl.constexpr,
    MAXT: tl.constexpr,
    L: tl.constexpr,
    LP: tl.constexpr,
    SL: tl.constexpr,
    SLP: tl.constexpr,
    NEV: tl.constexpr,
    ALIGN: tl.constexpr,
    PROBE_TAKE: tl.constexpr = False,
):
    """The static placement alone over NPROG programs (task i on program (i + KDA0) mod
    NPROG, at most MAXT a program), PROJ filled beforehand; with PROBE_TAKE a take on the
    counter before each task (``Build.probe`` "take"). Leaves each program's record in
    ``trace`` (NEV words: the ticket layout, for the takes)."""
    _, _, _, _, OFF_PROJ, OFF_QK, OFF_ONRM = layout(R, L, NB, ALIGN)
    pid = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([NEV], tl.int32)
    tr, _, ntask = _kda_static_tasks(
        pid,
        tag,
        pid * 0,
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
        1 << 40,
        1 << 20,
        0,
        -1,
        OFF_PROJ,
        OFF_QK,
        OFF_ONRM,
        NPROG,
        KDA0,
        MAXT,
        L,
        LP,
        SL,
        SLP,
        False,
        1,
        True,
        0,
        True,
        0,
        PROBE_TAKE,
    )
    tr = _ev(tr, EV_NTASK, ntask)
    tl.store(trace + pid * NEV + tl.arange(0, NEV), tr)
