"""The compiled Triton K1 (sm_90, compiled here without a GPU): every poll reads each mailbox
once a try, and decides on every thread's copy; the gemv issues weights before its poll;
the tensor-core gemv is compiled only into builds that can run it.

Two GPU-only bugs hid here and gave wrong outputs on the H200 while the interpreter was
exact: Triton re-materialised a volatile ``tt.load`` in a second layout (two loads of one
mailbox at two moments, one checked, the other used), and small poll tensors were
replicated across warps with the tag check reading one replica. A third, the first one
again on plain data: the slice's load of prefix, made once a layout, could follow another
warp's store of p' over it. These tests read the compiler's own output, so a Triton
upgrade or a kernel edit that brings any of them back fails.
"""

from __future__ import annotations

import re
from functools import cache

import pytest

pytest.importorskip("triton")

from kda_kernel.triton.launch import Build
from kda_kernel.triton.trace_layout import max_tasks

# an L = 1 build serving S <= fma_max_s only, with the bulk L2 prefetch: one compile (20 to
# 40 s here) for the tensor-core test and the prefetch test
SMALL = Build.default(1, 1, 8, rmax=Build.default(1, 1, 8).fma_max_s, prefetch=3)

# poll sites in program order, as PROTOCOL.md's roles have them:
# attn: PART (gate), WGT and MSQ (mix); gemv: XRDY; kda task: PROJ (conv), PROJ f_a, QK,
# PROJ beta, ONRM + PROJ g2 (norm), unrolled once a task slot of the CTA
ATTN_POLLS, GEMV_POLLS, KDA_POLLS = 3, 1, 5


def _sites(b: Build) -> int:
    # each poll loads once before its loop and once inside it
    return 2 * (ATTN_POLLS + GEMV_POLLS + KDA_POLLS * max_tasks(b.rmax))


def _ttgir(watchdog: bool, early: bool = True, quiet: bool = True, L: int = 2) -> str:
    return _ttgir_of(Build.default(1, L, 8, watchdog=watchdog, early=early, quiet=quiet))


@cache
def _ttgir_of(b: Build) -> str:
    """One compile a build for the whole module (a compile takes 20 to 50 s here)."""
    from kda_kernel.triton.offline import compile_k1

    return compile_k1(b).asm["ttgir"]


def _mailbox_loads(ir: str) -> list[str]:
    """The asm text of every mailbox load in the TTGIR."""
    return re.findall(r'tt\.elementwise_inline_asm "([^"]*ld\.relaxed\.gpu\.global\.b64[^"]*)"', ir)


@pytest.mark.parametrize("watchdog", [False, True])
def test_each_poll_site_loads_its_pairs_once(watchdog: bool) -> None:
    ir = _ttgir(watchdog)
    loads = _mailbox_loads(ir)
    assert len(loads) == _sites(Build.default(1, 2, 8)), "a mailbox load was duplicated or lost"


def test_gate_local_polls_part_in_the_mix_and_no_wgt() -> None:
    # gate_local: the mix's PART poll, a token a batch in a loop, takes the place of the
    # gate's PART poll and the mix's WGT poll; each still loads once a try, predicated
    b = Build.default(1, 2, 8, gate_local=True)
    loads = _mailbox_loads(_ttgir_of(b))
    assert len(loads) == _sites(b) - 2, "a mailbox load was duplicated or lost"
    assert all("@p ld.relaxed" in a for a in loads)
    assert len(re.findall(r"bar\.red\.popc\.u32", _ttgir_of(b))) >= _sites(b) - 2


def test_the_gate_poll_backs_off_only_in_its_lab_build() -> None:
    # as shipped the gate's PART poll spins (one nanosleep site fewer than the long polls
    # that back off); Build.gate_sleep_ns gives it one of its own, every load kept
    shipped = Build.default(1, 2, 8, watchdog=False)
    backed = Build.default(1, 2, 8, watchdog=False, gate_sleep_ns=128)
    sleeps = [len(re.findall(r"nanosleep\.u32 128", _ttgir_of(b))) for b in (shipped, backed)]
    assert sleeps[0] >= 1 and sleeps[1] == sleeps[0] + 1
    assert len(_mailbox_loads(_ttgir_of(backed))) == _sites(backed)


def test_the_gate_waits_before_its_poll_only_in_its_lab_build() -> None:
    # Build.gate_delay_ns: a clock wait (with its own nanosleep) before the PART poll's first
    # try; the shipped build has no such code and the lab build's polls are the same
    shipped = Build.default(1, 2, 8, watchdog=False)
    delayed = Build.default(1, 2, 8, watchdog=False, gate_delay_ns=4000, gate_stagger_ns=2500)
    sleeps = [len(re.findall(r"nanosleep\.u32 128", _ttgir_of(b))) for b in (shipped, delayed)]
    assert sleeps[1] == sleeps[0] + 1
    assert "4000" in _ttgir_of(delayed) and "2500" in _ttgir_of(delayed)
    assert len(_mailbox_loads(_ttgir_of(delayed))) == _sites(delayed)


def test_the_kda_tasks_wait_before_norm_and_the_onrm_put_only_in_their_lab_build() -> None:
    # Build.norm_delay_ns / norm_stagger_ns: a clock wait before k.norm's first try, and
    # Build.onrm_put_delay_ns one before k.recur's ONRM put, each once a task slot; the
    # shipped build has neither and the lab build's polls are the same
    shipped = Build.default(1, 2, 8, watchdog=False)
    late = Build.default(
        1, 2, 8, watchdog=False, norm_delay_ns=4000, norm_stagger_ns=2500, onrm_put_delay_ns=3000
    )
    sleeps = [len(re.findall(r"nanosleep\.u32 128", _ttgir_of(b))) for b in (shipped, late)]
    assert sleeps[1] == sleeps[0] + 2 * max_tasks(late.rmax)
    assert all(str(n) in _ttgir_of(late) for n in (4000, 2500, 3000))
    assert len(_mailbox_loads(_ttgir_of(late))) == _sites(late)


def test_the_rolled_recur_build_loops_over_the_tokens_once_a_task_slot() -> None:
    # Build.recur_rolled: k.recur's token loop stays a loop (one more scf.for a task slot)
    # and its state store is one in the code where the shipped build has one a token; the
    # polls are the same
    shipped = Build.default(1, 2, 8, watchdog=False)
    rolled = Build.default(1, 2, 8, watchdog=False, recur_rolled=1)
    ir = [_ttgir_of(b) for b in (shipped, rolled)]
    slots, L = max_tasks(rolled.rmax), rolled.cfg.L
    assert ir[1].count("scf.for") == ir[0].count("scf.for") + slots
    assert ir[1].count("tt.store") == ir[0].count("tt.store") - (L - 1) * slots
    assert len(_mailbox_loads(ir[1])) == _sites(rolled)


def test_no_plain_volatile_mailbox_load_in_production() -> None:
    # the watchdog build reads its alarm word and (fault check) a put's old word plainly;
    # the production build polls through the asm load only
    assert "isVolatile" not in _ttgir(False)


@pytest.mark.parametrize("watchdog", [False, True])
def test_every_try_counts_bad_pairs_over_all_threads(watchdog: bool) -> None:
    ir = _ttgir(watchdog)
    counts = len(re.findall(r"bar\.red\.popc\.u32", ir))
    assert counts >= _sites(Build.default(1, 2, 8))


def _first_weight_load_before_xrdy_poll(ir: str) -> bool:
    # the attn role comes first in the program and loads no weights, so the first
    # evict_first tensor load is the gemv's; the XRDY poll is the only 1-D one of 256 lanes
    weights = ir.index("evictionPolicy = evict_first : tensor<16x")
    xrdy = re.search(r"ld\.relaxed\.gpu\.global\.b64.*tensor<256x!tt\.ptr<i64>", ir)
    assert xrdy is not None, "no XRDY poll in the compiled kernel"
    return weights < xrdy.start()


def test_first_group_weights_are_issued_before_the_xrdy_poll() -> None:
    """The seed's order (PROTOCOL.md): the gemv CTA's first weights are in flight while it
    polls XRDY. The control build (early=False) loads them after, so the check can fail."""
    assert _first_weight_load_before_xrdy_poll(_ttgir(False))
    assert not _first_weight_load_before_xrdy_poll(_ttgir(False, early=False))


def test_masked_lanes_load_nothing() -> None:
    """Quiet polls (the default): every mailbox load is predicated on its lane's mask, so a
    mostly masked poll tensor does not re-read cell 0 on every try; the control build
    (quiet=False) loads on every lane, so the check can fail."""
    quiet, loud = _mailbox_loads(_ttgir(False)), _mailbox_loads(_ttgir(False, quiet=False))
    assert quiet and all("@p ld.relaxed" in a for a in quiet)
    assert loud and not any("@p ld" in a for a in loud)


def test_tensor_core_gemv_only_where_it_can_run() -> None:
    # S = R L <= rmax L: a build whose largest S is fma_max_s or less never takes the
    # tensor-core form, and holds none of its code (a traced L = 1 build with the split
    # dot compiled in, never run, gave wrong outputs on the H200: docs/kernel-h200.md,
    # "Traps"); an L = 1 build of rmax 4 serves S = 4 on the tensor cores, an L = 2 build
    # S = 8
    # the form's marks: its cp.async pipeline and its batched [slices, 16, k] dot (the kda
    # tasks have a 2-D dot of their own, and no async copies)
    split = re.compile(r"tensor<\d+x16x\d+xbf16, #ttg\.dot_op")
    small = _ttgir_of(SMALL)
    assert "async_copy_global_to_local" not in small
    assert not split.search(small)
    for ir in (_ttgir(False, L=1), _ttgir(False)):
        assert "async_copy_global_to_local" in ir
        assert split.search(ir)


def _bulk_prefetches(b: Build) -> list[tuple[int, int]]:
    """(position in the TTGIR, bytes) of each bulk L2 prefetch of a build."""
    ir = _ttgir_of(b)
    return [
        (m.start(), int(m.group(1)))
        for m in re.finditer(r"cp\.async\.bulk\.prefetch\.L2\.global \[\$1\], (\d+);", ir)
    ]


def test_bulk_prefetch_covers_each_group_once() -> None:
    """prefetch=3: group rg0 asked of L2 before the XRDY poll and rg1 after it, each as one
    256-lane request over the whole 229 KB run; the default build asks nothing."""
    from kda_sim.kernels.k1.constants import BF16, HIDDEN, ROWS

    assert _bulk_prefetches(Build.default(1, 1, 8)) == []
    got = _bulk_prefetches(SMALL)
    assert [n for _, n in got] == [ROWS * HIDDEN * BF16 // 256] * 2
    ir = _ttgir_of(SMALL)
    xrdy = re.search(r"ld\.relaxed\.gpu\.global\.b64.*tensor<256x!tt\.ptr<i64>", ir)
    assert xrdy is not None
    assert got[0][0] < xrdy.start() < got[1][0]
    # one lane a thread: the request tensor is 256 wide on a 256-thread CTA
    assert re.search(r"cp\.async\.bulk\.prefetch[^\n]*tensor<256x!tt\.ptr<bf16>", ir)


# loads of what the CTA later overwrites, by the kernel's names: prefix in the slice
# (_p_prime: pre from at), the conv window and kept history and the recurrent state rows
# in the kda task's k.stage (win, old, st)
IN_PLACE_LOADS = re.compile(r"%(?:pre_\d+ = tt\.load %at_|(?:win|old|st)_\d+ = tt\.load )")


def _loads_before_stores_without_barrier(ir: str) -> tuple[int, list[str]]:
    """How many in-place loads there are, and those whose next store comes before any
    barrier."""
    lines = ir.splitlines()
    n, bad = 0, []
    for i, ln in enumerate(lines):
        if not IN_PLACE_LOADS.search(ln):
            continue
        n += 1
        for nxt in lines[i + 1 :]:
            if "gpu.barrier" in nxt:
                break
            if "tt.store" in nxt:
                bad.append(ln.strip()[:80])
                break
    return n, bad


@pytest.mark.parametrize("L", [1, 2])  # L = 1: where it showed; both compiled for other tests
def test_what_a_cta_overwrites_is_read_in_every_layout_before_any_thread_stores(L: int) -> None:
    """The slice loads prefix, adds delta and stores p' back over it; k.conv and k.recur
    store the conv and recurrent state over what k.stage loaded. Triton may load a value
    once in each layout its uses want; a warp that loaded a prefix row after another warp's
    store added delta twice (on the H200: docs/kernel-h200.md, "Traps"). Each such load
    must meet a barrier before the next store."""
    n, bad = _loads_before_stores_without_barrier(_ttgir(False, L=L))
    # prefix in both slice forms, and win, old, st once a kda task slot
    assert n >= 2 + 3 * max_tasks(4), f"only {n} in-place loads found: names changed?"
    assert not bad, f"loads with a store before the next barrier: {bad}"


def test_the_in_place_check_sees_a_missing_barrier() -> None:
    """The check above, on the build whose slice barrier is off, finds the prefix loads."""
    _, bad = _loads_before_stores_without_barrier(
        _ttgir_of(Build.default(1, 1, 8, slice_barrier=False))
    )
    assert bad and all("%pre_" in b for b in bad), bad
