"""The protocol's floor (kda_sim.checks.floor): the model with its costs taken away."""

from __future__ import annotations

import pytest

from kda_sim.checks.floor import LADDER, Figures, ladder
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile

H200 = Figures(3910.0, 300.0, 190.0)


@pytest.mark.parametrize(
    "cfg", [LaunchConfig(1, 1, nw_first=True, onw_first=True), LaunchConfig(4, 4, onw_first=True)]
)
def test_each_rung_is_no_slower_and_the_bound_is_the_launch_bytes(cfg: LaunchConfig) -> None:
    rows = ladder(cfg, load_profile("h200-k1"), H200)["rows"]
    assert len(rows) == len(LADDER) + 1
    spans = [r["makespan_us"] for r in rows]
    assert spans == sorted(spans, reverse=True)  # taking a cost away never slows the launch
    assert spans[-1] < 0.7 * spans[0]
    # one bound for every rung: the same bytes at the datasheet's 4.8 TB/s (19.2 us at 1x1)
    assert len({round(r["bound_us"], 6) for r in rows}) == 1
    if cfg.S == 1:
        assert rows[0]["bound_us"] == pytest.approx(19.24, abs=0.05)
    for r in rows:
        assert r["x_bound"] == pytest.approx(r["makespan_us"] / r["bound_us"])
        assert r["handoff_latency_us"] > 0  # the protocol's own chain is left at the floor
        assert r["gemv_us"] > 0


def test_the_stream_rung_sets_the_measured_read() -> None:
    cfg = LaunchConfig(1, 1, nw_first=True, onw_first=True)
    slow = ladder(cfg, load_profile("h200-k1"), Figures(2000.0, 300.0, 190.0))["rows"]
    fast = ladder(cfg, load_profile("h200-k1"), H200)["rows"]
    assert slow[0] == fast[0] and slow[1] == fast[1]  # before the stream rung: the same
    assert slow[2]["makespan_us"] > fast[2]["makespan_us"] + 5  # 45 MB a group at 2 TB/s


def test_figures_the_gpu_cannot_have_are_refused() -> None:
    cfg = LaunchConfig(1, 1)
    with pytest.raises(InvalidInput, match=r"6 TB/s is above the datasheet's 4\.8 TB/s"):
        ladder(cfg, load_profile("h200"), Figures(6000.0, 300.0, 190.0))
    with pytest.raises(InvalidInput, match="latencies >= 0"):
        ladder(cfg, load_profile("h200"), Figures(3000.0, -1.0, 190.0))
