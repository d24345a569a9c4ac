"""Where the ticket build loses time (lab/ticket_gap.py): a launch's points read from a
bundled real trace, and a run folder of it set against the model's two builds (no GPU)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.importers.chrome import read_kernel_trace
from lab.ticket_gap import POINTS, main, points_us, report, table

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R2_L2.json.gz"
ktrace = pytest.importorskip("kda_kernel.triton.trace")  # the writer (needs numpy only)


def test_a_launchs_points_are_in_order() -> None:
    tl = read_kernel_trace(TRACE)
    p = points_us(tl)
    assert 0 < p["gemv_end"] < p["kda_end"] <= p["makespan"] == pytest.approx(tl.makespan / 1e3)
    assert p["kda_phase"] == pytest.approx(p["kda_end"] - p["gemv_end"])
    gemv = max(s.end for c in tl.ctas for s in c.stages if s.name in ("gemv0", "gemv1"))
    assert p["gemv_end"] == gemv / 1e3
    assert 0 < p["gemv0_busy"] < p["gemv_end"]


def _run_dir(tmp_path: Path) -> Path:
    s = tmp_path / "s"
    for name in ("static", "kda_tickets"):
        d = s / name / "warm"
        d.mkdir(parents=True)
        tl = read_kernel_trace(TRACE)
        if name == "kda_tickets":  # the same launch, recorded as the ticket build's
            tl.meta = replace(tl.meta, params={"kda_tickets": True, "ticket_unroll": 3})
            takes = []
            for c in tl.ctas:
                for st in (st for st in c.stages if st.name == "k.stage"):
                    takes.append([c.cta, st.start - 400, st.start - 64, st.task])
            tl.meta.extra["ticket_takes"] = takes
        ktrace.write(tl, d / "k1_R2_L2_0.json")
    return s


def test_the_builds_points_real_and_predicted(tmp_path: Path) -> None:
    s = _run_dir(tmp_path)
    bench = tmp_path / "kernel_bench_tickets.json"
    rows = [
        {"R": 2, "L": 2, "variant": {}, "us": 57.8},
        {"R": 2, "L": 2, "variant": {"kda_tickets": True, "ticket_unroll": 3}, "us": 59.3},
        {"R": 2, "L": 2, "variant": {"kda_tickets": True}, "us": 66.0},  # the loop build
    ]
    bench.write_text(json.dumps({"variants": rows}))
    rep = report(s, "h200-k1", bench)
    assert rep["atomic_ns"] == 336.0 and rep["ticket_item_ns"] == 64.0  # measured
    (row,) = rep["rows"]
    for k in POINTS:
        assert row[k]["real_diff"] == 0.0  # one launch twice
    # the model: the same gemv phase (the same roles and costs), the items later by takes
    assert row["gemv_end"]["model_diff"] == pytest.approx(0.0, abs=0.01)
    assert row["kda_end"]["model_diff"] > 0.3
    assert row["untraced_diff"] == pytest.approx(1.5)  # the unrolled build's, which traced
    assert row["tail"]["real_diff"] == 0.0
    assert "| 2 x 2 | +1.50 | +0.00 / " in table(rep)


def test_bad_input_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "static" / "warm").mkdir(parents=True)
    assert main(["--dir", str(tmp_path)]) == 2
    assert "static/warm: no k1_R*_L*_*.json traces" in capsys.readouterr().err
    s = _run_dir(tmp_path / "run")
    other = s / "static" / "warm" / "k1_R2_L2_0.json"
    other.rename(other.with_name("k1_R1_L1_0.json"))  # no shape both builds ran
    assert main(["--dir", str(s)]) == 2
    assert "no shape with warm traces of both builds" in capsys.readouterr().err
    other.with_name("k1_R1_L1_0.json").rename(other)
    out = tmp_path / "gap.json"
    assert main(["--dir", str(s), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["rows"][0]["R"] == 2
