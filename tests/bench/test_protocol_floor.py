"""The protocol's floor (bench/protocol_floor.py): the model with its costs taken away."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.protocol_floor import LADDER, Figures, ladder, main
from kda_sim.config import LaunchConfig
from kda_sim.machine.profile import load_profile

H200 = Figures(3910.0, 300.0, 190.0)


@pytest.mark.parametrize(
    "cfg", [LaunchConfig(1, 1, nw_first=True, onw_first=True), LaunchConfig(4, 4, onw_first=True)]
)
def test_each_rung_is_no_slower_and_the_bound_is_the_launch_bytes(cfg: LaunchConfig) -> None:
    rows = ladder(cfg, load_profile("h200-k1"), H200)["rows"]
    assert len(rows) == len(LADDER) + 1
    spans = [r["makespan_us"] for r in rows]
    assert spans == sorted(spans, reverse=True)  # taking a cost away never slows the launch
    assert spans[-1] < 0.7 * spans[0]
    # one bound for every rung: the same bytes at the datasheet's 4.8 TB/s (19.2 us at 1x1)
    assert len({round(r["bound_us"], 6) for r in rows}) == 1
    if cfg.S == 1:
        assert rows[0]["bound_us"] == pytest.approx(19.24, abs=0.05)
    for r in rows:
        assert r["x_bound"] == pytest.approx(r["makespan_us"] / r["bound_us"])
        assert r["handoff_latency_us"] > 0  # the protocol's own chain is left at the floor
        assert r["gemv_us"] > 0


def test_the_stream_rung_sets_the_measured_read(tmp_path: Path) -> None:
    cfg = LaunchConfig(1, 1, nw_first=True, onw_first=True)
    slow = ladder(cfg, load_profile("h200-k1"), Figures(2000.0, 300.0, 190.0))["rows"]
    fast = ladder(cfg, load_profile("h200-k1"), H200)["rows"]
    assert slow[0] == fast[0] and slow[1] == fast[1]  # before the stream rung: the same
    assert slow[2]["makespan_us"] > fast[2]["makespan_us"] + 5  # 45 MB a group at 2 TB/s


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
