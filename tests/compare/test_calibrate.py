"""Calibration: stage costs and machine parameters recovered from perturbed launches.

The full acceptance run (three shapes fitted, the rest predicted) takes minutes on two
cores: ``bench/compare_calibrate_synthetic.py``; here a small budget shows each piece
works and the profile file loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.compare.calibrate import (
    DEFAULT_SEARCH,
    apply_search,
    correct_costs,
    evaluate,
    fit_profile,
    fitted_profile_dict,
    prepare,
    write_profile,
)
from kda_sim.config import LaunchConfig
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import load_profile


@pytest.fixture(scope="module")
def slow_recur(h200, skew):
    """k.recur 1.5x slower, on skewed clocks: the truth a fit should find."""
    b, u = h200.costs["k.recur"]
    truth = h200.with_params(**{"cost_k.recur": (1.5 * b, 1.5 * u)})
    tl, _ = skew(simulate(LaunchConfig(1, 2), truth).timeline, 3)
    return truth, prepare(tl, "R1L2")


def test_cost_correction_recovers_a_scaled_stage(h200, slow_recur) -> None:
    truth, tr = slow_recur
    prof = h200
    for _ in range(2):
        prof = correct_costs(prof, [tr], [simulate(tr.cfg, prof).timeline])
    want = truth.cost("k.recur", 2)
    assert prof.cost("k.recur", 2) == pytest.approx(want, rel=0.05)
    assert prof.costs["k.conv"] == pytest.approx(h200.costs["k.conv"], rel=0.1)
    before = evaluate(h200, [tr])["R1L2"]
    after = evaluate(prof, [tr])["R1L2"]
    assert abs(after.makespan_err) < abs(before.makespan_err)


def test_fit_writes_a_profile_the_simulator_loads(tmp_path: Path, h200, slow_recur) -> None:
    _, tr = slow_recur
    res = fit_profile(h200, [tr], budget=3, cost_passes=1, progress=False)
    assert res.launches >= 4 and len(res.history) == 3
    d = fitted_profile_dict(res, h200, [tr])
    out = tmp_path / "fit.json"
    write_profile(d, out)
    prof = load_profile(str(out))
    assert prof.name == "h200-fitted" and "calibration" in prof.sources
    assert "R1L2" in json.loads(out.read_text())["sources"]["calibration"]
    assert simulate(tr.cfg, prof).timeline.makespan is not None


def test_search_parameters(h200) -> None:
    import numpy as np

    x = np.zeros(len(DEFAULT_SEARCH))
    x[DEFAULT_SEARCH.index("hbm_bytes_per_ns")] = np.log(2.0)
    p = apply_search(h200, x)
    assert p.hbm_bytes_per_ns == pytest.approx(2 * h200.hbm_bytes_per_ns)
    p = apply_search(
        h200, np.array([0.0, 0.0, np.log(2.0)]), ("hbm_bytes_per_ns", "poll", "visibility")
    )
    assert p.latency_ns["visibility_cross_xcd"] == pytest.approx(
        2 * h200.latency_ns["visibility_cross_xcd"]
    )
    with pytest.raises(InvalidInput, match="unknown search"):
        apply_search(h200, np.zeros(1), ("bogus",))


def test_unfinished_trace_is_refused(h200) -> None:
    dead = simulate(LaunchConfig(4, 2), h200).timeline  # deadlocks on the H200 (LDS)
    with pytest.raises(InvalidInput, match="did not finish"):
        prepare(dead, "dead")


def test_a_stage_with_two_code_forms(h200, tmp_path: Path) -> None:
    """``cost_above``: a stage whose cost changes form above a work size (the Triton K1's
    gemv: FMA loop for S <= 4, tensor-core dots above) round-trips through the file."""
    p = h200.with_params(above_gemv=(4.0, 9000.0, 0.0))
    assert p.cost("gemv", 4) == h200.cost("gemv", 4)
    assert p.cost("gemv", 8) == 9000.0
    d = fitted_profile_dict(
        type("R", (), {"profile": p, "launches": 0, "seconds": 0.0})(), h200, []
    )
    write_profile(d, tmp_path / "p.json")
    assert load_profile(str(tmp_path / "p.json")).cost_above == {"gemv": (4.0, 9000.0, 0.0)}


def test_fit_with_a_switch_searches_both_forms(h200, slow_recur) -> None:
    _, tr = slow_recur
    res = fit_profile(h200, [tr], budget=2, cost_passes=0, progress=False, switches={"gemv": 4})
    assert res.profile.cost_above["gemv"][0] == 4.0
    with pytest.raises(InvalidInput, match="no such stage"):
        fit_profile(h200, [tr], budget=0, cost_passes=0, progress=False, switches={"bogus": 1})


def test_measured_build_and_gpu_name(h200) -> None:
    from kda_sim.compare.launch import NO_X_LIMIT, bundled_for, with_resources

    assert bundled_for("NVIDIA H200") == "h200" and bundled_for("Tesla T4") is None
    p = with_resources(h200, {"threads": 256, "regs_per_thread": 128, "shared_bytes": 32768})
    assert p.kernel.threads == 256 and p.x_lds_budget == NO_X_LIMIT
    assert p.streamed_weights and not h200.streamed_weights  # the Triton build streams
    assert with_resources(h200, None) is h200


def test_streamed_gemv_starts_compute_bound_from_the_measured_stage_times(h200) -> None:
    """Under streamed_weights the gemv's cost line starts through the measured gemv busy
    times (each form apart); without it the profile is left as it is."""
    import statistics
    from dataclasses import replace

    from kda_sim.compare.calibrate import streamed_stages, streamed_start
    from kda_sim.importers.chrome import read_kernel_trace

    traces_dir = Path(__file__).resolve().parents[2] / "traces"
    trs = [prepare(read_kernel_trace(traces_dir / f"k1_h200_R1_L{L}.json"), f"1x{L}")
           for L in (1, 2, 4)]
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
    from kda_sim.compare.calibrate import cold_start

    truth = h200.with_params(cold_code=700.0)
    tr = prepare(simulate(LaunchConfig(4, 1), truth, occupancy=2).timeline, "4x1", align=False)
    got = cold_start(h200, [tr]).latency_ns["cold_code"]
    assert got == pytest.approx(700.0, abs=100.0)
    one_task = prepare(simulate(LaunchConfig(1, 1), truth, occupancy=2).timeline, "1x1",
                       align=False)
    assert cold_start(h200, [one_task]) is h200  # no CTA runs a second task
