"""``kda-sim compare --seeds N``: a profile with a spread between CTAs run N seeded times,
its paths as a distribution beside the trace's; refusals before any simulation."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

import kda_sim.commands.compare as compare_cmd
from kda_sim.cli import main
from kda_sim.compare.calibrate import MAX_SEEDS
from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.compare.spread import model_run
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.critical import stage_kinds

TRACE = Path(__file__).parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
SPREAD = {"gemv0": 0.05, "gemv1": 0.05}


@pytest.fixture(scope="module")
def spread_profile(tmp_path_factory) -> Path:
    """``h200-k1`` with a spread on the gemv stages, as a profile file."""
    f = tmp_path_factory.mktemp("seeds") / "spread.json"
    f.write_text(json.dumps(load_profile("h200-k1").to_dict() | {"cta_spread": SPREAD}))
    return f


@pytest.fixture(scope="module")
def seeded(spread_profile: Path) -> dict:
    """The JSON report of three seeded runs."""
    buf = io.StringIO()
    argv = ["compare", str(TRACE), "--profile", str(spread_profile), "--seeds", "3"]
    with contextlib.redirect_stdout(buf):
        assert main([*argv, "--jobs", "1", "--json"]) == 0
    return json.loads(buf.getvalue())


def test_the_paths_are_a_distribution_over_the_seeds(seeded: dict, spread_profile: Path) -> None:
    d = seeded["seeds"]
    assert d["runs"] == 3 and d["seeds"] == [0, 1, 2] and d["cta_spread"] == SPREAD
    assert sum(p["runs"] for p in d["paths"]) == 3
    assert sum(p["share"] for p in d["paths"]) == pytest.approx(1.0)
    real = stage_kinds(seeded["comparison"]["critical_path"]["kinds"]["real"])
    assert d["trace_path"] == real
    marked = [p for p in d["paths"] if p["trace"]]
    assert sum(p["share"] for p in marked) == pytest.approx(d["trace_path_share"])
    assert all(p["kinds"] == real for p in marked)
    assert d["modal"] == [p["kinds"] for p in d["paths"] if p["modal"]]
    # the spread draws each seed its own launch: the makespans differ
    ms = d["sim_makespan_ns"]
    assert ms["min"] < ms["max"] and ms["sd"] > 0
    # the per-CTA views are seed 0's run
    seed0 = model_run(read_k1_trace(TRACE), load_profile(str(spread_profile)), 0)[1]
    assert seeded["comparison"]["sim_makespan_ns"] == pytest.approx(seed0.makespan)
    assert "seed 0 of 3" in seeded["sim"]
    assert set(d["dur_err_by_kind"]) >= {"gemv0", "gemv1"}


def test_the_text_report_shows_the_distribution(spread_profile: Path, capsys) -> None:
    argv = ["compare", str(TRACE), "--profile", str(spread_profile), "--seeds", "2"]
    assert main([*argv, "--jobs", "1"]) == 0
    out = capsys.readouterr().out
    assert "seeded runs: 2 (seeds 0 to 1" in out and "views above are seed 0's" in out
    assert "makespan error: mean" in out and "the model's paths" in out
    assert "<- " in out  # the modal path is marked


def test_without_seeds_a_spread_is_not_drawn_and_says_so(spread_profile: Path, capsys) -> None:
    assert main(["compare", str(TRACE), "--profile", str(spread_profile), "--json"]) == 0
    got = capsys.readouterr()
    assert "sets cta_spread, but one nominal launch draws no spread" in got.err
    assert "seeds" not in json.loads(got.out)


def test_bad_seeds_exit_2_before_any_simulation(
    tmp_path: Path, spread_profile: Path, monkeypatch, capsys
) -> None:
    def no_run(*a, **k):
        raise AssertionError("read or simulated before the refusal")

    monkeypatch.setattr(compare_cmd, "model_run", no_run)
    monkeypatch.setattr(compare_cmd, "simulate", no_run)
    monkeypatch.setattr(compare_cmd, "counterpart", no_run)
    read = compare_cmd.read_any
    monkeypatch.setattr(compare_cmd, "read_any", no_run)  # a bad count: not even read
    base = ["compare", str(TRACE), "--profile", str(spread_profile)]
    for n in (0, -1, MAX_SEEDS + 1):
        assert main([*base, "--seeds", str(n)]) == 2
        assert f"--seeds {n}: 1 to {MAX_SEEDS}" in capsys.readouterr().err
    monkeypatch.setattr(compare_cmd, "read_any", read)
    # a profile without a spread: its seeded runs would be its nominal one
    assert main(["compare", str(TRACE), "--gpu", "h200-k1", "--seeds", "2"]) == 2
    err = capsys.readouterr().err
    assert "h200-k1 sets no cta_spread" in err and "leave --seeds out" in err
    # a given simulation is one run
    sim = tmp_path / "sim.json"
    sim.write_text("{}")
    assert main([*base, "--seeds", "2", "--sim", str(sim)]) == 2
    assert "--seeds with --sim" in capsys.readouterr().err


@pytest.mark.parametrize("flag", [["--jobs", "2"], ["--cluster", "local:2"]])
def test_jobs_without_seeds_exit_2_before_the_trace(
    flag: list[str], spread_profile: Path, monkeypatch, capsys
) -> None:
    def no_read(*a, **k):
        raise AssertionError("read before the refusal")

    monkeypatch.setattr(compare_cmd, "read_any", no_read)
    assert main(["compare", str(TRACE), "--profile", str(spread_profile), *flag]) == 2
    err = capsys.readouterr().err
    assert f"{flag[0]} shares the seeded runs" in err and "give --seeds N" in err
    assert "Traceback" not in err
