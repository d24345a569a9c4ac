"""The timeline with rows grouped by role: each collapsed role is one row whose stages
are drawn as the spread of its CTAs (min start to max end, faint) and the median span
(solid), the real run in the upper lane and the simulation in the lower; a role the user
expands gets a row a CTA as in the full timeline. 256 CTAs become three rows, so real and
simulated stay apart at a glance and the critical path reads as a walk between roles.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go

from kda_sim.app.figures import (
    MAX_BARS_PER_PIXEL_ROW,
    Filter,
    Layer,
    _bar,
    _Bars,
    _critical_trace,
    _stage_bars,
    astuple_meta,
    horizon,
    role_band,
    role_order,
    rows_of,
    stage_color,
    stage_order,
)
from kda_sim.timeline.critical import CriticalPath
from kda_sim.timeline.model import Timeline

LANE = 0.22  # a band row's real lane sits this far above its centre, the simulated below
LANE_W = 0.38  # bar width of a lane (rows are 1 apart)
SPREAD_OPACITY = 0.3
SIM_SPREAD_W = 0.08  # the simulation's spread: a thin line, so it never reads as a bar
ROW_PX = 22  # height of a CTA row in the grouped figure (pixels)
BAND_H = 2.5  # a collapsed role's row is this many CTA rows tall: two lanes to read

Stat = tuple[float, float, float]  # min, median, max


@dataclass(frozen=True)
class Band:
    """One stage (and kda task) of one role's CTAs: how their spans spread."""

    role: str
    stage: str
    task: int  # -1: a stage outside the kda tasks
    n: int  # CTAs that ran it
    start: Stat  # ns from the launch's origin
    end: Stat
    dur: Stat


@dataclass(frozen=True)
class GroupRow:
    """A row of the grouped figure: a collapsed role, or one CTA of an expanded role."""

    role: str
    cta: int | None  # None: the role's band
    ctas: tuple[int, ...]  # the CTAs it stands for

    @property
    def label(self) -> str:
        if self.cta is None:
            return f"{self.role} ×{len(self.ctas)}"
        return f"CTA {self.cta}"


def row_centres(rows: Sequence[GroupRow]) -> list[float]:
    """Where each row's centre sits on the y axis (a band is ``BAND_H`` rows tall)."""
    out, top = [], 0.0
    for row in rows:
        h = 1.0 if row.cta is not None else BAND_H
        out.append(top + h / 2)
        top += h
    return out


def _stat(xs: Sequence[float]) -> Stat:
    a = np.asarray(xs, dtype=float)
    return float(a.min()), float(np.median(a)), float(a.max())


def stage_bands(
    tl: Timeline, ctas: Iterable[int], stages: Iterable[str] | None = None
) -> list[Band]:
    """The bands of ``ctas`` (all of one role or not: grouped by each CTA's role), in
    display order of stage and task; ``stages`` None: every stage."""
    keep = None if stages is None else set(stages)
    per: dict[tuple[str, str, int], list[tuple[float, float]]] = {}
    for cta in ctas:
        c = tl.ctas[cta]
        for s in c.stages:
            if keep is None or s.name in keep:
                per.setdefault((c.role, s.name, s.task), []).append(
                    (s.start - tl.origin, s.end - tl.origin)
                )
    order = {s: i for i, s in enumerate(stage_order(tl, (s for _, s, _ in per)))}
    out = []
    for (role, stage, task), spans in per.items():
        starts = [s for s, _ in spans]
        ends = [e for _, e in spans]
        durs = [e - s for s, e in spans]
        out.append(Band(role, stage, task, len(spans), _stat(starts), _stat(ends), _stat(durs)))
    return sorted(out, key=lambda b: (b.role, order.get(b.stage, 99), b.task))


def group_rows(tl: Timeline, flt: Filter, expand: Iterable[str] = ()) -> list[GroupRow]:
    """The rows the filter keeps, a role collapsed into one unless it is in ``expand``."""
    opened = set(expand)
    by_role: dict[str, list[int]] = {}
    for cta in rows_of(tl, flt):
        by_role.setdefault(tl.ctas[cta].role, []).append(cta)
    out: list[GroupRow] = []
    for role, ctas in by_role.items():  # rows_of already orders roles
        if role in opened:
            out += [GroupRow(role, c, (c,)) for c in ctas]
        else:
            out.append(GroupRow(role, None, tuple(ctas)))
    return out


def _us(ns: float) -> float:
    return ns / 1e3


def _band_text(b: Band, label: str) -> str:
    task = f" task {b.task}" if b.task >= 0 else ""

    def row(name: str, s: Stat) -> str:
        return f"{name}: {_us(s[0]):.3f} / {_us(s[1]):.3f} / {_us(s[2]):.3f} us"

    return "<br>".join(
        [
            f"<b>{b.role}</b> ×{b.n} · <b>{b.stage}</b>{task} ({label})",
            "min / median / max",
            row("start", b.start),
            row("end", b.end),
            row("duration", b.dur),
        ]
    )


def _band_bars(
    tl: Timeline, rows: Sequence[GroupRow], flt: Filter, lane: float, label: str
) -> tuple[dict[str, _Bars], dict[str, _Bars]]:
    """Per stage: the spread bars and the median bars of every collapsed row."""
    spread: dict[str, _Bars] = {}
    median: dict[str, _Bars] = {}
    for y, row in zip(row_centres(rows), rows, strict=True):
        if row.cta is not None:
            continue
        for b in stage_bands(tl, row.ctas, flt.stages):
            text = _band_text(b, label)
            for out, lo, hi in (
                (spread, b.start[0], b.end[2]),
                (median, b.start[1], b.start[1] + b.dur[1]),
            ):
                bars = out.setdefault(b.stage, _Bars([], [], [], []))
                bars.y.append(y + lane * BAND_H)
                bars.base.append(_us(lo))
                bars.x.append(max(_us(hi - lo), 1e-4))
                bars.text.append(text)
    return spread, median


def _cta_bars(
    tl: Timeline, rows: Sequence[GroupRow], flt: Filter, res_ns: float
) -> dict[str, _Bars]:
    """The expanded rows: a bar a CTA stage, as the full timeline draws them."""
    at = {row.cta: y for y, row in zip(row_centres(rows), rows, strict=True) if row.cta is not None}
    if not at:
        return {}
    ctas = list(at)
    bars = _stage_bars(tl, ctas, flt, res_ns)
    for b in bars.values():  # _stage_bars numbers its rows 0.. in the order given
        b.y = [at[ctas[int(i)]] for i in b.y]
    return bars


def row_of_cta(rows: Sequence[GroupRow]) -> dict[int, float]:
    """Each shown CTA's row: its own, or its role's band."""
    return {c: y for y, row in zip(row_centres(rows), rows, strict=True) for c in row.ctas}


def grouped_figure(
    layers: Sequence[Layer],
    flt: Filter | None = None,
    *,
    expand: Iterable[str] = (),
    critical: CriticalPath | None = None,
    window_us: tuple[float, float] | None = None,
) -> go.Figure:
    """Rows grouped by role (see the module's doc); the first layer sets the rows, a
    second one (the simulation of a real run) takes each band's lower lane."""
    if not layers:
        raise ValueError("nothing to draw")
    flt = flt or Filter()
    base = layers[0].tl
    rows = group_rows(base, flt, expand)
    span_ns = max(horizon(ly.tl) for ly in layers) or 1.0
    res_ns = span_ns / MAX_BARS_PER_PIXEL_ROW
    two = len(layers) > 1
    fig = go.Figure()
    shown: set[str] = set()
    for k, ly in enumerate(layers):
        lane = (-LANE if k == 0 else LANE) if two else 0.0
        sim_lane = ly.label == "simulated" and two
        spread, median = _band_bars(ly.tl, rows, flt, lane, ly.label)
        cta = _cta_bars(ly.tl, rows, flt, res_ns)
        for name in stage_order(ly.tl, [*spread, *median, *cta]):
            color = stage_color(ly.tl, name)
            legend = name not in shown
            shown.add(name)
            if name in spread:
                tr = _bar(
                    spread[name],
                    f"{name} spread ({ly.label})",
                    color,
                    outline=False,
                    width=(SIM_SPREAD_W if sim_lane else LANE_W if two else 0.7) * BAND_H,
                    opacity=1.0 if sim_lane else SPREAD_OPACITY,
                )
                tr.update(legendgroup=name, showlegend=False)
                fig.add_trace(tr)
            if name in median:
                tr = _bar(
                    median[name],
                    name,
                    color,
                    outline=sim_lane,
                    width=(LANE_W if two else 0.7) * BAND_H,
                )
                tr.update(legendgroup=name, showlegend=legend, legendgrouptitle=None)
                fig.add_trace(tr)
            if name in cta:
                tr = _bar(
                    cta[name],
                    name,
                    color,
                    outline=ly.outline,
                    width=0.8,
                )
                tr.update(legendgroup=name, showlegend=legend and name not in median)
                fig.add_trace(tr)
    if critical is not None:
        fig.add_trace(_critical_trace(base, row_of_cta(rows), critical))
    _role_shading(fig, base, rows)
    centres = row_centres(rows)
    total = sum(1.0 if r.cta is not None else BAND_H for r in rows) or 1.0
    height = int(min(1500, max(360, ROW_PX * total + 180)))
    plot_px = height - 50 - 100
    lanes = "upper lane real (filled), lower lane simulated (outlined)" if two else ""
    fig.update_layout(
        barmode="overlay",
        height=height,
        # the title in the top margin, the legend under the axis: neither meets the
        # chart's toolbar (top right) nor the other
        margin={"l": 90, "r": 10, "t": 50, "b": 100},
        title={
            "text": "rows by role: faint = min start to max end, solid = median span"
            + (f"; {lanes}" if lanes else ""),
            "x": 0.0,
            "y": 0.98,
            "yref": "container",
            "yanchor": "top",
            "font": {"size": 12},
        },
        legend={
            "orientation": "h",
            "x": 0.0,
            "y": -60 / plot_px,  # under the axis title, in the bottom margin
            "yanchor": "top",
            "font": {"size": 11},
            "bgcolor": "rgba(255,255,255,0)",
        },
        hoverlabel={"align": "left", "font": {"size": 11}},
        plot_bgcolor="white",
        bargap=0.0,
        dragmode="zoom",
        uirevision="|".join(
            str(x) for x in (*astuple_meta(base), "grouped", tuple(expand), window_us)
        ),
    )
    fig.update_yaxes(
        range=[total, 0.0],
        tickvals=centres,
        ticktext=[r.label for r in rows],
        showgrid=False,
        zeroline=False,
        tickfont={"size": 11},
    )
    fig.update_xaxes(title_text="time (us)", showgrid=True, gridcolor="#eeeeee", zeroline=False)
    if window_us is not None:
        fig.update_xaxes(range=list(window_us))
    else:
        fig.update_xaxes(rangemode="tozero")
    return fig


def _role_shading(fig: go.Figure, tl: Timeline, rows: Sequence[GroupRow]) -> None:
    """A tint behind each role's rows (its band, or its CTAs when expanded)."""
    spans: list[tuple[str, int, int]] = []
    for i, row in enumerate(rows):
        if spans and spans[-1][0] == row.role:
            spans[-1] = (row.role, spans[-1][1], i)
        else:
            spans.append((row.role, i, i))
    centres = row_centres(rows)
    for role, lo, hi in spans:
        top = centres[lo] - (0.5 if rows[lo].cta is not None else BAND_H / 2)
        bottom = centres[hi] + (0.5 if rows[hi].cta is not None else BAND_H / 2)
        fig.add_shape(
            type="rect",
            xref="x domain",
            yref="y",
            x0=0,
            x1=1,
            y0=top,
            y1=bottom,
            fillcolor=role_band(tl, role),
            line={"width": 0},
            layer="below",
        )


def roles_of(tl: Timeline) -> list[str]:
    return role_order(tl, {c.role for c in tl.ctas})
