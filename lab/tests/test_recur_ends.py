"""lab/recur_ends.py: each kda task's k.recur start and end, what it last waited for in
k.gates, and how far apart a head's chunks and a slot's tasks end, in a launch and in a
seeded run of the model; bad input exits 2."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from kda_sim.importers import load_trace
from kda_sim.kernels.k1.constants import NVCH
from lab.cta_spread import seeded_run, spread_map
from lab.recur_ends import WAITS, chunk_rows, main, run_figures, side_summary

TRACES = Path(__file__).resolve().parents[2] / "traces"
TRACE = TRACES / "k1_h200_R2_L2.json.gz"


def test_chunk_rows_in_a_launch() -> None:
    rows = chunk_rows(load_trace(TRACE))
    assert len(rows) == 2 * 12 * NVCH  # R heads x 12 x 8 chunks, one row a task
    for r in rows:
        assert r["waited"] in WAITS
        # k.recur polls nothing: it begins where k.gates ends, after k.gates' last poll
        assert r["recur_start"] == r["gates_end"] >= r["beta_sat"] >= r["qk_sat"]
        assert r["recur_end"] > r["recur_start"]
    heads = {tuple(r["head"]) for r in rows}
    assert len(heads) == 2 * 12


def test_the_models_chunks_end_as_they_start() -> None:
    """With the spread on the gemv stages alone the model prices every chunk's k.gates
    compute and k.recur alike: a head's chunks end k.recur as far apart as they came out
    of their last poll, and a task's k.recur does not shorten when it starts later."""
    sim = seeded_run(load_trace(TRACE), "h200-k1", spread_map(0.025, ("gemv0", "gemv1")), 1)
    fig = run_figures(chunk_rows(sim))
    for h in fig["heads"]:
        assert h["chunks"] == NVCH
        assert h["recur_end"] == pytest.approx(h["beta_sat"], abs=1.0)
    s = side_summary([fig])
    assert s["dur_on_start"] == pytest.approx(0.0, abs=1e-6)
    assert s["slots"]["0"]["recur_slope"] == pytest.approx(1.0, abs=1e-3)


def _row(head: int, chunk: int, beta: float, end: float) -> dict:
    return {
        "head": [0, head],
        "chunk": chunk,
        "cta": chunk,
        "slot": 0,
        "qk_sat": beta - 100.0,
        "beta_sat": beta,
        "gates_end": beta + 50.0,
        "recur_start": beta + 50.0,
        "recur_end": end,
        "waited": "none",
    }


def test_a_common_end_reads_as_slope_0_and_equal_work_as_1() -> None:
    starts = np.arange(NVCH) * 40.0
    common = run_figures([_row(0, c, b, 5000.0) for c, b in enumerate(starts)])
    equal = run_figures([_row(0, c, b, b + 5000.0) for c, b in enumerate(starts)])
    assert common["slots"]["0"]["recur_slope"] == pytest.approx(0.0)
    assert equal["slots"]["0"]["recur_slope"] == pytest.approx(1.0)
    assert side_summary([common])["dur_on_start"] == pytest.approx(-1.0)
    assert side_summary([equal])["dur_on_start"] == pytest.approx(0.0)
    assert common["heads"][0]["recur_end"] == 0.0
    assert equal["heads"][0]["recur_end"] == pytest.approx(starts[-1])


def test_main_writes_both_sides(tmp_path: Path) -> None:
    d = tmp_path / "warm"
    d.mkdir()
    shutil.copy(TRACE, d / "k1_R2_L2_0.json")
    out = tmp_path / "out.json"
    argv = [str(d), "--profile", "h200-k1", "--seeds", "1", "--detail", "1", "--json", str(out)]
    assert main(argv) == 0
    s = json.loads(out.read_text())["shapes"]["2x2"]
    assert s["real"]["heads"] == s["model"]["heads"] == 2 * 12
    assert len(s["detail"]["real"]) == len(s["detail"]["model"]) == NVCH


@pytest.mark.parametrize(
    "extra",
    [
        ["--shapes", "2by2"],
        ["--shapes", "1x1"],
        ["--seeds", "0"],
        ["--spread", "9"],
        ["--detail", "-1"],
    ],
)
def test_bad_input_exits_2(tmp_path: Path, extra: list[str], capsys) -> None:
    d = tmp_path / "warm"
    d.mkdir()
    shutil.copy(TRACE, d / "k1_R2_L2_0.json")
    assert main([str(d), "--profile", "h200-k1", *extra]) == 2
    assert "recur_ends:" in capsys.readouterr().err
