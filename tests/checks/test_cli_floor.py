"""``kda-sim floor``: the floor's command line, report, plot and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.cli import main


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--stream-tbps=6", "above the datasheet's 4.8"),
        # refused by the flags' types, naming the flag
        ("--stream-tbps=0", "argument --stream-tbps: 0: must be >= 1e-06"),
        ("--poll-ns=-1", "argument --poll-ns: -1: must be >= 0.001"),
        ("--poll-ns=0", "argument --poll-ns: 0: must be >= 0.001"),  # the engine divides by it
        ("--visibility-ns=-1", "argument --visibility-ns: -1: must be >= 0"),
        ("--gpu=a100", "unknown GPU"),
        ("--L=17", "L = 17 > 16"),
    ],
)
def test_bad_input_exits_2_naming_it(capsys, flag: str, said: str) -> None:
    try:
        rc = main(["floor", flag])
    except SystemExit as e:  # argparse's refusal of a flag's value
        rc = e.code
    assert rc == 2
    err = capsys.readouterr().err
    assert "kda-sim" in err and said in err and "Traceback" not in err


def test_a_report_is_written_once(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "floor.json", tmp_path / "floor.png"
    assert main(["floor", "--nw-first", "--onw-first", "--out", str(out), "--png", str(png)]) == 0
    report = json.loads(out.read_text())
    assert report["config"] == "R=1 L=1 nb=8 kda0=0 nw_first onw_first"  # 1x1 by default
    assert report["rows"][0]["step"] == "the profile (h200-k1)"  # the H200's fitted K1
    assert report["figures"] == {"stream_tbps": 3.91, "visibility_ns": 300.0, "poll_ns": 190.0}
    rows = report["rows"]
    assert rows[-1]["step"].startswith("+ weights held") and png.stat().st_size > 10_000
    cap = capsys.readouterr()
    assert json.loads(cap.out) == report  # the report on stdout too, the table on stderr
    assert "the profile (h200-k1)" in cap.err
    assert report["costs"].startswith("k1 costs fitted on h200 by kda-sim calibrate (")
    assert f"costs: {report['costs']}" in cap.err
    out.write_text("mine")
    assert main(["floor", "--out", str(out)]) == 2 and out.read_text() == "mine"
    assert "--force" in capsys.readouterr().err
    png.write_text("mine")
    assert main(["floor", "--png", str(png)]) == 2 and png.read_text() == "mine"
    assert main(["floor", "--R", "2", "--out", str(out), "--force"]) == 0
    assert json.loads(out.read_text())["config"].startswith("R=2 L=1")
