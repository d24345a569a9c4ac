"""``kda-sim compare --near``: each path's near-critical joins and rivals, and the agreement
within the near-critical set beside the strict one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.cli import main

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R2_L1.json.gz"


def _near(capsys, *flags: str) -> dict:
    assert main(["compare", str(TRACE), "--json", *flags]) == 0
    return json.loads(capsys.readouterr().out)["comparison"]["critical_path"]


def test_compare_reports_near_critical_joins_and_both_agreements(capsys) -> None:
    cp = _near(capsys, "--near", "5000")
    near = cp["near"]
    assert near["near_ns"] == 5000
    for side in ("real", "sim"):
        joins = near[side]["near_joins"]
        assert joins and all(0 <= j["slack_ns"] < 5000 for j in joins)
        assert joins[0]["kind"] == "end"  # the walk's first choice: which CTA ends last
        for r in near[side]["rivals"]:
            assert r["slack_ns"] < 5000 and r["kinds"] != cp["kinds"][side]
    # the strict figure keeps its meaning; the loose one never says less
    assert isinstance(cp["kinds"]["agree"], bool)
    assert near["agree_within"] or not cp["kinds"]["agree"]
    tight = _near(capsys, "--near", "0")["near"]
    assert tight["real"]["near_joins"] == [] and tight["sim"]["rivals"] == []
    assert tight["agree_within"] == cp["kinds"]["agree"]


def test_compare_prints_the_near_critical_joins(capsys) -> None:
    assert main(["compare", str(TRACE), "--near", "5000"]) == 0
    out = capsys.readouterr().out
    assert "near-critical joins, real (slack under 5.00 us)" in out
    assert "the last end: CTA " in out
    assert "within the near-critical set" in out


@pytest.mark.parametrize("bad", ["-1", "nan"])
def test_compare_bad_near_exits_2(capsys, bad: str) -> None:
    assert main(["compare", str(TRACE), "--near", bad]) == 2
    assert "--near" in capsys.readouterr().err


def test_compare_says_when_the_real_puts_are_placed(capsys, tmp_path: Path) -> None:
    # the Triton K1's traces record no puts: the real side's put times are placed, and
    # the report says so; a simulated trace in the real's place records its puts
    assert _near(capsys)["near"]["real_puts_placed"] is True
    assert main(["compare", str(TRACE)]) == 0
    assert "the trace records no puts" in capsys.readouterr().out
    sim = tmp_path / "sim.json"
    assert main(["simulate", "--like", str(TRACE), "--out", str(sim)]) == 0
    capsys.readouterr()
    assert main(["compare", str(sim), "--json"]) in (0, 1)
    near = json.loads(capsys.readouterr().out)["comparison"]["critical_path"]["near"]
    assert near["real_puts_placed"] is False
