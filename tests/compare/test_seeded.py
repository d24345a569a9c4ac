"""The model's launch as a distribution over seeded runs (``compare.seeded``)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.compare.seeded import SeededRun, distribution, record, seeded_run, stats
from kda_sim.compare.spread import model_comparison, model_run
from kda_sim.machine.profile import load_profile

TRACE = Path(__file__).parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
A, B, C = ("gemv1", "k.stage"), ("gemv1", "k.conv"), ("gemv0", "k.norm")


def _run(seed: int, kinds: tuple[str, ...], err: float, gemv: float) -> SeededRun:
    return SeededRun(seed, kinds, 1000.0 * (1 + err), err, {"gemv0": gemv})


def test_paths_are_shares_of_the_runs_the_traces_marked_and_the_modal() -> None:
    runs = [_run(0, B, 0.01, 0.1), _run(1, A, 0.03, 0.3), _run(2, A, 0.02, 0.2)]
    runs += [_run(3, C, 0.02, 0.2), _run(4, A, 0.02, 0.2), _run(5, B, 0.02, 0.2)]
    d = distribution(B, runs)
    assert [tuple(p["kinds"]) for p in d["paths"]] == [A, B, C]  # most-taken first
    assert [p["runs"] for p in d["paths"]] == [3, 2, 1]
    assert sum(p["share"] for p in d["paths"]) == pytest.approx(1.0)
    assert [p["trace"] for p in d["paths"]] == [False, True, False]
    assert d["modal"] == [list(A)] and not d["trace_path_modal"]
    assert d["trace_path_share"] == pytest.approx(2 / 6)
    assert d["seeds"] == [0, 1, 2, 3, 4, 5]
    errs = [r.makespan_err for r in runs]
    assert d["makespan_err"]["mean"] == pytest.approx(sum(errs) / len(errs))
    assert d["makespan_err"]["min"] == min(errs) and d["makespan_err"]["max"] == max(errs)
    assert d["dur_err_by_kind"]["gemv0"]["sd"] > 0
    # a tie: every path taken as often as any is modal, the trace's among them
    tie = distribution(A, runs[:2])
    assert tie["modal"] == [list(B), list(A)] and tie["trace_path_modal"]
    # a path no run takes: share 0, not modal, marked on none
    none = distribution(("slice",), runs)
    assert none["trace_path_share"] == 0 and not any(p["trace"] for p in none["paths"])


def test_stats_of_one_run_and_of_none() -> None:
    assert stats([0.5]) == {"mean": 0.5, "sd": 0.0, "min": 0.5, "max": 0.5}
    assert stats([]) is None


def test_a_seeded_run_draws_the_spread_and_is_the_seeds_model_run() -> None:
    """Two seeds draw two launches with a spread; seed 0's record is ``model_comparison``'s
    with that seed; without a spread a seeded run is the nominal one (no per-op jitter)."""
    tl = read_k1_trace(TRACE)
    k1 = load_profile("h200-k1")
    prof = replace(k1, cta_spread={"gemv0": 0.05, "gemv1": 0.05})
    r0, r1 = seeded_run(tl, prof, 0), seeded_run(tl, prof, 1)
    assert r0.sim_makespan != r1.sim_makespan
    assert r0 == record(0, model_comparison(tl, prof, seed=0)[1])
    assert r0.kinds and r0.dur_err
    nominal = model_run(tl, k1)[1].makespan
    assert model_run(tl, k1, seed=3)[1].makespan == nominal
    assert model_run(tl, prof, seed=3)[1].makespan != nominal
