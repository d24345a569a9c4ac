"""lab.gemv_tail: each gemv CTA's covariates and gemv1 end, and a shape's tail summary."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kda_sim.compare.counterpart import read_k1_trace
from lab.gemv_tail import CLASSES, TAIL, gemv_rows, main, summary

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R1_L2.json.gz"


def test_rows_one_a_gemv_cta_from_the_first_start() -> None:
    tl = read_k1_trace(TRACE)
    rows = gemv_rows(tl)
    assert len(rows) == sum(c.role == "gemv" for c in tl.ctas)
    assert min(r["start"] for r in rows) >= 0
    assert all(r["start"] < r["end"] for r in rows)
    assert all(r["xrdy"] is None or r["xrdy"] <= r["end"] for r in rows)


def _launch(order: list[int]) -> list[dict[str, Any]]:
    cls = CLASSES[3]
    return [
        {
            "cta": c,
            "sm": c % 7,
            "class": cls if c >= 20 else CLASSES[1],
            "start": c,
            "xrdy": c,
            "end": 100.0 * k,
        }
        for k, c in enumerate(order)
    ]


def test_a_fixed_tail_and_a_moving_one() -> None:
    fixed = summary([_launch(list(range(30))) for _ in range(3)])
    assert fixed["tail overlap"] == 1.0
    assert fixed["rank corr by cta"] == 1.0
    assert fixed["rho"]["cta"] == 1.0
    assert fixed["class share tail"][CLASSES[3]] == 1.0
    assert fixed["spread ns"] == [2900, 2900]
    moved = summary([_launch(list(range(30))), _launch(list(range(29, -1, -1)))])
    assert moved["tail overlap"] == 0.0  # the two launches' last TAIL share no CTA
    assert moved["rank corr by cta"] == -1.0
    assert len(moved["tail ctas"]) == 2 * TAIL


def test_no_folds_folder_exits_2(tmp_path: Path) -> None:
    assert main([str(TRACE), "--folds", str(tmp_path / "none")]) == 2
