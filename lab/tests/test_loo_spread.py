"""lab.loo_spread: fold profiles scored on every launch of their held-out shape, the modal
path's ties, and each shape's launch of median makespan."""

from __future__ import annotations

import copy
import math
import shutil
from pathlib import Path

import pytest

from kda_sim.compare.spread import model_comparison, read_launch, trace_name
from kda_sim.errors import InvalidInput
from kda_sim.timeline.chrome import write_chrome
from lab.loo_spread import (
    join_spread,
    main,
    modal_verdict,
    modes,
    near_table,
    score,
    table,
    write_medoids,
)

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R1_L1.json.gz"
FITTED = ROOT / "kda_sim" / "kernels" / "k1" / "costs" / "h200.fitted.json"  # h200-k1's costs


def test_modes_and_ties() -> None:
    a, b, c = ("slice", "gate"), ("slice", "mix"), ("slice", "k.norm")
    assert modes([a, b, a]) == [a]
    assert modes([a, b, b, a, c]) == [a, b]
    assert modal_verdict([a, a, b], [a, b, a]) == "yes"
    assert modal_verdict([a, a, b, b], [a, a, c]) == "tie"  # the launches tie, one is the model's
    assert modal_verdict([a, a, b], [a, b]) == "tie"  # the model's runs tie
    assert modal_verdict([a, a, b], [b, b, a]) == "no"


def test_a_fold_is_scored_on_every_launch_of_its_shape(tmp_path: Path, capsys) -> None:
    spread = tmp_path / "spread"
    spread.mkdir()
    for i in range(2):  # two copies of one launch: the pooled medians are the launch's
        shutil.copy(TRACE, spread / trace_name(1, 1, i))
    folds = tmp_path / "folds"
    folds.mkdir()
    shutil.copy(FITTED, folds / "fold_R1_L1.json")
    r = score(spread, folds=folds, progress=False)
    (shape,) = r["shapes"].values()
    _, c = model_comparison(read_launch(TRACE), "h200-k1")
    assert shape["launches"] == 2 and shape["makespan_err"] == [c.makespan_err] * 2
    for k, st in c.by_stage.items():
        got = shape["kinds"][k]
        assert got["n"] == 2 * st["n"]
        assert got["err"] == pytest.approx(st["dur_sim_median_ns"] / st["dur_real_median_ns"] - 1)
    assert shape["path_agree_frac"] == float(c.kinds_agree)
    assert shape["modal"] == ("yes" if c.kinds_agree else "no")
    assert shape["real_mode_share"] == 1  # both copies take one path
    # the fold file and the bundled profile it copies score alike
    same = score(spread, profile="h200-k1", progress=False)["shapes"]["1x1"]
    assert same["makespan_err"] == shape["makespan_err"]
    sm = r["summary"]
    assert sm["makespans_within"] == int(abs(c.makespan_err or 0) <= 0.05)
    assert sm["kinds_within"] + len(sm["kinds_out"]) == len(c.by_stage)
    rows = table(r).splitlines()
    assert rows[2].startswith("| 1x1 |") and rows[3].startswith("| median")
    assert f"{sm['kinds_within']} of {len(c.by_stage)}" in rows[-1]
    out = tmp_path / "r.json"
    assert main(["score", str(spread), "--folds", str(folds), "--json", str(out)]) == 0
    assert out.is_file() and "| 1x1 |" in capsys.readouterr().out


def test_a_missing_fold_is_named(tmp_path: Path, capsys) -> None:
    shutil.copy(TRACE, tmp_path / trace_name(1, 1, 0))
    with pytest.raises(InvalidInput, match=r"fold_R1_L1\.json"):
        score(tmp_path, folds=tmp_path, progress=False)
    assert main(["score", str(tmp_path), "--folds", str(tmp_path)]) == 2
    assert "no such fold profile" in capsys.readouterr().err


def test_the_medoid_is_the_launch_of_median_makespan(tmp_path: Path, capsys) -> None:
    tl = read_launch(TRACE)
    spread = tmp_path / "spread"
    spread.mkdir()
    for i, later in enumerate((3000.0, 0.0, 1000.0, 2000.0)):  # ns added to the last end
        t = copy.deepcopy(tl)
        last = max(t.ctas, key=lambda c: c.end or 0.0)
        last.end = (last.end or 0.0) + later
        write_chrome(t, spread / trace_name(1, 1, i))
    out = tmp_path / "med"
    assert write_medoids(spread, out) == {"1x1": "k1_R1_L1_2.json"}  # the lower middle
    want = read_launch(spread / "k1_R1_L1_2.json").makespan
    assert want == pytest.approx((tl.makespan or 0.0) + 1000.0)
    assert read_launch(out / "k1_R1_L1.json").makespan == want
    assert [p.name for p in (out / "alone").iterdir()] == ["k1_R1_L1_2.json"]
    assert main(["medoids", str(spread), "--out", str(out)]) == 2  # never over a folder
    assert "exists" in capsys.readouterr().err


def _two_launches(tmp_path: Path) -> Path:
    """A spread folder of two copies of the bundled 1 x 1 launch."""
    spread = tmp_path / "spread"
    spread.mkdir()
    for i in range(2):
        shutil.copy(TRACE, spread / trace_name(1, 1, i))
    return spread


def test_near_counts_agree_within_at_least_as_often_as_strictly(tmp_path: Path) -> None:
    spread = _two_launches(tmp_path)
    folds = tmp_path / "folds"
    folds.mkdir()
    shutil.copy(FITTED, folds / "fold_R1_L1.json")
    wide = score(spread, folds=folds, progress=False, near=math.inf)["shapes"]["1x1"]["near"]
    none = score(spread, folds=folds, progress=False, near=0.0)["shapes"]["1x1"]["near"]
    _, c = model_comparison(read_launch(TRACE), "h200-k1")
    assert none["agree_strict"] == none["agree_within"] == 2 * int(c.kinds_agree)
    assert wide["agree_within"] >= wide["agree_strict"] == none["agree_strict"]
    # one launch and its copy take one path: every pair agrees strictly
    assert none["pair_strict_frac"] == none["pair_within_frac"] == 1.0
    assert len(wide["swap_slack_ns"]) == 2
    assert "launches agreeing: strict, within 0 ns" in near_table(
        score(spread, folds=folds, progress=False, near=0.0)
    )


def test_a_joins_gap_does_not_move_between_copies_of_a_launch(tmp_path: Path) -> None:
    rep = join_spread(_two_launches(tmp_path), progress=False)
    assert rep["joins"] > 5
    assert rep["gap_pair_spread_median_ns"] == 0.0 and rep["at_pair_spread_median_ns"] == 0.0
    (shape,) = rep["shapes"].values()
    assert all(len(r["gaps_ns"]) == 2 for r in shape["joins"])
