"""``kda-sim spread`` as a user runs it: the report as JSON on stdout and in --out, a
table on stderr, nothing overwritten, and a folder without launches exit 2 naming it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kda_sim.cli import main

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"


def test_the_report_is_written_and_never_overwritten(tmp_path: Path, capsys) -> None:
    traces = tmp_path / "launches"
    traces.mkdir()
    for i in range(2):
        shutil.copy(TRACE, traces / f"k1_R1_L1_{i}.json")
    out = tmp_path / "spread.json"
    assert main(["spread", str(traces), "--out", str(out), "--profile", "h200"]) == 0
    report = json.loads(out.read_text())
    assert report["1x1"]["files"] == ["k1_R1_L1_0.json", "k1_R1_L1_1.json"]
    assert report["1x1"]["between_launches"]["pair_makespan_err_frac"]["max"] == 0
    assert report["1x1"]["model"]["profile"] == "h200"
    assert report["1x1"]["model"]["costs"].startswith("k1 costs fitted on h200 by kda-sim")
    cap = capsys.readouterr()
    assert json.loads(cap.out) == report and "  1x1   2" in cap.err
    assert "costs of h200: k1 costs fitted on h200" in cap.err
    out.write_text("mine")
    assert main(["spread", str(traces), "--out", str(out)]) == 2
    assert out.read_text() == "mine" and "--force" in capsys.readouterr().err


def test_a_folder_without_launches_exits_2_naming_it(tmp_path: Path, capsys) -> None:
    assert main(["spread", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kda-sim spread: ") and str(tmp_path) in err and "no k1_R" in err
    assert main(["spread", str(tmp_path / "absent")]) == 2
    assert "absent: not a folder" in capsys.readouterr().err
