"""The timeline, hand-off and heatmap figures read at 256 CTAs: real and simulated in
lanes of their own, the rows a hand-off joins labelled, the heatmap's CTAs labelled, the
legend clear of the chart's toolbars."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.app import data, figures
from kda_sim.app.figures import Filter, HandoffView, Layer
from kda_sim.timeline.critical import critical_path, poll_sources
from kda_sim.timeline.model import Timeline

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"


@pytest.fixture(scope="module")
def run() -> data.Run:
    # a real H200 launch of 256 CTAs with its simulation, as the page opens on it
    return data.run_of_trace(TRACE.name, "bundled", data.read_bundled(TRACE))


def _by_name(fig) -> dict:
    return {tr.name: tr for tr in fig.data}


def test_an_overlay_gives_real_and_simulated_their_own_lanes(run: data.Run) -> None:
    assert run.real is not None and run.sim is not None and len(run.real.ctas) == 256
    layers = [Layer("real", run.real, False), Layer("simulated", run.sim, True)]
    fig = figures.timeline_figure(layers)
    tr = _by_name(fig)
    real, sim = tr["k.conv (real)"], tr["k.conv (simulated)"]
    # each CTA's row: the real bar above its centre, the simulation's below, apart
    real_y = {round(float(y) % 1, 2) for y in real.y}
    sim_y = {round(float(y) % 1, 2) for y in sim.y}
    assert real_y == {round(1 + figures.REAL_LANE[0], 2)} and sim_y == {figures.SIM_LANE[0]}
    assert figures.REAL_LANE[0] + real.width / 2 < figures.SIM_LANE[0] - sim.width / 2
    # filled both, the simulation darker: no transparent outline on a filled bar
    assert sim.marker.color == figures.shade(real.marker.color, figures.SIM_SHADE)
    assert sim.marker.color != "rgba(0,0,0,0)"
    # a legend entry a stage, showing and hiding both lanes
    assert real.legendgroup == sim.legendgroup == "k.conv" and sim.showlegend is False
    # rows tall enough for the thin lane to stay over a pixel
    plot_px = fig.layout.height - fig.layout.margin.t - fig.layout.margin.b
    assert plot_px / 256 * sim.width >= 1.0


def test_a_single_run_keeps_one_bar_a_row(run: data.Run) -> None:
    fig = figures.timeline_figure([Layer("real", run.real, False)])
    assert {float(y) % 1 for y in _by_name(fig)["k.conv"].y} == {0.0}


@pytest.mark.parametrize("two", [False, True])
def test_the_legend_leaves_the_toolbars_their_room(run: data.Run, two: bool) -> None:
    layers = [Layer("real", run.real, False)]
    if two:
        layers.append(Layer("simulated", run.sim, True))
    fig = figures.timeline_figure(layers)
    shown = sum(1 for tr in fig.data if tr.showlegend is not False)
    rows = -(-shown // figures.LEGEND_PER_ROW)
    lg = fig.layout.legend
    assert lg.y == 1.0 and lg.yanchor == "bottom"  # above the plot, under the margin's top
    title_px = 30 if fig.layout.title.text else 0
    free = fig.layout.margin.t - title_px - rows * figures.LEGEND_ROW_PX
    assert free >= figures.TOOLBAR_PX


def _handoff(tl: Timeline) -> HandoffView:
    cp = critical_path(tl)
    from kda_sim.app.views.handoffs import default_pick

    cta, i = default_pick(tl, cp)
    return HandoffView(cta, tl.ctas[cta].polls[i], tuple(poll_sources(tl, cta, i)))


def test_a_handoff_labels_its_polls_row_and_its_producers(run: data.Run) -> None:
    tl = run.real_linked
    h = _handoff(tl)
    fig = figures.timeline_figure([Layer("real", tl, False)], handoff=h)
    ticks = dict(zip(fig.layout.yaxis.tickvals, fig.layout.yaxis.ticktext, strict=True))
    rows = figures.rows_of(tl, Filter())
    assert ticks[rows.index(h.cta)] == f"<b>CTA {h.cta} · picked poll</b>"
    # this trace records no puts: the producer is the model's, said so
    assert h.inferred and h.poll.producer is not None
    assert ticks[rows.index(h.poll.producer)] == f"<b>CTA {h.poll.producer} · put (inferred)</b>"
    # no plain label crowds the named rows
    named = [i for i, t in ticks.items() if t.startswith("<b>")]
    plain = [i for i, t in ticks.items() if not t.startswith("<b>")]
    assert all(abs(i - j) > 1 for i in named for j in plain)


def test_recorded_puts_label_the_one_that_released_the_poll(run: data.Run) -> None:
    tl = run.sim  # a simulation records its puts
    h = _handoff(tl)
    assert h.sources and not h.inferred
    labels = figures.handoff_labels(h)
    last = next(s.cta for s in h.sources if s.last)
    assert labels[last] == f"<b>CTA {last} · put (released it)</b>"
    assert len(labels) <= figures.MAX_PRODUCER_LABELS + 1


def test_the_heatmap_labels_its_ctas_at_256(run: data.Run) -> None:
    rows = figures.rows_of(run.real, Filter())
    z, stages = figures.poll_wait_matrix(run.real, rows)
    fig = figures.heatmap_figure(z, stages, rows, "real poll wait (us)")
    y = fig.layout.yaxis
    assert y.showticklabels is not False
    assert len(y.ticktext) >= 16 and y.ticktext[0] == f"CTA {rows[0]}"
    assert all(t == f"CTA {rows[v]}" for v, t in zip(y.tickvals, y.ticktext, strict=True))
    # the hover names the CTA of every cell
    assert fig.data[0].text[100][0] == f"CTA {rows[100]}"
