"""Co-residency pre-flight: the residency arithmetic and the refusal of unsafe launches."""

from __future__ import annotations

import pytest

from kda_kernel.preflight import SmLimits, UnsafeLaunch, check, residency
from kda_sim.kernels.k1.config import LaunchConfig


def test_two_ctas_an_sm_at_128_registers() -> None:
    r = residency(128, 33 * 1024, 256, SmLimits())
    assert r.per_sm == 2 and r.slots == 264


def test_register_granularity() -> None:
    # 129 registers round up to 136 a thread (256 a warp): 8 warps take 34816 of 65536
    r = residency(129, 0, 256, SmLimits())
    assert r.per_sm == 1 and r.limited_by == "registers"


def test_shared_memory_counts_the_reserve() -> None:
    lim = SmLimits()
    half = lim.shared // 2
    assert residency(64, half - lim.shared_reserved_per_cta, 256, lim).per_sm == 2
    assert residency(64, half - lim.shared_reserved_per_cta + 1, 256, lim).per_sm == 1


def test_refuses_when_producers_can_never_be_resident() -> None:
    # one CTA an SM on a 40-SM part: the 56 attn CTAs alone outnumber the slots, and
    # every one of them polls the others' partial sums (an all-to-all)
    r = residency(200, 0, 256, SmLimits(sms=40))
    with pytest.raises(UnsafeLaunch, match="deadlock"):
        check(LaunchConfig(1, 1, 8), r)
    with pytest.raises(UnsafeLaunch, match="never be resident"):
        check(LaunchConfig(1, 1, 8), r, simulate=False)


def test_accepts_the_h200_budget() -> None:
    r = residency(128, 33 * 1024, 256, SmLimits())
    assert "finishes" in check(LaunchConfig(2, 2, 8), r)


def test_kda_tickets_keeps_the_static_requirement() -> None:
    """At one CTA an SM (132 resident) kda_tickets deadlocks from R = 2 as the static
    placement does: its tasks poll PROJ of gemv CTAs up to 252 (docs/whatif/ticket_k1.md).
    The simulated check finds it; the plain one refuses short of 256 and says why."""
    one_an_sm = residency(255, 0, 256, SmLimits())
    assert one_an_sm.slots == 132
    cfg = LaunchConfig(2, 1, 8, kda_tickets=True)
    with pytest.raises(UnsafeLaunch, match="deadlock"):
        check(cfg, one_an_sm)
    with pytest.raises(UnsafeLaunch, match="kda_tickets keeps the static requirement"):
        check(cfg, one_an_sm, simulate=False)
    assert "finishes" in check(cfg, residency(128, 33 * 1024, 256, SmLimits()))
