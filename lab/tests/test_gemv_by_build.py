"""lab.gemv_by_build: the gemv's stages at one S across builds, the pairs, the launch
spread and what a factor a build would be, held out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kda_sim.compare.spread import read_launch
from lab.gemv_by_build import (
    ALL,
    LAST,
    compare_builds,
    factors,
    launch_cells,
    main,
    shape_summary,
    spread,
)

ROOT = Path(__file__).resolve().parents[2]
TRACES = ROOT / "traces"


def test_a_launch_cells_by_neighbour_all_and_last() -> None:
    t = read_launch(TRACES / "k1_h200_R1_L2.json.gz")
    cells = launch_cells(t)
    gemv = [c for c in t.ctas if c.role == "gemv"]
    assert len(cells[f"gemv1 {ALL}"]) == len(gemv)
    by_nb = sum(len(v) for k, v in cells.items() if k.startswith("gemv1 ") and k != f"gemv1 {ALL}")
    assert by_nb == len(gemv) + 1  # every CTA in one neighbour class, and the launch's last
    both = [
        next(s.dur for s in c.stages if s.name == "gemv0")
        + next(s.dur for s in c.stages if s.name == "gemv1")
        for c in gemv
    ]
    assert sorted(cells[f"gemv {ALL}"]) == pytest.approx(sorted(both))
    assert cells[f"gemv {LAST}"] == [max(both)]
    # load_x's own part (after XRDY was seen) is within the stage
    own, whole = cells["load_x own all"], cells["load_x all"]
    assert all(0 <= o <= d for o, d in zip(own, whole, strict=True))


def _shape(launch_medians: list[float]) -> dict[str, Any]:
    return {"gemv all": shape_summary([{"gemv all": [m]} for m in launch_medians])["gemv all"]}


def test_pairs_at_one_s_apart_and_the_spread() -> None:
    shapes = {
        "2x1": _shape([100.0, 102.0, 98.0]),
        "1x2": _shape([110.0, 111.0, 109.0]),
        "4x1": _shape([200.0, 201.0]),
        "2x2": _shape([199.0, 202.0]),
        "1x1": _shape([50.0]),
    }
    rows = {(p["lower"], p["higher"]): p for p in compare_builds(shapes)}
    assert set(rows) == {("2x1", "1x2"), ("4x1", "2x2")}  # 1x1 has no other build at S = 1
    s2 = rows[("2x1", "1x2")]
    assert s2["S"] == 2 and s2["diff_ns"] == pytest.approx(10.0) and s2["apart"] is True
    assert s2["higher_longer"] == 1.0 and s2["ratio"] == pytest.approx(1.1)
    s4 = rows[("4x1", "2x2")]
    assert s4["apart"] is False and 0.0 < s4["higher_longer"] < 1.0
    # each shape's largest distance of a launch from its median: 2, 1, 0.5 and 1.5 (1x1
    # has one launch); their median
    assert spread(shapes)["gemv all"] == pytest.approx(1.25)
    one = compare_builds({"2x1": _shape([100.0]), "1x2": _shape([90.0])})
    assert one[0]["apart"] is None and one[0]["higher_longer"] == 0.0


def test_a_build_factor_held_out_comes_from_the_other_shapes_of_its_l() -> None:
    shapes = {
        "2x1": _shape([100.0]),
        "1x2": _shape([121.0]),  # L = 2 slower at S = 2
        "4x1": _shape([200.0]),
        "2x2": _shape([200.0]),  # and not at S = 4
    }
    f = factors(shapes, "gemv all")
    assert f["1x2"]["own"] == pytest.approx(1.1) and f["2x1"]["own"] == pytest.approx(1 / 1.1)
    assert f["2x2"]["own"] == pytest.approx(1.0)
    assert f["1x2"]["held_out"] == pytest.approx(1.0)  # from 2x2 alone: it cannot learn 1.1
    assert f["2x2"]["held_out"] == pytest.approx(1.1)  # from 1x2: it would slow 2x2
    assert factors({"1x1": _shape([1.0])}, "gemv all") == {}


def test_main_on_two_bundled_launches_and_bad_input(tmp_path: Path, capsys) -> None:
    a, b = TRACES / "k1_h200_R1_L2.json.gz", TRACES / "k1_h200_R2_L1.json.gz"
    out = tmp_path / "r.json"
    assert main([f"h200={a},{b}", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| h200 | 2 | 2x1 | 1x2 | gemv all |" in text and "(one launch)" in text
    assert out.stat().st_size > 0
    assert main([str(a)]) == 2  # no label
    assert main([f"x={tmp_path / 'missing'}"]) == 2
    err = capsys.readouterr().err
    assert err.count("gemv_by_build:") == 2 and "missing" in err
