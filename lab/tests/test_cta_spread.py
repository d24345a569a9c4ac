"""lab.cta_spread: each CTA's stage factors against its class, and a shape's summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kda_sim.compare.counterpart import read_k1_trace
from lab.cta_spread import ANCHOR, factors, main, summary

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R2_L2.json.gz"


def test_a_gemv_ctas_factors_centre_on_one() -> None:
    tl = read_k1_trace(TRACE)
    f = factors(tl)
    gemv = [c.cta for c in tl.ctas if c.role == "gemv"]
    assert all(ANCHOR in f[c] and "gemv1" in f[c] for c in gemv)
    # each class's median is 1 by construction, so the pooled median is near it
    assert abs(float(np.median([f[c][ANCHOR] for c in gemv])) - 1.0) < 0.02
    assert all(v > 0 for fc in f.values() for v in fc.values())


def _launch(scale: dict[int, float], other: dict[int, float]) -> dict[int, dict[str, float]]:
    return {c: {ANCHOR: s, "gemv1": s, "k.stage": other[c]} for c, s in scale.items()}


def test_one_factor_a_cta_and_a_repeat() -> None:
    rng = np.random.default_rng(0)
    drawn = {c: float(np.exp(0.1 * rng.standard_normal())) for c in range(40)}
    noise = [{c: float(rng.uniform(0.5, 1.5)) for c in range(40)} for _ in range(3)]
    rep = summary([_launch(drawn, n) for n in noise])
    assert rep["rho with gemv0"]["gemv1"] == 1.0  # the same factor: rank correlation 1
    assert abs(rep["rho with gemv0"]["k.stage"]) < 0.5  # drawn apart: none to speak of
    assert rep["repeat by cta"] == 1.0  # the same CTAs each launch
    assert 0.05 < rep["spread"][ANCHOR]["sd_log"] < 0.2
    fresh = summary(
        [
            _launch({c: float(np.exp(0.1 * rng.standard_normal())) for c in range(40)}, n)
            for n in noise
        ]
    )
    assert abs(fresh["repeat by cta"]) < 0.5  # drawn afresh each launch


def test_no_such_folder_exits_2(tmp_path: Path) -> None:
    assert main([f"x={tmp_path / 'none'}"]) == 2
