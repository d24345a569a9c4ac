"""The trace record: a register tensor of 32-bit words, set where each stamp is made and
flushed once at the end of the kernel (layout: ``trace_layout.py``).
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.machine import _stamp_now


@triton.jit
def _ev(tr, k, v):
    """Set word k of the register-resident trace record. The word index is made here, at
    each use, not once before the roles: a record index made in the entry block had the
    compiler compute the thread-index terms of every role's layouts there, live through
    the whole kernel: a traced build with no stamp in it ran 3 to 13 % slower than the
    untraced one (``trace_level=3``)."""
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
