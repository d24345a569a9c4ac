"""bench/browser_breakdown.py's accounting, without a browser or a server: the profiler's
samples by script file, the figure's bytes by field, the script run's rows."""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

import numpy as np
import plotly.graph_objects as go

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import browser_breakdown as bd  # noqa: E402


def test_self_time_goes_to_the_script_file_of_each_sample() -> None:
    frame = {"functionName": "", "url": ""}
    profile = {
        "nodes": [
            {"id": 1, "callFrame": {**frame, "functionName": "(root)"}},
            {"id": 2, "callFrame": {**frame, "functionName": "(idle)"}},
            {"id": 3, "callFrame": {**frame, "url": "http://h/static/js/PlotlyChart.abc.js?x=1"}},
            {"id": 4, "callFrame": {**frame, "url": "http://h/static/js/index.def.js"}},
            {"id": 5, "callFrame": {**frame, "functionName": "getBoundingClientRect"}},
        ],
        "samples": [3, 3, 4, 2, 5, 3],
        "timeDeltas": [1000, 2000, 2000, 9000, 3000, 1000],  # us
    }
    got = bd.self_time_by_script(profile)
    # idle time is no work; a native function without a script keeps its own name
    assert got == {
        "PlotlyChart.abc.js": 0.004,
        "getBoundingClientRect": 0.003,
        "index.def.js": 0.002,
    }
    assert list(got) == ["PlotlyChart.abc.js", "getBoundingClientRect", "index.def.js"]


def test_the_figure_bytes_count_points_of_typed_arrays_and_fields() -> None:
    fig = go.Figure(
        go.Bar(
            x=np.arange(5, dtype=np.float32),
            y=np.arange(5, dtype=np.int32),
            base=[0.5] * 5,
            hovertext=[f"bar {i}" for i in range(5)],
            orientation="h",
        )
    )
    fig.add_trace(go.Scatter(x=[1.0, 2.0, 3.0], y=[1, 2, 3]))
    got = bd.figure_bytes(fig.to_json())
    assert got["traces"] == 2
    assert got["points"] == 5 + 3
    assert got["total"] == len(fig.to_json())
    assert got["by_field"]["hovertext"] == len('["bar 0", "bar 1", "bar 2", "bar 3", "bar 4"]')


def test_the_script_run_rows_are_the_apps_and_streamlits_by_cumulative_time() -> None:
    from kda_sim import cache

    prof = cProfile.Profile()
    prof.enable()
    for i in range(50):
        cache.key("x", i)
    prof.disable()
    rows = bd._top(pstats.Stats(prof), 10)
    names = [r["function"] for r in rows]
    assert any(n.startswith("kda_sim/cache.py:") and n.endswith(" key") for n in names), names
    key = next(r for r in rows if r["function"].endswith(" key"))
    assert key["calls"] == 50
    assert [r["cum_s"] for r in rows] == sorted((r["cum_s"] for r in rows), reverse=True)
    assert not any("json/" in n for n in names)  # the standard library is left out
