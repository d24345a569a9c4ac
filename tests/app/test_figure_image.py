"""The timeline as a picture (kda_sim/app/figure_image.py): what the chart draws is in
the picture, where the chart draws it: every bar, the rows and their labels, the role
bands, the legend, the title, the critical path; side by side, a picked hand-off's
arrows, a stuck launch and the rows by role too."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import plotly.graph_objects as go
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.text import Annotation
from PIL import Image

from kda_sim.app import data, figure_image
from kda_sim.app.bands import grouped_figure
from kda_sim.app.bug_checks import case_of, run_case
from kda_sim.app.bug_figures import counterexample_figure
from kda_sim.app.figures import Filter, HandoffView, Layer, timeline_figure
from kda_sim.app.views.common import longest_chain
from kda_sim.app.views.handoffs import default_pick
from kda_sim.timeline.critical import critical_path, poll_sources

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"

pytestmark = pytest.mark.skipif(not TRACE.exists(), reason="needs the bundled H200 traces")


@pytest.fixture(scope="module")
def run() -> data.Run:
    # the page's default view: a real H200 launch of 256 CTAs overlaid on its simulation
    return data.run_of_trace(TRACE.name, "bundled", data.read_bundled(TRACE))


@pytest.fixture(scope="module")
def overlay(run: data.Run) -> go.Figure:
    real = run.real_linked
    layers = (Layer("real", real, False), Layer("simulated", run.sim, True))
    return timeline_figure(layers, critical=critical_path(real))


def _bars(ax) -> list[PolyCollection]:
    return [c for c in ax.collections if isinstance(c, PolyCollection)]


def _bar_traces(fig: go.Figure, yaxis: str = "y") -> list:
    return [tr for tr in fig.data if tr.type == "bar" and (tr.yaxis or "y") == yaxis]


def test_the_overlay_draws_every_bar_where_the_chart_does(overlay: go.Figure) -> None:
    m = figure_image.drawn(overlay)
    ax = m.axes[0]
    polys = _bars(ax)
    traces = _bar_traces(overlay)
    assert [len(c.get_paths()) for c in polys] == [len(tr.y) for tr in traces]
    assert sum(len(tr.y) for tr in traces) > 3000  # 256 CTAs in two lanes, the poll waits
    for tr, coll in zip(traces, polys, strict=True):
        k = len(tr.y) // 2  # a bar from the middle of each trace: its corners
        xs, ys = coll.get_paths()[k].vertices[:4].T
        x0, y = float(tr.base[k]), float(tr.y[k])
        assert xs.min() == pytest.approx(x0) and xs.max() == pytest.approx(x0 + float(tr.x[k]))
        assert ys.min() == pytest.approx(y - tr.width / 2, abs=1e-6)
        assert ys.max() == pytest.approx(y + tr.width / 2, abs=1e-6)
    # the rows as the chart lays them out: CTA 0 on top, the same labels
    assert ax.get_ylim() == tuple(overlay.layout.yaxis.range)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == list(overlay.layout.yaxis.ticktext)
    assert ax.get_xlabel() == "time (us)"
    # the critical path: the chart's line, its gaps kept
    path = next(tr for tr in overlay.data if tr.name == "critical path")
    line = ax.lines[0]
    want = np.array([np.nan if v is None else v for v in path.x], dtype=float)
    np.testing.assert_allclose(line.get_xdata(), want)


def test_the_overlay_keeps_the_charts_legend_labels_and_title(overlay: go.Figure) -> None:
    m = figure_image.drawn(overlay)
    legend = [t.get_text() for t in m.legends[0].get_texts()]
    assert legend == [tr.name for tr in overlay.data if tr.showlegend is not False]
    assert "poll wait (real)" in legend and "critical path" in legend
    labels = {t.get_text() for t in m.axes[-1].texts}  # the roles, at the plot's right
    assert {"attn (56)", "gemv (197)"} <= labels
    assert [t.get_text() for t in m.texts] == [overlay.layout.title.text]
    # a faint band behind each role's rows, below the bars
    bands = [p for p in m.axes[0].patches if p.get_zorder() == 0]
    assert len(bands) == len(overlay.layout.shapes) == 3


def test_the_png_is_the_chart_at_twice_its_css_size_with_its_colours(
    overlay: go.Figure,
) -> None:
    png = figure_image.png_of(overlay)
    im = Image.open(io.BytesIO(png)).convert("RGB")
    assert im.size == (2 * figure_image.WIDTH_PX, 2 * overlay.layout.height)
    pixels = np.asarray(im).reshape(-1, 3)
    colours = {tuple(int(v) for v in p) for p in np.unique(pixels, axis=0)}
    by_name = {tr.name: tr for tr in overlay.data}
    # each lane's colour, filled as the chart fills it (the thin simulated lane included)
    for name in ("k.conv (real)", "k.conv (simulated)", "load_x (simulated)"):
        hexa = by_name[name].marker.color.lstrip("#")
        assert tuple(int(hexa[i : i + 2], 16) for i in (0, 2, 4)) in colours, name


def test_side_by_side_draws_each_run_on_its_own_plot(run: data.Run) -> None:
    layers = (Layer("real", run.real_linked, False), Layer("simulated", run.sim, True))
    fig = timeline_figure(layers, side_by_side=True)
    m = figure_image.drawn(fig)
    left, right = m.axes[0], m.axes[1]
    assert [len(c.get_paths()) for c in _bars(right)] == [
        len(tr.y) for tr in _bar_traces(fig, "y2")
    ]
    assert left.get_position().x1 <= right.get_position().x0  # apart, in a row
    assert left.get_ylim() == right.get_ylim()  # the same rows
    titles = {t.get_text() for t in m.axes[-1].texts}
    assert {"real", "simulated"} <= titles


def test_a_picked_handoff_draws_its_arrows_and_window(run: data.Run) -> None:
    tl = run.real_linked
    cta, i = default_pick(tl, critical_path(tl))
    h = HandoffView(cta, tl.ctas[cta].polls[i], tuple(poll_sources(tl, cta, i)))
    fig = timeline_figure([Layer("real", tl, False)], handoff=h)
    m = figure_image.drawn(fig)
    ax = m.axes[0]
    arrows = [t for t in ax.texts if isinstance(t, Annotation)]
    assert len(arrows) == sum(1 for a in fig.layout.annotations if a.showarrow) > 0
    assert ax.get_xlim() == pytest.approx(tuple(fig.layout.xaxis.range))
    bold = [t.get_text() for t in ax.get_yticklabels() if t.get_fontweight() == "bold"]
    assert f"CTA {cta} · picked poll" in bold


def test_a_stuck_launch_shows_its_stuck_ctas_and_wait_for_chain() -> None:
    shown = run_case(case_of("flashmoe_h20"), False).launches[0]
    chain = longest_chain(shown.timeline)
    fig = counterexample_figure(shown, "bug", chain)
    m = figure_image.drawn(fig)
    legend = [t.get_text() for t in m.legends[0].get_texts()]
    assert {"stuck (waits)", "never resident (no free slot)", "wait-for chain"} <= set(legend)
    stuck = next(tr for tr in fig.data if tr.name == "stuck (waits)")
    polys = _bars(m.axes[0])
    assert len(stuck.y) in [len(c.get_paths()) for c in polys]


def test_rows_by_role_put_the_legend_under_the_plot(run: data.Run) -> None:
    layers = (Layer("real", run.real_linked, False), Layer("simulated", run.sim, True))
    fig = grouped_figure(layers, Filter())
    m = figure_image.drawn(fig)
    ax = m.axes[0]
    assert sum(len(c.get_paths()) for c in _bars(ax)) == sum(len(tr.y) for tr in fig.data)
    legend = m.legends[0]
    m.canvas.draw()
    assert legend.get_window_extent().y1 < ax.get_window_extent().y0  # under the axis
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    assert ticks == list(fig.layout.yaxis.ticktext)


def test_a_figure_read_back_from_its_json_draws_the_same(overlay: go.Figure) -> None:
    # the chart's JSON holds its arrays as base64 typed arrays (dtype and bdata)
    back = go.Figure(json.loads(overlay.to_json()))
    assert isinstance(back.data[0].to_plotly_json()["y"], dict)
    a, b = (_bars(figure_image.drawn(f).axes[0]) for f in (overlay, back))
    for ca, cb in zip(a, b, strict=True):
        np.testing.assert_allclose(ca.get_paths()[0].vertices, cb.get_paths()[0].vertices)
