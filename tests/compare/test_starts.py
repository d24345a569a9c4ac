"""Where a fit starts from the traces (kda_sim/compare/starts.py): a streamed gemv's cost
from its measured busy times, ``cold_code`` from a CTA's later tasks, the mix's cost from
the gap between its two polls."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.compare.calibrate import correct_costs, prepare
from kda_sim.compare.starts import (
    between_polls,
    cold_start,
    gap_start,
    growth_start,
    launch_units_of,
    poll_gaps,
    streamed_stages,
    streamed_start,
)
from kda_sim.engine import simulate
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig


def test_streamed_gemv_starts_compute_bound_from_the_measured_stage_times(h200) -> None:
    """Under streamed_weights the gemv's cost line starts through the measured gemv busy
    times (each form apart); without it the profile is left as it is."""
    traces_dir = Path(__file__).resolve().parents[2] / "traces"
    trs = [
        prepare(read_kernel_trace(traces_dir / f"k1_h200_R1_L{L}.json.gz"), f"1x{L}")
        for L in (1, 2, 4)
    ]
    assert streamed_stages(trs[0].cfg) == {"gemv0": "gemv", "gemv1": "gemv"}
    prof = h200.with_params(above_gemv=(3.0, *h200.costs["gemv"]))
    assert streamed_start(prof, trs) is prof
    got = streamed_start(replace(prof, streamed_weights=True), trs)

    def busy(tr) -> float:
        return statistics.median(v for (_, s, _), v in tr.busy.items() if s in ("gemv0", "gemv1"))

    # S = 1 and 2 are the FMA form: a line through both; S = 4 the tensor-core form alone
    assert got.cost("gemv", 1) == pytest.approx(busy(trs[0]), rel=1e-6)
    assert got.cost("gemv", 2) == pytest.approx(busy(trs[1]), rel=1e-6)
    assert got.cost("gemv", 4) == pytest.approx(busy(trs[2]), rel=1e-6)


def test_cold_code_starts_as_measured_from_a_ctas_later_tasks(h200) -> None:
    truth = h200.with_params(cold_code=700.0)
    tr = prepare(simulate(LaunchConfig(4, 1), truth, occupancy=2).timeline, "4x1", align=False)
    got = cold_start(h200, [tr]).latency_ns["cold_code"]
    assert got == pytest.approx(700.0, abs=100.0)
    one_task = prepare(
        simulate(LaunchConfig(1, 1), truth, occupancy=2).timeline, "1x1", align=False
    )
    assert cold_start(h200, [one_task]) is h200  # no CTA runs a second task


def test_only_the_mix_computes_between_two_polls_of_a_stage() -> None:
    # the kda gates' polls follow one another with nothing computed between
    for cfg in (LaunchConfig(1, 1), LaunchConfig(4, 4)):
        assert between_polls(cfg) == {("mix", "WGT", "MSQ"): ("mix", 9.0 * cfg.S)}


def test_the_mix_cost_starts_where_the_simulated_gap_is_the_measured_one(h200) -> None:
    """A launch simulated with a known mix cost is the 'measured' one: from any other cost
    the start recovers the known one at both shapes (two points, one line)."""
    truth = h200.with_params(cost_mix=(900.0, 40.0))
    cfgs = (LaunchConfig(1, 1), LaunchConfig(1, 2))
    trs = [prepare(simulate(c, truth, occupancy=2).timeline, str(c), align=False) for c in cfgs]
    gaps = poll_gaps(trs[0].tl)[("mix", "WGT", "MSQ")]
    assert len(gaps) == 56  # every attn CTA
    sims = [simulate(c, h200, occupancy=2).timeline for c in cfgs]
    got = gap_start(h200, trs, sims)
    assert got.costs["mix"] == pytest.approx((900.0, 40.0), abs=20.0)
    again = gap_start(got, trs, [simulate(c, got, occupancy=2).timeline for c in cfgs])
    assert again.costs["mix"] == pytest.approx((900.0, 40.0), abs=20.0)


def test_share_start_reads_the_factor_from_ctas_that_share_a_unit() -> None:
    from kda_sim.compare.starts import share_start, sharing_by_order, sharing_ctas
    from kda_sim.importers.chrome import read_kernel_trace
    from kda_sim.machine.profile import load_profile

    traces = Path(__file__).resolve().parents[2] / "traces"
    tr = prepare(read_kernel_trace(traces / "k1_h200_R2_L1.json.gz"), "2x1")
    shared = sharing_ctas(tr, "gemv")
    # 197 gemv CTAs on 132 SMs: the SMs that hold two of them
    assert 100 < len(shared) < 197 and all(56 <= c < 253 for c in shared)
    prof = load_profile("h200-k1")
    assert share_start(prof, [tr]).unit_share == 0.0  # nothing named: nothing read
    got = share_start(replace(prof, unit_shared=("gemv",)), [tr]).unit_share
    # 2x1: the gemv CTAs that share an SM are about 14 % busier than those alone in the
    # bundled trace (8 to 15 % in traces of other builds)
    assert 0.04 < got < 0.3
    # from 3 tokens on: 2x1's gemv (S = 2) is not slowed, so it gives no factor
    late = replace(prof, unit_shared=("gemv",), unit_share_from=3.0)
    assert share_start(late, [tr]).unit_share == 0.0
    assert share_start(replace(late, unit_share_from=2.0), [tr]).unit_share == got
    # by order: the first of each SM's two gemv CTAs (the lower number) and the later
    first, later = sharing_by_order(tr, "gemv")
    assert first | later == shared and not first & later
    assert len(first) == len(later)  # two gemv CTAs an SM that shares
    gemv = replace(prof, unit_shared=("gemv",))
    assert share_start(gemv, [tr]).unit_share_skew == 0.0  # not asked for: none read
    ordered = share_start(gemv, [tr], by_order=True)
    assert ordered.unit_share == got  # the mean factor as before
    # at two tokens the two gemv CTAs of an SM are about as busy (2x1: skew under 0.1);
    # at four the later is the busier (2x2: 1.19 against 1.12 times a gemv CTA alone)
    assert ordered.unit_share_skew < 0.1
    tr4 = prepare(read_kernel_trace(traces / "k1_h200_R2_L2.json.gz"), "2x2")
    ordered = share_start(gemv, [tr4], by_order=True)
    assert 0.1 < ordered.unit_share_skew < 0.5
    got = ordered.unit_share
    assert ordered.share_factor(True) < 1.0 + got < ordered.share_factor(False)
    # the skew from four tokens on: read from the S >= 4 traces alone (2x1's left out)
    from4 = replace(gemv, unit_share_skew_from=4.0)
    both = share_start(from4, [tr, tr4], by_order=True)
    assert both.unit_share_skew == share_start(from4, [tr4], by_order=True).unit_share_skew
    assert both.unit_share_skew != share_start(gemv, [tr, tr4], by_order=True).unit_share_skew


def test_k_recurs_growth_is_recovered_from_launches_made_with_it(h200) -> None:
    """Launches simulated with a known growth of k.recur (and another cost line) are the
    'measured' ones: from none, the start finds the growth and the line; and a cost pass
    from there leaves them near it (its step is the line's, not the grown compute's)."""
    truth = h200.with_params(**{"growth_k.recur": 0.04, "cost_k.recur": (100.0, 900.0)})
    cfgs = [LaunchConfig(R, L) for R, L in ((1, 2), (4, 2), (1, 4), (2, 4))]
    assert [launch_units_of(c)["k.recur"] for c in cfgs] == [2.0, 8.0, 4.0, 8.0]
    trs = [prepare(simulate(c, truth, occupancy=2).timeline, str(c), align=False) for c in cfgs]
    sims = [simulate(c, h200, occupancy=2).timeline for c in cfgs]
    got = growth_start(h200, trs, sims, ["k.recur"])
    assert got.cost_growth["k.recur"] == pytest.approx(0.04, abs=0.005)
    assert got.cost("k.recur", 4) == pytest.approx(truth.cost("k.recur", 4), rel=0.05)
    again = correct_costs(got, trs, [simulate(c, got, occupancy=2).timeline for c in cfgs])
    for L in (2, 4):
        assert again.cost("k.recur", L) == pytest.approx(truth.cost("k.recur", L), rel=0.05)
    # one S at each L tells no growth from the line: left as it was
    assert growth_start(h200, trs[::2], sims[::2], ["k.recur"]) is h200
