"""The calibration page's table script: the bundled report gives one row a trace; a file
that is not a report is named in a one-line error (exit 2), not a traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/calibration_table.py"


def _run(path: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(path)], capture_output=True, text=True, check=False
    )


def test_bundled_report_gives_a_row_a_trace() -> None:
    report = ROOT / "bench/compare_h200_calibration.json"
    r = _run(report)
    assert r.returncode == 0, r.stderr
    rows = [ln for ln in r.stdout.splitlines() if ln.startswith("| k1_")]
    traces = json.loads(report.read_text())["rows"]
    assert len(rows) == len(traces) and len(traces) >= 8  # the bundled traces at least


def test_not_a_report_is_named(tmp_path: Path) -> None:
    for text in ("", "{}", "[1]"):
        bad = tmp_path / "bad.json"
        bad.write_text(text)
        r = _run(bad)
        assert r.returncode == 2
        assert "bad.json: not a `kda-sim calibrate --json` report" in r.stderr
        assert "Traceback" not in r.stderr
