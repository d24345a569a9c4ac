"""lab.recur_growth: k.recur's cost forms fitted on the traces' k.recur spans."""

from __future__ import annotations

import gzip
import shutil
from pathlib import Path

import numpy as np
import pytest

from kda_sim.compare.spread import trace_name
from lab.recur_growth import FORMS, fit, forms, main

ROOT = Path(__file__).resolve().parents[2]


def _spread(tmp_path: Path, shapes: list[tuple[int, int]]) -> Path:
    spread = tmp_path / "spread"
    spread.mkdir()
    for R, L in shapes:
        with gzip.open(ROOT / "traces" / f"k1_h200_R{R}_L{L}.json.gz", "rb") as f:
            (spread / trace_name(R, L, 0)).write_bytes(f.read())
    return spread


def test_a_growth_in_S_is_found_where_the_points_have_one() -> None:
    """Points made by (a + b L)(1 + g S): that form finds g and fits them exactly; the
    line in L does not."""
    R = np.array([1, 2, 4, 1, 2, 4, 1, 2, 4], float)
    L = np.array([1, 1, 1, 2, 2, 2, 4, 4, 4], float)
    S = R * L
    dur = (100.0 + 1000.0 * L) * (1.0 + 0.05 * S)
    p = {"R": R, "L": L, "S": S, "n": S, "sm": 0 * S, "dur": dur, "shape": np.arange(9)}
    every = np.ones(9, bool)
    pred, g = fit(p, "x (1 + g S)", every)
    assert g == pytest.approx(0.05, abs=1e-3) and pred == pytest.approx(dur, rel=1e-2)
    line, _ = fit(p, "line in L", every)
    assert np.max(np.abs(line / dur - 1)) > 0.1


def test_forms_on_traces_hold_each_shape_out(tmp_path: Path) -> None:
    spread = _spread(tmp_path, [(1, 2), (2, 2), (4, 2)])
    rep = forms([spread])
    assert rep["shapes"] == ["1x2", "2x2", "4x2"] and set(rep["forms"]) == set(FORMS)
    for f in rep["forms"].values():
        assert set(f["held_out"]) == set(rep["shapes"]) and f["rms"] >= 0.0
    # at one L the line in L is one number: it cannot follow R, a growth in S can
    assert rep["forms"]["x (1 + g S)"]["rms"] <= rep["forms"]["line in L"]["rms"]
    out = tmp_path / "r.json"
    assert main([str(spread), "--json", str(out)]) == 0 and out.stat().st_size > 0
    shutil.rmtree(spread)
