"""The launch-to-launch comparison (lab/trace_spread.py) on the bundled 1x1 trace: a
launch against itself differs by nothing, and against a copy whose every time runs 10 %
slower by exactly what that makes."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline import Timeline
from lab.trace_spread import report, spread

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json"


def _stretched(tl: Timeline, f: float) -> Timeline:
    """Every time of the launch f times as far from its start."""
    out = copy.deepcopy(tl)
    o = tl.origin

    def s(t: float | None) -> float | None:
        return None if t is None else o + f * (t - o)

    for c in out.ctas:
        c.start, c.end = s(c.start), s(c.end)
        for st in c.stages:
            st.start, st.end = s(st.start), s(st.end)
        for p in c.polls:
            p.first_issue, p.satisfied, p.put_time = s(p.first_issue), s(p.satisfied), s(p.put_time)
        for u in c.puts:
            u.time = s(u.time)
        for ld in c.loads:
            ld.issue, ld.done = s(ld.issue), s(ld.done)
    return out


def test_a_launch_against_itself_differs_by_nothing() -> None:
    tl = read_kernel_trace(TRACE)
    r = spread([tl, copy.deepcopy(tl)])
    assert r["makespan_range_frac"] == 0
    assert r["pair_makespan_err_frac"]["max"] == 0
    assert r["pair_start_err_median_frac"]["max"] == 0


def test_a_stretched_launch_differs_by_the_stretch() -> None:
    tl = read_kernel_trace(TRACE)
    r = spread([tl, _stretched(tl, 1.1)])
    # b against a: (1.1 m - m) / m; a against b: (m - 1.1 m) / (1.1 m)
    assert r["pair_makespan_err_frac"]["max"] == pytest.approx(0.1, rel=1e-6)
    assert r["pair_makespan_err_frac"]["min"] == pytest.approx(0.1 / 1.1, rel=1e-6)
    assert r["makespan_range_frac"] == pytest.approx(0.1 / 1.05, rel=1e-6)
    assert 0 < r["pair_start_err_median_frac"]["min"] < 0.1


def test_report_groups_launches_by_shape_and_names_the_model(tmp_path: Path) -> None:
    for i in range(2):
        shutil.copy(TRACE, tmp_path / f"k1_R1_L1_{i}.json")
    (tmp_path / "notes.json").write_text("{}")  # not a launch: ignored
    r = report(tmp_path)
    assert list(r) == ["1x1"]
    assert r["1x1"]["between_launches"]["launches"] == 2
    assert r["1x1"]["model"]["profile"] == "h200-k1"
    assert r["1x1"]["model"]["makespan_err_frac"]["max"] > 0
    stock = report(tmp_path, "h200")["1x1"]["model"]  # another model, named
    assert stock["profile"] == "h200"
    assert stock["makespan_err_frac"]["max"] > r["1x1"]["model"]["makespan_err_frac"]["max"]


def test_nothing_is_overwritten_and_an_empty_folder_is_named(tmp_path: Path) -> None:
    from lab.trace_spread import main

    kept = tmp_path / "k1_R1_L1_0.json"
    kept.write_text("mine")
    # record refuses before any launch (so before it needs a GPU), and keeps the file
    assert main(["record", "--shapes", "1x1", "--launches", "1", "--dir", str(tmp_path)]) == 2
    assert kept.read_text() == "mine"
    out = tmp_path / "r.json"
    out.write_text("mine")
    assert main(["report", str(tmp_path), "--out", str(out)]) == 2
    assert out.read_text() == "mine"
    assert main(["report", str(tmp_path / "empty")]) == 2
    assert main(["record", "--shapes", "1y1", "--dir", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()


def test_without_a_gpu_record_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    from lab.trace_spread import main

    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    assert main(["record", "--shapes", "1x1", "--launches", "1", "--dir", str(tmp_path)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())
