"""The floor's report (kda_sim.checks.floor_report): a table line a rung with its numbers,
and a figure whose bars add up to each rung's makespan."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.checks.floor_report import plot, table

REPORT = {
    "config": "R=1 L=1 nb=8 kda0=0",
    "rows": [
        {
            "step": "the profile (h200-k1)",
            "makespan_us": 41.9,
            "bound_us": 19.2,
            "x_bound": 41.9 / 19.2,
            "handoff_latency_us": 3.2,
            "gemv_us": 26.7,
        },
        {
            "step": "+ every stage's compute free",
            "makespan_us": 35.4,
            "bound_us": 19.2,
            "x_bound": 35.4 / 19.2,
            "handoff_latency_us": 2.5,
            "gemv_us": 26.5,
        },
    ],
}


def test_the_table_has_a_line_a_rung_with_its_figures() -> None:
    lines = table(REPORT).splitlines()
    assert lines[0].startswith("R=1 L=1 nb=8 kda0=0:")
    assert len(lines) == 2 + len(REPORT["rows"])
    assert lines[2].startswith("the profile (h200-k1)")
    assert "41.9 (2.18x)" in lines[2] and lines[2].split()[-2:] == ["3.2", "26.7"]
    assert "35.4 (1.84x)" in lines[3]


def test_the_figure_stacks_each_rungs_makespan(tmp_path: Path, monkeypatch) -> None:
    import matplotlib.axes

    widths: list[list[float]] = []
    barh = matplotlib.axes.Axes.barh

    def spy(self, y, width, *a, **k):
        widths.append(list(width))
        return barh(self, y, width, *a, **k)

    monkeypatch.setattr(matplotlib.axes.Axes, "barh", spy)
    out = tmp_path / "floor.png"
    plot(REPORT, out)
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert len(widths) == 3  # gemv, hand-offs, the rest
    totals = [sum(col) for col in zip(*widths, strict=True)]
    assert totals == pytest.approx([r["makespan_us"] for r in REPORT["rows"]])
