"""Real vs simulated, CTA by CTA and stage by stage."""

from __future__ import annotations

import pytest

from kda_sim.compare.diff import compare_timelines
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig


def test_a_launch_against_itself_on_skewed_clocks(real22, sim22) -> None:
    tl, _ = real22
    c = compare_timelines(tl, sim22)
    assert not c.only_real and not c.only_sim and len(c.matched) > 1000
    assert c.makespan_err == pytest.approx(0.0, abs=0.02)
    # the clocks come back to within a hand-off latency: starts agree to ~1 % of the launch
    assert float(sum(c.start_err_frac() < 0.02)) / len(c.matched) > 0.9
    assert c.real_path is not None and c.sim_path is not None
    assert c.real_path.length == pytest.approx(c.sim_path.length, rel=0.02)
    s = c.summary(rows=3)
    # CTAs end within tens of ns of each other here, closer than the clocks align: which
    # one ends last (where the walk starts) may differ, so only the report is checked
    assert s["critical_path"]["part"] is not None and len(s["worst_starts"]) == 3


def test_a_slower_stage_shows_in_that_stage(h200, sim22) -> None:
    base, per = h200.costs["k.recur"]
    slow = simulate(LaunchConfig(2, 2), h200.with_params(**{"cost_k.recur": (base + 2000.0, per)}))
    c = compare_timelines(slow.timeline, sim22, align=False)
    assert c.by_stage["k.recur"]["dur_err_median_ns"] == pytest.approx(2000.0, rel=0.1)
    assert abs(c.by_stage["k.conv"]["dur_err_median_ns"]) < 500.0
    assert c.makespan_err is not None and c.makespan_err < -0.03  # the model is faster


def test_different_configurations_are_refused(sim22, h200) -> None:
    other = simulate(LaunchConfig(1, 1), h200).timeline
    with pytest.raises(InvalidInput, match="differ in R"):
        compare_timelines(sim22, other)
