"""bench/protocol_floor.py: the floor's command line, report and plot."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.protocol_floor import main


@pytest.mark.parametrize(
    ("flag", "said"),
    [
        ("--stream-tbps=6", "above the datasheet's 4.8"),
        ("--stream-tbps=0", "must be > 0"),
        ("--poll-ns=-1", "latencies >= 0"),
    ],
)
def test_bad_figures_exit_2_naming_them(capsys, flag: str, said: str) -> None:
    assert main([flag]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err


def test_a_report_is_written_once(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "floor.json", tmp_path / "floor.png"
    assert main(["--nw-first", "--onw-first", "--out", str(out), "--png", str(png)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert rows[-1]["step"].startswith("+ weights held") and png.stat().st_size > 10_000
    out.write_text("mine")
    assert main(["--out", str(out)]) == 2 and out.read_text() == "mine"
    assert "--force" in capsys.readouterr().err
