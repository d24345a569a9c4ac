"""Every dispatch order of a launch with a few CTAs more than its slots: proved, or a
hanging order the engine replays, or why it is out of reach."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_sim.checks.deadlock_static import ANY_ORDER, any_order, check_static, slots_for
from kda_sim.checks.held_out import decide
from kda_sim.checks.waitgraph import waitgraph_of
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile


def _gpu(units: int):
    return replace(load_profile("h200"), units=units, name=f"h200-{units}")


@pytest.mark.parametrize("units", [255, 253])
@pytest.mark.parametrize("shape", [(1, 1), (2, 4)])
def test_r_at_most_2_finishes_for_every_order(units: int, shape: tuple[int, int]) -> None:
    # CTAs 253..255 do no work at R <= 2: whatever k <= 3 CTAs an order holds out, one
    # of them finishes and frees a slot
    cfg = LaunchConfig(*shape)
    slots = slots_for(cfg, _gpu(units), 1)
    assert slots.total == units
    g = waitgraph_of(cfg)
    v = any_order(g, slots, check_static(g, slots))
    assert v.finishes is True and v.assumption == ANY_ORDER
    assert "proved for every order" in v.note


@pytest.mark.parametrize("units", [255, 253])
def test_r_3_hangs_in_an_order_the_engine_replays(units: int) -> None:
    cfg = LaunchConfig(3, 1)
    gpu = _gpu(units)
    slots = slots_for(cfg, gpu, 1)
    g = waitgraph_of(cfg)
    assert check_static(g, slots).finishes  # in block order it finishes
    h = decide(g, slots)
    assert h.finishes is False and h.order is not None
    assert len(h.held) == 256 - units and h.order[-len(h.held) :] == h.held
    assert simulate(cfg, gpu, occupancy=1, order=h.order).deadlock
    v = any_order(g, slots, check_static(g, slots))
    assert v.finishes is False and "witness order" in v.note
    assert simulate(cfg, gpu, occupancy=1, order=v.order).deadlock


def test_too_many_held_out_says_why_it_is_not_decided() -> None:
    cfg = LaunchConfig(1, 1)
    slots = slots_for(cfg, _gpu(252), 1)
    h = decide(waitgraph_of(cfg), slots)
    assert h.finishes is None and "4 CTAs wait for a slot" in h.why
    assert "up to 3" in h.why
    # the simple adversary still decides this one: the 3 CTAs with no work dispatched last
    v = any_order(waitgraph_of(cfg), slots)
    assert v.finishes is False and simulate(cfg, _gpu(252), occupancy=1, order=v.order).deadlock


def test_several_xcds_are_not_claimed() -> None:
    # a stalled dispatch holds back other XCDs' blocks too: not the few-held-out case
    cfg = LaunchConfig(1, 1)
    gpu = replace(load_profile("mi355x"), units=248)
    h = decide(waitgraph_of(cfg), slots_for(cfg, gpu, 1))
    assert h.finishes is None and "XCDs" in h.why
