"""Where a fit starts from the traces (kda_sim/compare/starts.py): a streamed gemv's cost
from its measured busy times, ``cold_code`` from a CTA's later tasks."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.compare.calibrate import prepare
from kda_sim.compare.starts import cold_start, streamed_stages, streamed_start
from kda_sim.config import LaunchConfig
from kda_sim.engine import simulate
from kda_sim.importers.chrome import read_kernel_trace


def test_streamed_gemv_starts_compute_bound_from_the_measured_stage_times(h200) -> None:
    """Under streamed_weights the gemv's cost line starts through the measured gemv busy
    times (each form apart); without it the profile is left as it is."""
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
    truth = h200.with_params(cold_code=700.0)
    tr = prepare(simulate(LaunchConfig(4, 1), truth, occupancy=2).timeline, "4x1", align=False)
    got = cold_start(h200, [tr]).latency_ns["cold_code"]
    assert got == pytest.approx(700.0, abs=100.0)
    one_task = prepare(simulate(LaunchConfig(1, 1), truth, occupancy=2).timeline, "1x1",
                       align=False)
    assert cold_start(h200, [one_task]) is h200  # no CTA runs a second task
