"""The stage tables' script: reports of one shape are its launches, each error the median
over them and the path counted by launches; one report a shape reads as before; the floor
is each shape's launches against their own median; a file that is not a report is exit 2."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts/stage_split_table.py"
_spec = importlib.util.spec_from_file_location("stage_split_table", SCRIPT)
assert _spec is not None and _spec.loader is not None
table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(table)


def _report(R: int, L: int, span_err: float, real_span: float, gate: tuple, agree: bool) -> dict:
    err, real = gate
    return {
        "config": {"R": R, "L": L},
        "comparison": {
            "makespan_err": span_err,
            "real_makespan_ns": real_span,
            "stage_split": {"gate": {"dur_err": err, "real_dur_ns": real}},
            "critical_path": {"kinds": {"agree": agree}},
        },
    }


def _rows(text: str) -> list[list[str]]:
    return [[c.strip() for c in ln.split("|")[1:-1]] for ln in text.splitlines()[2:]]


def test_a_shapes_launches_give_one_row_of_medians() -> None:
    launches = [
        _report(1, 2, -0.10, 100.0, (-0.30, 10.0), True),
        _report(1, 2, 0.02, 90.0, (-0.10, 12.0), False),
        _report(1, 2, 0.04, 95.0, (-0.20, 11.0), True),
    ]
    one = _report(2, 1, 0.07, 80.0, (0.05, 9.0), False)
    rows = _rows(table.error_table([*launches, one]))
    assert rows[0] == ["1x2", "+2% (-10%..+4%)", "-20%", "2 of 3"]
    assert rows[1] == ["2x1", "+7%", "+5%", "no"]
    # the summary: the worst shape's median makespan, the kinds' median over the shapes,
    # and the shapes whose launches agree more than half the time
    assert rows[2] == ["median (makespan: max abs)", "7.0%", "-8%", "1 of 2"]


def test_half_the_launches_is_not_agreement() -> None:
    rs = [_report(1, 1, 0.0, 1.0, (0.0, 1.0), ok) for ok in (True, False)]
    assert _rows(table.error_table(rs))[-1][-1] == "0 of 1"


def test_the_floor_is_each_launch_against_its_shapes_median() -> None:
    rs = [_report(1, 1, 0.0, span, (0.0, g), True) for span, g in ((90, 8), (100, 10), (120, 11))]
    rows = _rows(table.floor_table(rs))
    # makespan: 120 / 100 - 1; gate: 8 / 10 - 1
    assert rows[0] == ["1x1", "3", "20%", "20%"]
    assert rows[1] == ["median", "", "20%", "20%"]


def test_not_a_report_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"config": {}}))
    r = subprocess.run(
        [sys.executable, str(SCRIPT), "--floor", str(bad)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 2
    assert "not `kda-sim compare --json` reports" in r.stderr
    assert "Traceback" not in r.stderr
