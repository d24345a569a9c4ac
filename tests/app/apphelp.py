"""Helpers the app's tests share (the fixtures are in conftest.py).

``measured_like`` is a jittered simulation relabelled ``measured``: the app treats it
as a real trace (it overlays the nominal simulation of the same configuration), which
is all these tests need until real H200 traces are bundled.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
from streamlit.testing.v1 import AppTest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.colors import STAGES
from kda_sim.timeline.model import Timeline

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app.py"
TIMEOUT = 120  # a cold first run imports streamlit, plotly, pandas and simulates


def measured_like(gpu: str = "h200", R: int = 2, L: int = 2, seed: int = 7) -> Timeline:
    tl = simulate(LaunchConfig(R, L), load_profile(gpu), seed=seed, jitter=0.2).timeline
    tl.meta.source = "measured"
    tl.meta.clock = "test clock ns"
    tl.meta.extra = {}
    return tl


def figure_of(at: AppTest, index: int = 0) -> dict:
    """The plotly figure a chart element carries, as the browser gets it; on the
    timeline view, which opens on a picture of its chart, the interactive chart's (the
    view's toggle turned on: it stays on for the rest of the test)."""
    from kda_sim.app.views.timeline import INTERACTIVE

    charts = at.get("plotly_chart")
    if not charts and at.get("image") and at.toggle(key=INTERACTIVE).value is False:
        at.toggle(key=INTERACTIVE).set_value(True).run()
        no_failure(at)
        charts = at.get("plotly_chart")
    assert charts, "no plotly chart on the page"
    return json.loads(charts[index].proto.spec)


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def no_failure(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    assert "view could not show" not in texts(at.error), texts(at.error)
    return at


def stage_tables(at: AppTest) -> AppTest:
    """The timeline's stage tables: drawn only once their expander is opened (a rerun)."""
    from kda_sim.app.views.timeline import TABLES

    at.session_state[TABLES] = True
    at.run()
    return no_failure(at)


def goto(at: AppTest, view: str) -> AppTest:
    at.sidebar.radio(key="view").set_value(view).run()
    return no_failure(at)


def stamps_of(tl: Timeline) -> bytes:
    """The twin's [256, 15] stamp tensor (100 MHz ticks) of a timeline, as .npy bytes:
    point 0 the start, point k the end of stage k; the last kda task survives."""
    arr = np.zeros((len(tl.ctas), 15), dtype=np.int64)

    def tick(ns: float) -> int:
        return 1_000_000 + int(ns // 10)

    for c in tl.ctas:
        arr[c.cta, 0] = tick(c.start)
        for s in c.stages:  # later tasks overwrite earlier ones, as on the device
            arr[c.cta, 1 + STAGES.index(s.name)] = tick(s.end)
        if c.role == "attn" and arr[c.cta, 2] == 0:
            arr[c.cta, 2] = arr[c.cta, 1]  # every attn CTA stamps the gate point
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()
