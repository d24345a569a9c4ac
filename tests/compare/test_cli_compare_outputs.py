"""``kda-sim compare --out``: the file checked before any work, written whole, kept
without --force; the JSON strict (no NaN or Infinity)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kda_sim.commands.compare as compare_cmd
from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.timeline.chrome import write_chrome


@pytest.fixture(scope="module")
def pair(tmp_path_factory, h200) -> tuple[Path, Path]:
    d = tmp_path_factory.mktemp("out")
    real, sim = d / "real.json", d / "sim.json"
    tl = simulate(LaunchConfig(1, 1), h200, seed=2).timeline
    tl.meta.source = "measured"
    write_chrome(tl, real)
    write_chrome(simulate(LaunchConfig(1, 1), h200).timeline, sim)
    return real, sim


def test_out_is_checked_before_reading_the_trace(tmp_path: Path, pair, monkeypatch, capsys):
    def no_work(*a, **k):
        raise AssertionError("the trace was read before the outputs were checked")

    monkeypatch.setattr(compare_cmd, "read_any", no_work)
    out = tmp_path / "r.json"
    out.write_text("mine")
    assert main(["compare", str(pair[0]), "--out", str(out)]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == "mine"
    assert main(["compare", str(pair[0]), "--out", str(tmp_path / "no" / "r.json")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_out_written_and_forced(tmp_path: Path, pair, capsys) -> None:
    real, sim = pair
    out = tmp_path / "r.json"
    assert main(["compare", str(real), "--sim", str(sim), "--out", str(out)]) == 0
    d = json.loads(out.read_text())
    assert d["conformance"]["conforms"] and d["real"] == str(real)
    assert main(["compare", str(real), "--sim", str(sim), "--out", str(out)]) == 2
    assert main(["compare", str(real), "--sim", str(sim), "--out", str(out), "--force"]) == 0
    assert [p.name for p in tmp_path.iterdir()] == ["r.json"]  # no temporary file left


def test_json_never_holds_nan(pair, monkeypatch, capsys) -> None:
    """A non-finite number in the report (here planted in the summary) comes out as
    null with the field named under non_finite."""
    real, sim = pair
    orig = compare_cmd.compare_timelines

    def with_nan(*a, **k):
        cmp = orig(*a, **k)
        summary = cmp.summary

        def planted(**kw):
            d = summary(**kw)
            d["makespan_err"] = float("nan")
            return d

        object.__setattr__(cmp, "summary", planted)
        return cmp

    monkeypatch.setattr(compare_cmd, "compare_timelines", with_nan)
    main(["compare", str(real), "--sim", str(sim), "--json"])
    text = capsys.readouterr().out
    assert "NaN" not in text
    d = json.loads(text)
    assert d["comparison"]["makespan_err"] is None
    assert "comparison.makespan_err" in d["non_finite"]
