"""The protocol constants and the trace / alarm record layouts, as constexprs the
device code reads (their values live in ``kda_sim/constants.py``,
``kda_kernel/triton/trace_layout.py`` and ``kda_kernel/triton/alarm_layout.py``).
"""

from __future__ import annotations

import triton.language as tl

from kda_kernel import faults as F
from kda_kernel.triton import alarm_layout as A
from kda_kernel.triton import ctrl_layout as CTRL
from kda_kernel.triton import trace_layout as T
from kda_kernel.triton.limits import MAX_NB as _MAX_NB
from kda_sim.kernels.k1 import constants as C

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
MAX_NB = tl.constexpr(_MAX_NB)
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
TICKET_TASK_SLOTS = tl.constexpr(T.TICKET_TASK_SLOTS)
TICKET_TAKE_SLOTS = tl.constexpr(T.TICKET_TAKE_SLOTS)
EV_TAKE0 = tl.constexpr(T.EV_TAKE0)
TAKE_ISSUE = tl.constexpr(T.TAKE_ISSUE)
TAKE_RETURN = tl.constexpr(T.TAKE_RETURN)
TAKE_TICKET = tl.constexpr(T.TAKE_TICKET)
TAKE_STRIDE = tl.constexpr(T.TAKE_STRIDE)
EV_NTAKE = tl.constexpr(T.EV_NTAKE)
COUNTER_WORD = tl.constexpr(CTRL.COUNTER_WORD)
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
