"""Compare a real run with its simulation: error table, poll-wait heatmap, clocks, findings.

The error table, clock offsets and conformance findings come from ``kda_sim.compare``;
the heatmap is computed here from the timelines.
"""

from __future__ import annotations

from typing import Any

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from kda_sim.app.figures import Filter, heatmap_figure, poll_wait_matrix, rows_of, stage_order
from kda_sim.app.outcome import plain
from kda_sim.app.stage_tables import stage_table
from kda_sim.app.views.common import Ctx, cached_call, show_chart
from kda_sim.compare.clocks import clock_offsets
from kda_sim.compare.conformance import conformance
from kda_sim.compare.diff import compare
from kda_sim.timeline.model import Timeline


def render(ctx: Ctx) -> None:
    run = ctx.run
    real, sim = run.real, run.sim
    if real is None:
        st.info(
            "This run is a simulation alone: the comparison needs a real trace (bundled in "
            "traces/ or brought in 'Bring a trace'). Below: the simulation's own figures."
        )
    st.subheader("Per-stage error")
    cmp = None
    if real is not None and sim is not None:
        with st.spinner("Aligning clocks and matching stages…"):
            out = cached_call(compare, ctx.run_key, real, sim)
        if out.ok:
            cmp = out.value
            _comparison(cmp, real)
        else:
            st.warning(out.message)
    with st.expander("Stage means of each run", expanded=cmp is None):
        st.dataframe(stage_table(real, sim), hide_index=True, width="stretch")

    st.subheader("Poll wait, CTA x stage")
    _heatmap(real, sim, run.main)

    st.subheader("Clock offsets")
    if real is None:
        st.info("Needs a real trace.")
    elif cmp is not None and getattr(cmp, "fit", None) is not None:
        _offsets(cmp.fit)  # the comparison already fitted them: no second fit
    else:
        with st.spinner("Fitting clock offsets…"):
            out = cached_call(clock_offsets, ctx.run_key, real)
        if out.ok:
            _offsets(out.value)
        else:
            st.warning(out.message)

    st.subheader("Conformance findings")
    if real is None:
        st.info("Needs a real trace.")
    else:
        with st.spinner("Checking the trace against the model's order…"):
            out = cached_call(conformance, ctx.run_key, real)
        if out.ok:
            _conformance(out.value)
        else:
            st.warning(out.message)


def _num(d: dict, *path: str) -> float | None:
    v: Any = d
    for k in path:
        v = v.get(k) if isinstance(v, dict) else None
    return v if isinstance(v, int | float) and not isinstance(v, bool) else None


def _comparison(cmp: object, real: Timeline) -> None:
    d = plain(cmp)
    if not isinstance(d, dict):
        st.json(d, expanded=1)
        return
    cols = st.columns(4)
    err = _num(d, "makespan_err")
    cols[0].metric("Makespan error (sim - real)", "—" if err is None else f"{100 * err:+.1f}%")
    for col, (label, key) in zip(
        cols[1:],
        (("median", "Start error, median (of makespan)"), ("p90", "Start error, p90")),
        strict=False,
    ):
        v = _num(d, "start_err_frac", label)
        col.metric(key, "—" if v is None else f"{100 * v:.2f}%")
    cols[3].metric("Matched (CTA, stage)", str(d.get("matched", "—")))
    by = d.get("by_stage")
    if isinstance(by, dict) and by:
        rows = []
        order = {n: i for i, n in enumerate(stage_order(real, by))}
        for stage, v in sorted(by.items(), key=lambda kv: order.get(kv[0], 99)):
            row: dict[str, Any] = {"stage": stage}
            for k, x in (v or {}).items():
                if isinstance(x, int | float) and not isinstance(x, bool):
                    label, value = _pretty(k, x)
                    row[label] = value
            rows.append(row)
        st.dataframe(pd.DataFrame(rows), hide_index=True, width="stretch")
    path = d.get("critical_path")
    if isinstance(path, dict) and isinstance(path.get("part"), dict):
        part = path["part"]
        st.caption(
            f"Critical paths: {part.get('common_steps')} steps shared at their ends; they part "
            f"at {_step(part.get('real'))} (real) vs {_step(part.get('sim'))} (simulated)."
        )


def _step(s: object) -> str:
    if not isinstance(s, dict):
        return "the path's start"
    dur = (s.get("end", 0) - s.get("start", 0)) / 1e3
    src = f" from CTA {s['src']}" if s.get("src") is not None else ""
    what = f" {s['label']}" if s.get("label") else ""
    return f"{s.get('kind')}{what} on CTA {s.get('cta')}{src} ({dur:.2f} us)"


def _pretty(key: str, x: float) -> tuple[str, float]:
    """``dur_err_median_ns`` -> ("duration error median (us)", x / 1e3)."""
    words = {"err": "error", "dur": "duration", "n": "matched", "sim": "simulated"}
    unit, scale = "", 1.0
    if key.endswith("_ns"):
        key, unit, scale = key[:-3], " (us)", 1e-3
    elif key.endswith("_frac"):
        key, unit, scale = key[:-5], " (% of makespan)", 100.0
    label = " ".join(words.get(w, w) for w in key.split("_")) + unit
    return label, round(x * scale, 3)


def _offsets(fit: object) -> None:
    d = plain(fit)
    units, offsets = getattr(fit, "units", None), getattr(fit, "offsets", None)
    if isinstance(d, dict):
        cols = st.columns(4)
        for col, (k, label) in zip(
            cols,
            (
                ("residual_ns", "Residual"),
                ("margin_ns", "Smallest margin"),
                ("resolution_ns", "Clock tick"),
                ("handoffs", "Hand-offs used"),
            ),
            strict=True,
        ):
            v = _num(d, k)
            col.metric(label, "—" if v is None else (f"{v:.0f} ns" if k.endswith("ns") else v))
    mode = getattr(fit, "mode", None)
    if mode == "global" or (offsets is not None and len(offsets) and not any(offsets)):
        st.caption(
            "One clock for the whole GPU (this trace's clock is device-wide): no unit's "
            "clock is offset, so there is nothing to draw."
            if mode == "global"
            else "Every unit's clock agrees with the others: no offset to draw."
        )
    elif units is not None and offsets is not None and len(units):
        fig = go.Figure(
            go.Bar(
                x=[str(u) for u in units],
                y=list(offsets),
                marker={"color": "#1f77b4"},
                hovertemplate="unit %{x}: %{y:.1f} ns<extra></extra>",
            )
        )
        fig.update_layout(
            title={
                "text": "offset of each unit's clock (observed - true), ns",
                "font": {"size": 13},
            },
            height=260,
            margin={"l": 40, "r": 10, "t": 35, "b": 30},
            xaxis={"type": "category", "showticklabels": len(units) <= 64},
        )
        show_chart(fig, "offsets_chart")
    elif not isinstance(d, dict):
        st.json(d, expanded=1)


def _conformance(conf: object) -> None:
    d = plain(conf)
    if not isinstance(d, dict):
        st.json(d, expanded=1)
        return
    counts = d.get("counts") or {}
    summary = ", ".join(f"{n} {k}" for k, n in counts.items()) or "no counts"
    partial = d.get("partial")
    if isinstance(partial, dict):  # never "conforms": what it lacks was not checked
        said = partial.get("missing")
        st.warning(f"A partial trace: {said}. Only the part recorded was checked.")
    if d.get("conforms") is True:
        st.success(f"The trace conforms to the model's happens-before order ({summary}).")
    elif d.get("conforms") is False and any(
        n for k, n in counts.items() if k != "skew" and isinstance(n, int)
    ):
        st.error(f"The trace breaks the model's order: {summary}.")
    findings = d.get("findings")
    if isinstance(findings, list) and findings:
        st.dataframe(pd.DataFrame(findings), hide_index=True, width="stretch")


def _heatmap(real: Timeline | None, sim: Timeline | None, main: Timeline) -> None:
    tl = real or main
    rows = rows_of(tl, Filter())
    both = real is not None and sim is not None
    which = (
        st.radio(
            "Heatmap of", ["real", "simulated", "real - simulated"], horizontal=True, key="cmp_heat"
        )
        if both
        else "simulated"
    )
    if which == "real - simulated" and real is not None and sim is not None:
        zr, stages = poll_wait_matrix(real, rows)
        zs, stages_s = poll_wait_matrix(sim, rows)
        if stages != stages_s or zr.shape != zs.shape:
            st.warning("The runs poll in different stages; showing the real one.")
            fig = heatmap_figure(zr, stages, rows, "real poll wait (us)")
        else:
            fig = heatmap_figure(zr - zs, stages, rows, "real - simulated poll wait (us)", True)
    else:
        src = real if which == "real" and real is not None else (sim or tl)
        z, stages = poll_wait_matrix(src, rows)
        fig = heatmap_figure(z, stages, rows, f"{which} poll wait (us)")
    show_chart(fig, "heatmap_chart")
