"""lab.makespan_parts: a critical path split into parts that add up to its length, the
phases, the steps between shapes, and the traces' gemv and k.recur by SM neighbour."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from kda_sim.compare.spread import model_comparison, read_launch, trace_name
from lab.makespan_parts import (
    GEMV,
    collect,
    durations,
    main,
    part_order,
    path_parts,
    phases,
    recur_spans,
    steps,
    table,
)

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R1_L1.json.gz"


def test_the_parts_add_up_to_the_path() -> None:
    _, c = model_comparison(read_launch(TRACE), "h200-k1")
    for real, path in ((True, c.real_path), (False, c.sim_path)):
        assert path is not None
        parts = path_parts(c, real)
        assert sum(parts.values()) == pytest.approx(path.length, abs=1.0)
        # the stage kinds' own time is compare's, where no later task runs (R = 1)
        for k, v in path.by_stage.items():
            if not k.startswith("("):
                assert parts[k] == pytest.approx(v, abs=1.0)
        ph = phases(parts)
        assert sum(ph.values()) == pytest.approx(path.length, abs=1.0)
        assert ph["gemv"] == pytest.approx(sum(parts.get(k, 0.0) for k in GEMV))
        assert "<-XRDY" in parts and all(k in part_order(set(parts)) for k in parts)


def test_collect_takes_medians_over_the_launches(tmp_path: Path, capsys) -> None:
    spread = tmp_path / "spread"
    spread.mkdir()
    for i in range(2):  # two copies of one launch: the medians are the launch's
        shutil.copy(TRACE, spread / trace_name(1, 1, i))
    rep = collect(spread, profile="h200-k1", progress=False)
    shape = rep["shapes"]["1x1"]
    one = next(iter(shape["launches"].values()))
    assert shape["median"]["real"]["path"] == one["real"]["path"]
    assert shape["median"]["sim"]["makespan_ns"] == one["sim"]["makespan_ns"]
    rows = table(rep).splitlines()
    assert rows[2].startswith("| 1x1 |")
    out = tmp_path / "r.json"
    assert main(["collect", str(spread), "--profile", "h200-k1", "--json", str(out)]) == 0
    assert main(["table", str(out), "--split"]) == 0
    png = tmp_path / "f.png"
    assert main(["plot", f"k1={out}", "--png", str(png)]) == 0 and png.stat().st_size > 0
    assert main(["table", str(tmp_path / "missing.json")]) == 2
    assert "makespan_parts:" in capsys.readouterr().err


def test_steps_along_L_then_R() -> None:
    names = ["1x1", "1x2", "2x1", "2x2"]
    assert steps(names) == [("1x1", "1x2"), ("2x1", "2x2"), ("1x1", "2x1"), ("1x2", "2x2")]


def test_durations_by_neighbour(tmp_path: Path) -> None:
    spread = tmp_path / "spread"
    spread.mkdir()
    shutil.copy(TRACE, spread / trace_name(1, 1, 0))
    t = read_launch(spread / trace_name(1, 1, 0))
    rep = durations(spread)["shapes"]["1x1"]
    n_gemv1 = sum(1 for c in t.ctas for s in c.stages if s.name == "gemv1")
    assert sum(v["per_launch"] for k, v in rep.items() if k.startswith("gemv1")) == n_gemv1
    assert all(v["launch_medians_ns"][0] == v["median_ns"] for v in rep.values())  # one launch
    assert "k.recur slot 0 alone" in rep  # R = 1: one task a CTA, one CTA a task per SM here


def test_recur_spans_count_the_k_recur_beside_each() -> None:
    """Every k.recur of the launch, each with the others in flight over its span: their
    overlap summed over its span, so no more than the others there are, and the mean of
    a launch's counts is the mean overlap of two (symmetric) over each's span."""
    t = read_launch(ROOT / "traces" / "k1_h200_R2_L2.json.gz")
    spans = recur_spans(t)
    recurs = [s for c in t.ctas for s in c.stages if s.name == "k.recur"]
    assert len(spans) == len(recurs) == 192
    assert all(0.0 <= r["in_flight"] <= len(spans) - 1 for r in spans)
    assert all(r["slot"] == 0 for r in spans)  # 192 tasks on 256 CTAs: one a CTA
    assert max(r["in_flight"] for r in spans) > 1.0  # they overlap across the GPU
    assert all(0.0 <= r["sm_share"] <= 1.0 + 1e-9 for r in spans)
