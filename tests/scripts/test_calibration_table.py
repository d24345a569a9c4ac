"""The calibration page's table script: a report ``kda-sim calibrate --json`` makes here
gives one row a trace, with its set and makespan; a file that is not a report is named in
a one-line error (exit 2), not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.importers.chrome import read_kernel_trace

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/calibration_table.py"
FIT, HELD = (ROOT / "traces" / f"k1_h200_{s}.json.gz" for s in ("R1_L1", "R2_L1"))


def _run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=False
    )


@pytest.mark.skipif(not (FIT.is_file() and HELD.is_file()), reason="no bundled traces")
def test_a_report_gives_a_row_a_trace(tmp_path: Path, capsys) -> None:
    # the smallest real calibration: no search, no cost pass; stock and fitted both run
    args = ["calibrate", str(FIT), "--holdout", str(HELD), "--out", str(tmp_path / "fit.json")]
    rc = main([*args, "--gpu", "h200", "--budget", "0", "--cost-passes", "0", "--json"])
    assert rc in (0, 1)
    report = tmp_path / "report.json"
    report.write_text(capsys.readouterr().out)
    r = _run(report)
    assert r.returncode == 0, r.stderr
    rows = [ln.split("|")[1:-1] for ln in r.stdout.splitlines() if ln.startswith("| k1_")]
    assert [(c[0].strip(), c[3].strip()) for c in rows] == [
        (FIT.name, "fit"),
        (HELD.name, "held out"),
    ]
    for cells, path in zip(rows, (FIT, HELD), strict=True):
        assert float(cells[4]) == pytest.approx(read_kernel_trace(path).makespan / 1e3, abs=0.01)
    assert len(json.loads(report.read_text())["rows"]) == 2


def test_not_a_report_is_named(tmp_path: Path) -> None:
    for text in ("", "{}", "[1]"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        r = _run(bad)
        assert r.returncode == 2
        assert "bad.json: not a `kda-sim calibrate --json` report" in r.stderr
        assert "Traceback" not in r.stderr
