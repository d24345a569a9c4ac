"""A stage cost that grows with its launch's work (``GpuProfile.cost_growth``): K1's
k.recur, beside the launch's S tokens."""

from __future__ import annotations

import statistics

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.timeline.model import Timeline

GROWTH = 0.05  # a factor a token: 1.2 at S = 4, 1.8 at S = 16


def _recur(tl: Timeline) -> dict[tuple[int, int], float]:
    """(CTA, task) -> its k.recur span."""
    return {(c.cta, s.task): s.dur for c in tl.ctas for s in c.stages if s.name == "k.recur"}


def _grown(prof: GpuProfile) -> GpuProfile:
    return prof.with_params(**{"growth_k.recur": GROWTH})


@pytest.mark.parametrize("R, L", [(1, 4), (2, 2), (4, 1)])
def test_every_k_recur_is_longer_by_its_cost_times_the_growth_at_its_launchs_S(
    R: int, L: int
) -> None:
    """k.recur polls nothing, so its span is its compute and what follows it: each grows
    by the compute's cost times g x S, at every CTA of the launch, first task or second."""
    prof = load_profile("h200-k1")
    cfg = LaunchConfig(R, L)
    plain = _recur(simulate(cfg, prof).timeline)
    grown = _recur(simulate(cfg, _grown(prof)).timeline)
    assert plain.keys() == grown.keys()
    extra = prof.cost("k.recur", L) * GROWTH * cfg.S
    for k, d in plain.items():
        assert grown[k] - d == pytest.approx(extra, abs=1e-6)


def test_the_growth_follows_S_not_L_alone() -> None:
    """At one L, the k.recur of a launch of more tokens is the longer, as in the traces;
    without the growth the two are alike."""
    prof = load_profile("h200-k1")
    med = {
        (R, g): statistics.median(
            _recur(simulate(LaunchConfig(R, 2), _grown(prof) if g else prof).timeline).values()
        )
        for R in (1, 4)
        for g in (False, True)
    }
    assert med[(1, False)] == pytest.approx(med[(4, False)], rel=1e-9)
    cost = prof.cost("k.recur", 2)
    assert med[(4, True)] - med[(1, True)] == pytest.approx(cost * GROWTH * (8 - 2), abs=1e-6)


def test_a_jittered_launch_grows_its_k_recur_too() -> None:
    """A seeded run draws its costs as it goes (not the nominal table): the growth is
    applied there as well. One draw a compute either way, so the same seed's k.recur
    ratio is the growth's."""
    prof = load_profile("h200-k1")
    cfg = LaunchConfig(2, 2)
    plain = _recur(simulate(cfg, prof, seed=3).timeline)
    grown = _recur(simulate(cfg, _grown(prof), seed=3).timeline)
    ratio = statistics.median(grown[k] / plain[k] for k in plain)
    assert ratio == pytest.approx(1 + GROWTH * cfg.S, rel=0.05)


def test_no_growth_is_the_profile_as_it_was() -> None:
    """A growth of 0 is no growth: the profile, its identity and its launch as before."""
    prof = load_profile("h200-k1")
    zero = prof.with_params(**{"growth_k.recur": 0.0})
    assert zero.cost_growth == {} and zero.identity() == prof.identity()
    assert "cost_growth" not in prof.to_dict()
    cfg = LaunchConfig(4, 4)
    assert simulate(cfg, zero).timeline.makespan == simulate(cfg, prof).timeline.makespan
