"""A corpus bug's counterexample as a timeline: the simulated launch with its stuck CTAs
(red, the wait-for chain bold) and the waits that passed on what an earlier launch left
(a cross where each passed)."""

from __future__ import annotations

from collections.abc import Sequence

import plotly.graph_objects as go

from kda_sim.app.bug_checks import Shown
from kda_sim.app.figures import Filter, Layer, rows_of, timeline_figure
from kda_sim.timeline.model import StuckWait

STALE_COLOR = "#ff7f0e"
STALE_TRACE = "passed on a stale value"
HEIGHT = 460  # two figures side by side: the corpus's launches are small or summarised


def stale_trace(shown: Shown) -> go.Scatter | None:
    """A cross at each stale pass, on its CTA's row (rows as :func:`timeline_figure`
    lays them out: every CTA, in order)."""
    tl = shown.timeline
    ypos = {c: i for i, c in enumerate(rows_of(tl, Filter()))}
    marks = [s for s in shown.stale if s.cta in ypos]
    if not marks:
        return None
    return go.Scatter(
        x=[(s.at_ns - tl.origin) / 1e3 for s in marks],
        y=[ypos[s.cta] for s in marks],
        mode="markers",
        marker={"symbol": "x", "size": 12, "color": STALE_COLOR, "line": {"width": 1}},
        name=STALE_TRACE,
        hovertext=[f"<b>CTA {s.cta}</b> {s.what}: passed on what {s.left_by} left" for s in marks],
        hovertemplate="%{hovertext}<extra></extra>",
    )


def counterexample_figure(shown: Shown, title: str, chain: Sequence[StuckWait] = ()) -> go.Figure:
    """One launch of a check: its stages, polls, stuck CTAs and stale passes."""
    fig = timeline_figure(
        [Layer(shown.label, shown.timeline, outline=False)],
        Filter(),
        chain=chain,
        title=title,
        height=HEIGHT,
    )
    tr = stale_trace(shown)
    if tr is not None:
        fig.add_trace(tr)
    return fig
