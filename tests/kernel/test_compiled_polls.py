"""The compiled Triton K1 (sm_90, compiled here without a GPU): every poll reads each mailbox
once a try, and decides on every thread's copy.

Two GPU-only bugs hid here and gave wrong outputs on the H200 while the interpreter was
exact: Triton re-materialised a volatile ``tt.load`` in a second layout (two loads of one
mailbox at two moments, one checked, the other used), and small poll tensors were
replicated across warps with the tag check reading one replica. These tests read the
compiler's own output, so a Triton upgrade or a kernel edit that brings either back fails.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

pytest.importorskip("triton")

from kernel.launch import Build
from kernel.trace_layout import max_tasks

# poll sites in program order, as PROTOCOL.md's roles have them:
# attn: PART (gate), WGT and MSQ (mix); gemv: XRDY; kda task: PROJ (conv), PROJ f_a, QK,
# PROJ beta, ONRM + PROJ g2 (norm), unrolled once a task slot of the CTA
ATTN_POLLS, GEMV_POLLS, KDA_POLLS = 3, 1, 5


def _sites(b: Build) -> int:
    # each poll loads once before its loop and once inside it
    return 2 * (ATTN_POLLS + GEMV_POLLS + KDA_POLLS * max_tasks(b.rmax))


@cache
def _ttgir(watchdog: bool) -> str:
    from kernel.offline import compile_k1

    return compile_k1(Build(1, 2, 8, watchdog=watchdog)).asm["ttgir"]


@pytest.mark.parametrize("watchdog", [False, True])
def test_each_poll_site_loads_its_pairs_once(watchdog: bool) -> None:
    ir = _ttgir(watchdog)
    loads = re.findall(r'tt\.elementwise_inline_asm "ld\.relaxed\.gpu\.global\.b64', ir)
    assert len(loads) == _sites(Build(1, 2, 8)), "a mailbox load was duplicated or lost"


def test_no_plain_volatile_mailbox_load_in_production() -> None:
    # the watchdog build reads its alarm word and (fault check) a put's old word plainly;
    # the production build polls through the asm load only
    assert "isVolatile" not in _ttgir(False)


@pytest.mark.parametrize("watchdog", [False, True])
def test_every_try_counts_bad_pairs_over_all_threads(watchdog: bool) -> None:
    ir = _ttgir(watchdog)
    counts = len(re.findall(r"bar\.red\.popc\.u32", ir))
    assert counts >= _sites(Build(1, 2, 8))
