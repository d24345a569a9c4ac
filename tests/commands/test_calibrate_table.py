"""``kda-sim calibrate``'s text table: its columns stay lined up whatever a kernel's
trace names and shapes (a grid barrier's shape has four fields)."""

from __future__ import annotations

from typing import Any

from kda_sim.commands.calibrate import SHAPE_WIDTH, TRACE_WIDTH, report_table


def _row(trace: str, shape: str, kind: str) -> dict[str, Any]:
    return {
        "trace": trace,
        "shape": shape,
        "set": kind,
        "real_makespan_ns": 11100.0,
        "makespan_err_before": -0.548,
        "makespan_err": -0.007,
        "start_err_median": 0.0028,
        "start_err_p90": 0.0073,
        "stage_err": 0.023,
    }


def test_a_long_shape_and_name_keep_the_columns_lined_up() -> None:
    rows = [
        _row(
            "gridbarrier_h100_ctas8_rounds2.json",
            "ctas=8 rounds=2 broken=False last_resets=False",
            "fit",
        ),
        _row(
            "gridbarrier_h100_ctas132_rounds4.json",
            "ctas=132 rounds=4 broken=False last_resets=False",
            "held out",
        ),
        _row("k1_h200_R1_L1.json.gz", "R=1 L=1", "fit"),
    ]
    head, *lines = report_table(rows).splitlines()
    at = head.index("set")  # the set column starts where its header does, on every row
    assert [ln[at : at + 8].rstrip() for ln in lines] == ["fit", "held out", "fit"]
    assert {len(ln) for ln in lines} == {len(head)}
    # nothing cut: the two rounds of the grid barrier stay apart by name
    for r, ln in zip(rows, lines, strict=True):
        assert ln.startswith(r["trace"] + " ") and r["shape"] in ln


def test_k1s_short_names_keep_the_narrowest_widths() -> None:
    head, line = report_table([_row("k1_h200_R1_L1.json.gz", "R=1 L=1", "fit")]).splitlines()
    assert head.index("set") == TRACE_WIDTH + 1 + SHAPE_WIDTH + 1
    assert line.index("R=1 L=1") == TRACE_WIDTH + 1 + SHAPE_WIDTH - len("R=1 L=1")
