"""The timeline: a row a CTA grouped by role (or a row a role), stages coloured, the real
run and its simulation in two lanes of each row."""

from __future__ import annotations

import plotly.graph_objects as go
import streamlit as st

from kda_sim.app.bands import grouped_figure, roles_of
from kda_sim.app.data import Run
from kda_sim.app.figures import Layer, horizon
from kda_sim.app.views.common import (
    Ctx,
    chain_lines,
    critical_of,
    figure_cached,
    filter_controls,
    longest_chain,
    picture_cached,
    show_chart,
    show_picture,
    us,
)
from kda_sim.timeline.critical import CriticalPath

LAYOUTS = ("overlay", "side by side", "real only", "simulated only")
ROWS = ("a row a CTA", "by role")
TABLES = "tl_tables"  # the stage tables' expander (session state: True when open)
TABLES_LABEL = "Stage tables: real and simulated"
# the view opens on a picture of the chart (one image, against an SVG element a bar and
# plotly.js: most of the browser's first render, bench/README.md); the toggle's session
# state keeps the user's choice across reruns
INTERACTIVE = "tl_interactive"
INTERACTIVE_HELP = (
    "hover a bar for its times and polls, drag to zoom, pan; off: a picture of the same "
    "chart, quicker to show"
)
PICTURE_CAPTION = "A picture of the chart: turn on *Interactive chart* to hover, zoom and pan."


def layers_of(ctx: Ctx, layout: str) -> tuple[Layer, ...]:
    run = ctx.run
    real = run.real_linked  # inferred producers in the hover and the critical path
    if real is None:
        return (Layer("simulated", run.main, False),)
    if run.sim is None or layout == "real only":
        return (Layer("real", real, False),)
    if layout == "simulated only":
        return (Layer("simulated", run.sim, False),)
    return (Layer("real", real, False), Layer("simulated", run.sim, True))


def render(ctx: Ctx) -> None:
    run = ctx.run
    tl = run.main
    layout = "overlay"
    if run.real is not None and run.sim is not None:
        layout = st.radio(
            "Show",
            LAYOUTS,
            horizontal=True,
            key="tl_layout",
            help="overlay: each row in two lanes on one axis, the real run thick above, the "
            "simulation thin and dark below",
        )
    flt = filter_controls(tl, "tl")
    layers = layers_of(ctx, layout)
    grouping, expand, window = _row_controls(ctx, layers)
    grouped = grouping == "by role" and layout != "side by side"
    a, b, c, d = st.columns(4)
    per_cta = "drawn with a row a CTA" if grouped else None
    polls = a.toggle("Poll waits", value=True, key="tl_polls", disabled=grouped, help=per_cta)
    puts = b.toggle("Puts", value=False, key="tl_puts", disabled=grouped, help=per_cta)
    crit = c.toggle("Critical path", value=True, key="tl_crit")
    live = d.toggle("Interactive chart", value=False, key=INTERACTIVE, help=INTERACTIVE_HELP)

    cp = critical_of(f"{ctx.run_key}|{layers[0].label}", layers[0].tl)
    _metrics(ctx, cp)
    cp = cp if crit else None
    chain = tuple(longest_chain(layers[0].tl)) if layers[0].tl.stuck else ()

    def figure() -> go.Figure:
        if grouped:
            return grouped_figure(layers, flt, expand=expand, critical=cp, window_us=window)
        return figure_cached(
            f"{ctx.run_key}|{layout}|{window}",
            layers,
            flt,
            side_by_side=layout == "side by side",
            polls=polls,
            puts=puts,
            critical=cp,
            chain=chain,
            window_us=window,
        )

    with st.spinner("Drawing the timeline…"):
        if live:
            fig = figure()
        else:
            # every choice the figure is drawn from: the picture's name beside the run's
            first = chain[0].cta if chain else None  # as figure_cached names a chain
            view = repr((layout, grouped, expand, window, flt, polls, puts, crit, first))
            png = picture_cached(ctx.run_key, view, figure, on_disk=run.kind == "bundled")
    if tl.deadlock:
        st.error(
            f"This run does not finish: {len(tl.stuck)} CTAs are stuck (red bars; faint red "
            f"lines go to the CTA each one waits for; the longest wait-for chain is bold)."
        )
        if chain:
            st.markdown(chain_lines(layers[0].tl, list(chain)))
        if grouped:
            st.caption("The stuck bars and wait-for lines are drawn with *a row a CTA*.")
    if live:
        show_chart(fig, "timeline_chart")
    else:
        st.caption(PICTURE_CAPTION)
        show_picture(png, f"the timeline of {run.name}")
    # below the chart, off the first screen: drawn when opened (a rerun), so the first
    # render pays neither the three data grids nor their tables (bench/README.md)
    tables = st.expander(TABLES_LABEL, key=TABLES, on_change="rerun")
    if tables.open:
        with tables:
            _stage_tables(run)


def _stage_tables(run: Run) -> None:
    # imported here: pandas is about a second of a first render that draws no table
    from kda_sim.app.stage_tables import partner_table, slot_table, stage_table

    st.dataframe(stage_table(run.real, run.sim), hide_index=True, width="stretch")
    extra = (
        (
            slot_table(run.real, run.sim),
            "stages by task slot (a CTA's first task, its second, ...): a later task may "
            "run code the CTA has not run yet, in a build that unrolls its task slots (K1's "
            "second kda task at R = 4)",
        ),
        (
            partner_table(run.real, run.sim),
            "role stages by what shares the CTA's SM / CU (K1's: two gemv CTAs on one SM "
            "take longer than one beside an attn CTA, and the slowest end the weight stream)",
        ),
    )
    for table, caption in extra:  # each only where it tells CTAs apart
        if table is not None:
            st.caption(caption)
            st.dataframe(table, hide_index=True, width="stretch")


def _row_controls(
    ctx: Ctx, layers: tuple[Layer, ...]
) -> tuple[str, tuple[str, ...], tuple[float, float] | None]:
    """Rows a CTA or collapsed by role (some roles expanded), and the time window the
    chart opens on (None: the whole launch)."""
    a, b, c = st.columns([2, 3, 5])
    grouping = a.radio(
        "Rows",
        ROWS,
        horizontal=True,
        key="tl_rows",
        help="by role: each role's CTAs in one row, min / median / max of each stage's "
        "spans (real above, simulated below); expand a role to see its CTAs (not with "
        "side by side)",
    )
    expand: tuple[str, ...] = ()
    if grouping == "by role":
        expand = tuple(
            b.multiselect(
                "Expand roles",
                roles_of(layers[0].tl),
                default=[],
                key="tl_expand",
                help="roles drawn a row a CTA; the others stay one row each",
            )
        )
    end = round(max(horizon(ly.tl) for ly in layers) / 1e3, 2) or 1.0
    # the key names the run: another run's window may lie outside this one's launch
    lo, hi = c.slider(
        "Time window (us)",
        0.0,
        float(end),
        (0.0, float(end)),
        step=0.01,
        key=f"tl_window|{ctx.run_key}",
        help="the chart opens on this window; drag in it to zoom further, double-click "
        "to see the launch",
    )
    window = None if (lo, hi) == (0.0, float(end)) else (float(lo), float(hi))
    return grouping, expand, window


def _metrics(ctx: Ctx, cp: CriticalPath | None) -> None:
    run = ctx.run
    shown: list[tuple[str, str, str | None]] = []
    if run.real is not None:
        shown.append(("Real makespan", us(run.real.makespan), None))
    if run.sim is not None:
        delta = None
        if run.real is not None and run.real.makespan and run.sim.makespan:
            delta = f"{100 * (run.sim.makespan / run.real.makespan - 1):+.1f}% vs real"
        shown.append(("Simulated makespan", us(run.sim.makespan), delta))
    tl = run.main
    shown.append(("CTAs finished", f"{sum(c.finished for c in tl.ctas)} / {len(tl.ctas)}", None))
    if cp is not None:
        shown.append(("Critical path", f"{len(cp.handoffs())} hand-offs", f"{len(cp.ctas)} CTAs"))
    slots = tl.meta.extra.get("slots")
    if slots is not None:
        shown.append(("Resident slots", str(slots), f"{tl.meta.extra.get('occupancy')} a unit"))
    for col, (label, value, delta) in zip(st.columns(len(shown)), shown, strict=True):
        col.metric(label, value, delta, delta_color="off", delta_arrow="off")
