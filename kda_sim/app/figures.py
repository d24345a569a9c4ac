"""Plotly figures of timelines: zoom, pan and hover in the page.

A figure holds one bar trace a stage (all CTAs in it, ``base`` = start) rather than a
shape an event: a few dozen traces whatever the CTA count keeps the browser quick.
Spans narrower than a pixel of the whole launch are merged per CTA and stage so a
measured trace with thousands of events a CTA draws no more bars than the screen shows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from kda_sim.timeline.colors import color_of, display
from kda_sim.timeline.critical import CriticalPath, Source
from kda_sim.timeline.model import CtaTrack, PollRecord, StuckWait, Timeline

ROLE_BAND_ALPHA = 0.07  # a role's band behind its rows: its colour, faint
SIM_OUTLINE = 1.6
# an overlay a row a CTA gives each row two lanes (centre offset, bar width in rows): the
# real run thick above, the simulation thin and dark below, a poll's wait a pale stretch
# of the real bar. Outlines over filled bars of the same colours could not be told apart
# at a few pixels a row (256 CTAs).
REAL_LANE = (-0.17, 0.56)
SIM_LANE = (0.33, 0.24)
SIM_SHADE = 0.55  # the simulated lane's colour: the stage's, this much of it (the rest black)
LANE_POLL_COLOR = "rgba(255,255,255,0.6)"
ROW_PX = 3.2  # pixels a CTA row, one run drawn
LANES_ROW_PX = 5.5  # with two lanes a row: the thin one stays over a pixel at 256 CTAs
MAX_HEIGHT = 1600
# the legend sits above the plot, under the chart's toolbars (plotly's modebar and
# Streamlit's element toolbar, top right): the top margin leaves them this much room
TOOLBAR_PX = 40
LEGEND_ROW_PX = 20
LEGEND_PER_ROW = 7  # entries a legend row, counted low so the room is never short
SUBPLOT_TITLE_PX = 24  # side by side: each run's title above its plot
# the x axis's tick labels and title under the plot, in Streamlit's theme (its fonts):
# a bottom margin short of them makes plotly push it and draw every bar again
X_AXIS_PX = 66
BASE_DECIMALS = 4  # a bar's start in us as the figure's JSON holds it: 0.1 ns
MAX_BARS_PER_PIXEL_ROW = 3000  # horizontal resolution the merge aims at
CRIT_COLOR = "#d62728"
STUCK_COLOR = "#b30000"
ARROW_COLOR = "#111111"


@dataclass(frozen=True)
class Filter:
    """The rows and stages shown; ``roles`` / ``stages`` None: every one of the timeline's
    kernel (a filter is made before anyone knows which kernel the timeline ran)."""

    roles: tuple[str, ...] | None = None
    cta_lo: int = 0
    cta_hi: int = 1 << 30
    stages: tuple[str, ...] | None = None

    def keeps_role(self, role: str) -> bool:
        return self.roles is None or role in self.roles

    def keeps_stage(self, stage: str) -> bool:
        return self.stages is None or stage in self.stages


def stage_order(tl: Timeline, names: Iterable[str]) -> list[str]:
    """``names`` in the display order of ``tl``'s kernel, names it does not list last."""
    names = set(names)
    order = tuple(display(tl.meta.kernel).stages)
    return [s for s in order if s in names] + sorted(names - set(order))


def role_order(tl: Timeline, names: Iterable[str]) -> list[str]:
    """``names`` in the display order of ``tl``'s kernel's roles, others last."""
    names = set(names)
    order = tuple(display(tl.meta.kernel).roles)
    return [r for r in order if r in names] + sorted(names - set(order))


def stage_color(tl: Timeline, name: str) -> str:
    """``name``'s colour in ``tl``'s kernel (a palette colour where it gives none)."""
    spec = display(tl.meta.kernel)
    return color_of(name, dict(spec.stage_colors), tuple(spec.stages))


def shade(color: str, keep: float) -> str:
    """``color`` (``#rrggbb``) darkened: ``keep`` of each channel."""
    hexa = color.lstrip("#")
    r, g, b = (round(int(hexa[i : i + 2], 16) * keep) for i in (0, 2, 4))
    return f"#{r:02x}{g:02x}{b:02x}"


def role_band(tl: Timeline, role: str) -> str:
    """The faint fill behind ``role``'s rows: the role's colour in ``tl``'s kernel."""
    spec = display(tl.meta.kernel)
    hexa = color_of(role, dict(spec.role_colors), tuple(spec.roles)).lstrip("#")
    r, g, b = (int(hexa[i : i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{ROLE_BAND_ALPHA})"


def rows_of(tl: Timeline, flt: Filter) -> list[int]:
    """CTAs shown, grouped by role in the kernel's display order, by CTA id within a role."""
    order = {r: i for i, r in enumerate(role_order(tl, (c.role for c in tl.ctas)))}
    keep = [c.cta for c in tl.ctas if flt.keeps_role(c.role) and flt.cta_lo <= c.cta <= flt.cta_hi]
    return sorted(keep, key=lambda c: (order.get(tl.ctas[c].role, 99), c))


def horizon(tl: Timeline) -> float:
    """Last time anything happened, in ns from the origin (also for a stuck launch)."""
    t = tl.origin
    for c in tl.ctas:
        for x in (c.end, c.start):
            if x is not None:
                t = max(t, x)
        if c.stages:
            t = max(t, c.stages[-1].end)
        for p in c.polls:
            t = max(t, p.satisfied if p.satisfied is not None else p.first_issue)
    return t - tl.origin


def _us(ns: float) -> float:
    return ns / 1e3


def _fmt_cells(p: PollRecord) -> str:
    if not p.cells:
        return f"{p.n_cells} cells"
    parts = [f"{r.region}[{r.first}..{r.last}] ({r.count})" for r in p.cells[:3]]
    more = f" +{len(p.cells) - 3} regions" if len(p.cells) > 3 else ""
    return ", ".join(parts) + more


def poll_text(p: PollRecord) -> str:
    wait = "never satisfied" if p.wait is None else f"waited {_us(p.wait):.3f} us"
    bits = [
        f"poll {p.label}: {_fmt_cells(p)} in {p.n_batches} batch(es)",
        f"{wait}, retries {p.retries if p.retries is not None else '?'}",
    ]
    who = []
    if p.producer is not None and p.put_ref is None and p.put_time is not None:
        who.append(f"released by CTA {p.producer} (inferred: the put is not recorded)")
    elif p.producer is not None:
        who.append(f"released by CTA {p.producer}'s put")
    if p.tag is not None:
        who.append(f"tag {p.tag}")
    if p.behind_weight_bytes:
        who.append(f"behind {p.behind_weight_bytes / 1024:.0f} KiB of weight loads")
    if who:
        bits.append(", ".join(who))
    return "<br>".join(bits)


def _polls_by_stage(c: CtaTrack) -> dict[tuple[str, int], list[PollRecord]]:
    out: dict[tuple[str, int], list[PollRecord]] = {}
    for p in c.polls:
        out.setdefault((p.stage, p.task), []).append(p)
    return out


def _merge(spans: list[tuple[float, float, str]], res: float) -> list[tuple[float, float, str]]:
    """Adjacent spans closer than ``res`` become one; its hover says how many."""
    if len(spans) < 2 or res <= 0:
        return spans
    spans.sort()
    out = [spans[0]]
    n = 1
    for s, e, text in spans[1:]:
        ps, pe, ptext = out[-1]
        if s - pe < res and (e - s) < res:
            n += 1
            out[-1] = (ps, max(pe, e), f"{ptext.split('<br>')[0]}<br>{n} spans merged")
        else:
            out.append((s, e, text))
            n = 1
    return out


@dataclass
class _Bars:
    y: list[float]
    base: list[float]
    x: list[float]
    text: list[str]


def _stage_bars(tl: Timeline, rows: Sequence[int], flt: Filter, res_ns: float) -> dict[str, _Bars]:
    t0 = tl.origin
    ypos = {c: i for i, c in enumerate(rows)}
    out: dict[str, _Bars] = {}
    for cta in rows:
        c = tl.ctas[cta]
        polls = _polls_by_stage(c)
        per: dict[str, list[tuple[float, float, str]]] = {}
        for s in c.stages:
            if not flt.keeps_stage(s.name):
                continue
            head = f"<b>CTA {cta}</b> ({c.role}) · <b>{s.name}</b>"
            if s.task >= 0:
                head += f" task {s.task}"
            when = f"{_us(s.start - t0):.3f} → {_us(s.end - t0):.3f} us ({_us(s.dur):.3f} us)"
            text = f"{head}<br>{when}"
            ps = polls.get((s.name, s.task), [])
            if ps:
                text += "<br>" + "<br>".join(poll_text(p) for p in ps[:3])
                if len(ps) > 3:
                    text += f"<br>+{len(ps) - 3} more polls"
            per.setdefault(s.name, []).append((s.start - t0, max(s.end - t0, s.start - t0), text))
        for name, spans in per.items():
            b = out.setdefault(name, _Bars([], [], [], []))
            for s, e, text in _merge(spans, res_ns):
                b.y.append(ypos[cta])
                b.base.append(_us(s))
                # a zero-length stage still gets a sliver so it can be hovered
                b.x.append(max(_us(e - s), _us(res_ns) * 0.5, 1e-4))
                b.text.append(text)
    return out


def _shifted(b: _Bars, by: float) -> _Bars:
    """``b`` moved ``by`` rows down (a lane of the rows)."""
    return b if not by else _Bars([y + by for y in b.y], b.base, b.x, b.text)


def _poll_bars(tl: Timeline, rows: Sequence[int], res_ns: float, flt: Filter) -> _Bars:
    t0 = tl.origin
    b = _Bars([], [], [], [])
    for i, cta in enumerate(rows):
        for p in tl.ctas[cta].polls:
            if p.satisfied is None or not flt.keeps_stage(p.stage):
                continue
            w = p.satisfied - p.first_issue
            if w < res_ns:
                continue
            b.y.append(i)
            b.base.append(_us(p.first_issue - t0))
            b.x.append(_us(w))
            b.text.append(f"<b>CTA {cta}</b> · {p.stage}<br>{poll_text(p)}")
    return b


def _bar(
    b: _Bars,
    name: str,
    color: str,
    *,
    outline: bool,
    width: float,
    opacity: float = 1.0,
) -> go.Bar:
    marker = (
        {"color": "rgba(0,0,0,0)", "line": {"color": color, "width": SIM_OUTLINE}}
        if outline
        else {"color": color, "line": {"width": 0}}
    )
    # numpy arrays skip plotly's per-element list validation (most of the build time)
    y = np.asarray(b.y)
    # whole rows as int32 (a smaller payload); the grouped figure's lanes sit between rows
    y = y.astype(np.int32) if y.dtype.kind == "i" else y.astype(np.float32)
    return go.Bar(
        y=y,
        # float32: 7 significant digits (under 0.01 ns of a 100 us launch) at half the
        # payload of float64; plotly sends ``base`` as JSON numbers, not typed arrays:
        # rounded to 0.1 ns (the hover texts state times to the ns)
        x=np.asarray(b.x, dtype=np.float32),
        base=np.round(np.asarray(b.base, dtype=float), BASE_DECIMALS),
        orientation="h",
        width=width,
        marker=marker,
        opacity=opacity,
        name=name,
        hovertext=np.asarray(b.text, dtype=object),
        hovertemplate="%{hovertext}<extra></extra>",
    )


@dataclass(frozen=True)
class Layer:
    label: str  # "real", "simulated"
    tl: Timeline
    outline: bool


@dataclass(frozen=True)
class HandoffView:
    """A poll picked by the user and the puts it waited on."""

    cta: int
    poll: PollRecord
    sources: tuple[Source, ...]

    @property
    def inferred(self) -> bool:
        """No put record to point at, but a producer and put time inferred for the poll."""
        p = self.poll
        return not self.sources and p.producer is not None and p.put_time is not None


def _add(fig: go.Figure, trace: go.BaseTraceType, col: int | None) -> None:
    if col is None:
        fig.add_trace(trace)
    else:
        fig.add_trace(trace, row=1, col=col)


def timeline_figure(
    layers: Sequence[Layer],
    flt: Filter = Filter(),
    *,
    side_by_side: bool = False,
    polls: bool = True,
    puts: bool = False,
    critical: CriticalPath | None = None,
    handoff: HandoffView | None = None,
    stuck: bool = True,
    chain: Sequence[StuckWait] = (),
    title: str = "",
    height: int | None = None,
    window_us: tuple[float, float] | None = None,
) -> go.Figure:
    """Rows are CTAs of the first layer; a second layer marked ``outline`` (the
    simulation over a real run) takes a thin dark lane under each row's bar, a single
    ``outline`` layer is drawn as outlines;
    ``window_us`` opens the chart on that time window (zoom out with a double-click)."""
    if not layers:
        raise ValueError("nothing to draw")
    base_tl = layers[0].tl
    rows = rows_of(base_tl, flt)
    n = max(len(rows), 1)
    span_ns = max(horizon(ly.tl) for ly in layers) or 1.0
    res_ns = span_ns / MAX_BARS_PER_PIXEL_ROW
    cols = len(layers) if side_by_side and len(layers) > 1 else 1
    # the overlay: the second layer (the simulation) outlined on the first's rows
    lanes = cols == 1 and len(layers) == 2 and layers[1].outline
    if cols > 1:
        fig = make_subplots(
            rows=1,
            cols=cols,
            shared_yaxes=True,
            shared_xaxes=True,
            horizontal_spacing=0.02,
            subplot_titles=[ly.label for ly in layers],
        )
    else:
        fig = go.Figure()
    bar_w = 0.8
    for k, ly in enumerate(layers):
        col = k + 1 if cols > 1 else None
        outline = ly.outline and cols == 1
        shift, width = (REAL_LANE if k == 0 else SIM_LANE) if lanes else (0.0, bar_w)
        bars = _stage_bars(ly.tl, rows, flt, res_ns)
        for name in stage_order(ly.tl, bars):
            color = stage_color(ly.tl, name)
            tr = _bar(
                _shifted(bars[name], shift),
                f"{name} ({ly.label})" if len(layers) > 1 else name,
                shade(color, SIM_SHADE) if lanes and k == 1 else color,
                outline=outline and not lanes,
                width=width,
                # a picked hand-off's arrows must stand out over 256 rows of colour
                opacity=0.35 if handoff is not None else 1.0,
            )
            if lanes:  # one legend entry a stage: it shows and hides both lanes
                tr.update(legendgroup=name, showlegend=k == 0)
            _add(fig, tr, col)
        # the simulation's lane gets no poll bars: two sets on one row read as noise
        if polls and not outline:
            pb = _poll_bars(ly.tl, rows, res_ns, flt)
            if pb.y:
                tr = _bar(
                    _shifted(pb, shift),
                    f"poll wait ({ly.label})" if len(layers) > 1 else "poll wait",
                    # translucent: the stage under a wait stays readable at 3 px a row;
                    # pale beside the simulation's dark lane, which it must not resemble
                    LANE_POLL_COLOR if lanes else "rgba(20,20,20,0.45)",
                    outline=False,
                    width=min(0.3, width / 2),
                )
                _add(fig, tr, col)
        if puts:
            tr = _put_markers(ly.tl, rows, ly.label if len(layers) > 1 else "")
            _add(fig, tr, col)
        if stuck and ly.tl.stuck:
            for tr in _stuck_traces(ly.tl, rows, span_ns, chain if k == 0 else ()):
                _add(fig, tr, col)
    if critical is not None:
        fig.add_trace(_critical_trace(base_tl, {c: i for i, c in enumerate(rows)}, critical))
    if handoff is not None:
        _handoff_arrows(fig, base_tl, rows, handoff)
    _role_bands(fig, base_tl, rows, cols)
    if lanes and not title:
        title = (
            "each CTA's row: the real run thick above (a poll's wait pale), "
            "the simulation thin and dark below"
        )
    entries = sum(1 for tr in fig.data if tr.showlegend is not False)
    legend_px = LEGEND_ROW_PX * -(-entries // LEGEND_PER_ROW)
    title_px = 30 if title else 0
    row_px = LANES_ROW_PX if lanes else ROW_PX
    fig_h = height or int(min(MAX_HEIGHT, max(460, row_px * n + 170)))
    top = TOOLBAR_PX + title_px + legend_px + (SUBPLOT_TITLE_PX if cols > 1 else 0)
    fig.update_layout(
        barmode="overlay",
        height=fig_h,
        # the title at the top left, the legend under it on top of the plot (with 256
        # rows a legend under the plot is below the fold), the toolbars' room above both
        margin={"l": 60, "r": 10, "t": top, "b": X_AXIS_PX},
        title={
            "text": title,
            "x": 0.0,
            "y": 1.0,
            "yref": "container",
            "yanchor": "top",
            "pad": {"t": TOOLBAR_PX},
            "font": {"size": 14},
        }
        if title
        else None,
        legend={
            "orientation": "h",
            "x": 0.0,
            # side by side: above the subplots' titles
            "y": 1.0 + (SUBPLOT_TITLE_PX / max(fig_h - top - 40, 1) if cols > 1 else 0.0),
            "yanchor": "bottom",
            "font": {"size": 11},
            "bgcolor": "rgba(255,255,255,0)",
        },
        hoverlabel={"align": "left", "font": {"size": 11}},
        plot_bgcolor="white",
        bargap=0.0,
        dragmode="zoom",
        # keeps the user's zoom across reruns (filters, toggles) of the same run
        uirevision="|".join(str(x) for x in astuple_meta(base_tl)),
    )
    if handoff is not None:
        _zoom_to(fig, base_tl, rows, handoff)
    ticks = cta_ticks(rows, handoff_labels(handoff) if handoff is not None else {})
    if handoff is None:
        fig.update_yaxes(range=[n - 0.5, -0.5])
    fig.update_yaxes(
        autorange="reversed" if handoff is None else None,
        tickvals=list(ticks),
        ticktext=list(ticks.values()),
        showgrid=False,
        zeroline=False,
        tickfont={"size": 10},
        automargin=True,  # a hand-off's labels are longer than "CTA 12"
        # labels never leave the chart here: "allow" spares plotly measuring each one
        # (a layout of the whole chart a label)
        ticklabeloverflow="allow",
    )
    fig.update_xaxes(
        title_text="time (us)",
        showgrid=True,
        gridcolor="#eeeeee",
        zeroline=False,
        rangemode="tozero",
        ticklabeloverflow="allow",
    )
    if window_us is not None and handoff is None:
        fig.update_xaxes(range=list(window_us))
        fig.update_layout(uirevision=f"{fig.layout.uirevision}|{window_us}")
    return fig


MAX_TICKS = 24  # CTA labels down the y axis, evenly spaced
MAX_PRODUCER_LABELS = 8


def cta_ticks(rows: Sequence[int], named: Mapping[int, str] | None = None) -> dict[int, str]:
    """Row index -> label: every few rows ``CTA n`` (about :data:`MAX_TICKS` of them),
    and each CTA of ``named`` (CTA -> label) on its own row, whose neighbours' plain
    labels make way so none overlaps it."""
    step = max(1, int(np.ceil(len(rows) / MAX_TICKS)))
    at = {c: i for i, c in enumerate(rows)}
    mine = {at[c]: text for c, text in (named or {}).items() if c in at}
    out = {
        i: f"CTA {rows[i]}"
        for i in range(0, len(rows), step)
        if not any(abs(i - j) <= 1 for j in mine)
    }
    return dict(sorted({**out, **mine}.items()))


def handoff_labels(h: HandoffView) -> dict[int, str]:
    """The rows a picked hand-off joins, labelled: the CTA that polls and each producer
    whose put it waited on (the one that released it, or the inferred one, said so)."""
    out: dict[int, str] = {}
    # the releasing put first; a poll fed by many CTAs labels the first few of them
    for s in sorted(h.sources, key=lambda s: not s.last):
        if s.cta != h.cta and s.cta not in out and len(out) < MAX_PRODUCER_LABELS:
            out[s.cta] = f"<b>CTA {s.cta} · put{' (released it)' if s.last else ''}</b>"
    if h.inferred and h.poll.producer is not None and h.poll.producer != h.cta:
        out[h.poll.producer] = f"<b>CTA {h.poll.producer} · put (inferred)</b>"
    out[h.cta] = f"<b>CTA {h.cta} · picked poll</b>"
    return out


def astuple_meta(tl: Timeline) -> tuple[object, ...]:
    """What names a launch in the figure's ``uirevision`` (zoom kept while it holds)."""
    m = tl.meta
    config = (m.R, m.L, m.nb, m.kda0, m.gate_local, m.nw_first, m.onw_first)
    return (m.source, m.gpu, m.kernel, *config, *sorted(m.params.items()), len(tl.ctas))


def _role_bands(fig: go.Figure, tl: Timeline, rows: Sequence[int], cols: int) -> None:
    if not rows:
        return
    groups: list[tuple[str, int, int]] = []
    for i, cta in enumerate(rows):
        role = tl.ctas[cta].role
        if groups and groups[-1][0] == role:
            groups[-1] = (role, groups[-1][1], i)
        else:
            groups.append((role, i, i))
    for role, lo, hi in groups:
        for k in range(cols):
            xref = "x domain" if k == 0 else f"x{k + 1} domain"
            yref = "y" if k == 0 else f"y{k + 1}"
            fig.add_shape(
                type="rect",
                xref=xref,
                yref=yref,
                x0=0,
                x1=1,
                y0=lo - 0.5,
                y1=hi + 0.5,
                fillcolor=role_band(tl, role),
                line={"width": 0},
                layer="below",
            )
        fig.add_annotation(
            xref="paper",
            yref="y",
            x=1.0,
            y=(lo + hi) / 2,
            text=f"{role} ({hi - lo + 1})",
            showarrow=False,
            xanchor="right",
            font={"size": 11, "color": "#555"},
            bgcolor="rgba(255,255,255,0.7)",
        )


def _put_markers(tl: Timeline, rows: Sequence[int], label: str) -> go.Scatter:
    t0 = tl.origin
    xs, ys, texts = [], [], []
    for i, cta in enumerate(rows):
        for u in tl.ctas[cta].puts:
            xs.append(_us(u.time - t0))
            ys.append(i)
            texts.append(f"<b>CTA {cta}</b> put {u.region} ({u.n_cells} cells from {u.first})")
    return go.Scattergl(
        x=xs,
        y=ys,
        mode="markers",
        marker={"symbol": "triangle-right", "size": 5, "color": "#444"},
        name=f"puts ({label})" if label else "puts",
        hovertext=texts,
        hovertemplate="%{hovertext}<extra></extra>",
    )


def _stuck_traces(
    tl: Timeline, rows: Sequence[int], span_ns: float, chain: Sequence[StuckWait] = ()
) -> list[go.BaseTraceType]:
    """Red bars from where each stuck CTA began to wait, grey rows for CTAs that never
    got a slot, faint lines to what each waits for, and one chain drawn bold."""
    from kda_sim.timeline.critical import stuck_since

    t0 = tl.origin
    ypos = {c: i for i, c in enumerate(rows)}
    end = _us(span_ns) * 1.04
    waits = _Bars([], [], [], [])
    absent = _Bars([], [], [], [])
    lx: list[float | None] = []
    ly: list[float | None] = []
    at_x: dict[int, float] = {}
    for w in tl.stuck:
        if w.cta not in ypos:
            continue
        never = tl.ctas[w.cta].start is None
        since = stuck_since(tl, w.cta)
        x0 = 0.0 if never or since is None else _us(since - t0)
        at_x[w.cta] = x0 if not never else end
        where = f" on {w.region}[{w.index}]" if w.region else ""
        b = absent if never else waits
        b.y.append(ypos[w.cta])
        b.base.append(x0)
        b.x.append(max(end - x0, 1e-3))
        head = "never resident" if never else f"stuck in {w.stage}{where}"
        b.text.append(f"<b>CTA {w.cta}</b> {head}<br>{w.reason}")
    for w in tl.stuck:
        if w.producer is not None and w.cta in ypos and w.producer in ypos:
            lx += [at_x[w.cta], at_x.get(w.producer, end), None]
            ly += [ypos[w.cta], ypos[w.producer], None]
    out: list[go.BaseTraceType] = []
    for b, name, color in (
        (waits, "stuck (waits)", "rgba(214,39,40,0.35)"),
        (absent, "never resident (no free slot)", "rgba(120,120,120,0.22)"),
    ):
        if b.y:
            out.append(
                go.Bar(
                    y=np.asarray(b.y, dtype=np.int32),
                    x=np.asarray(b.x),
                    base=np.asarray(b.base),
                    orientation="h",
                    width=0.5,
                    marker={"color": color, "line": {"width": 0}},
                    name=name,
                    hovertext=np.asarray(b.text, dtype=object),
                    hovertemplate="%{hovertext}<extra></extra>",
                )
            )
    if lx:
        out.append(
            go.Scatter(
                x=lx,
                y=ly,
                mode="lines",
                line={"color": STUCK_COLOR, "width": 1},
                opacity=0.2,
                name="waits for (CTA → producer)",
                hoverinfo="skip",
            )
        )
    cx: list[float | None] = []
    cy: list[float | None] = []
    texts: list[str | None] = []
    for w in chain:
        if w.producer is None or w.cta not in ypos or w.producer not in ypos:
            continue
        cx += [at_x.get(w.cta, end), at_x.get(w.producer, end), None]
        cy += [ypos[w.cta], ypos[w.producer], None]
        t = f"CTA {w.cta} waits for CTA {w.producer}<br>{w.reason}"
        texts += [t, t, None]
    if cx:
        out.append(
            go.Scatter(
                x=cx,
                y=cy,
                mode="lines+markers",
                line={"color": "#111111", "width": 3},
                marker={"size": 9, "color": STUCK_COLOR, "line": {"color": "#111", "width": 1}},
                name="wait-for chain",
                hovertext=texts,
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
    return out


def _critical_trace(tl: Timeline, ypos: Mapping[int, float], cp: CriticalPath) -> go.Scatter:
    """The path as a bold line over the rows ``ypos`` gives each CTA (its own row, or
    its role's band in the grouped figure)."""
    t0 = tl.origin
    xs: list[float | None] = []
    ys: list[float | None] = []
    texts: list[str | None] = []
    for s in cp.steps:
        a = s.src if s.kind != "run" else s.cta
        if s.cta not in ypos or a not in ypos:
            continue
        what = {
            "run": f"CTA {s.cta} runs",
            "handoff": f"hand-off {s.label}: CTA {s.src} → CTA {s.cta}",
            "slot": f"CTA {s.cta} gets CTA {s.src}'s slot",
        }[s.kind]
        text = f"<b>critical path</b><br>{what}<br>{_us(s.dur):.3f} us"
        xs += [_us(s.start - t0), _us(s.end - t0), None]
        ys += [ypos[a], ypos[s.cta], None]
        texts += [text, text, None]
    return go.Scatter(
        x=xs,
        y=ys,
        mode="lines+markers",
        line={"color": CRIT_COLOR, "width": 3},
        marker={"size": 5, "color": CRIT_COLOR},
        name="critical path",
        hovertext=texts,
        hovertemplate="%{hovertext}<extra></extra>",
    )


def _zoom_to(fig: go.Figure, tl: Timeline, rows: Sequence[int], h: HandoffView) -> None:
    """Open on the picked hand-off: its time window and the rows it joins (double-click
    resets); a new pick re-zooms because the view key changes with it."""
    t0 = tl.origin
    ypos = {c: i for i, c in enumerate(rows)}
    times = [h.poll.first_issue] + [tl.ctas[s.cta].puts[s.put_index].time for s in h.sources]
    if h.inferred:
        times.append(h.poll.put_time)  # type: ignore[arg-type]
    end = h.poll.satisfied if h.poll.satisfied is not None else max(times)
    lo, hi = min(times), max(end, max(times))
    pad = max(0.25 * (hi - lo), 200.0)
    who = [h.cta, *(s.cta for s in h.sources)] + ([h.poll.producer] if h.inferred else [])
    ys = [ypos[c] for c in who if c in ypos]
    if not ys:
        return
    y0, y1 = min(ys) - 4, max(ys) + 4
    fig.update_xaxes(range=[_us(lo - t0 - pad), _us(hi - t0 + pad)])
    fig.update_yaxes(range=[min(y1, len(rows)) + 0.5, max(y0, 0) - 0.5])
    fig.update_layout(uirevision=f"handoff-{h.cta}-{h.poll.first_issue}")


def _handoff_arrows(fig: go.Figure, tl: Timeline, rows: Sequence[int], h: HandoffView) -> None:
    t0 = tl.origin
    ypos = {c: i for i, c in enumerate(rows)}
    if h.cta not in ypos or h.poll.satisfied is None:
        return
    y1, x1 = ypos[h.cta], _us(h.poll.satisfied - t0)
    fig.add_trace(
        go.Scatter(
            x=[_us(h.poll.first_issue - t0), x1],
            y=[y1, y1],
            mode="lines+markers",
            line={"color": ARROW_COLOR, "width": 5},
            marker={"size": 8, "color": ARROW_COLOR},
            name="picked poll",
            hovertext=[poll_text(h.poll)] * 2,
            hovertemplate="%{hovertext}<extra></extra>",
        )
    )
    if h.inferred and h.poll.producer in ypos:
        _put_arrow(
            fig,
            (x1, y1),
            (_us(h.poll.put_time - t0), ypos[h.poll.producer]),  # type: ignore[operator, index]
            2.2,
            "rgba(0,0,0,0.6)",
            f"CTA {h.poll.producer}: its put, inferred (not recorded)",
        )
    # the last put is drawn on top; at most 64 arrows keep the chart quick
    for s in sorted(h.sources, key=lambda s: s.last)[-64:]:
        if s.cta not in ypos:
            continue
        put = tl.ctas[s.cta].puts[s.put_index]
        _put_arrow(
            fig,
            (x1, y1),
            (_us(put.time - t0), ypos[s.cta]),
            2.6 if s.last else 1.2,
            ARROW_COLOR if s.last else "rgba(0,0,0,0.45)",
            f"CTA {s.cta} put {put.region} at {_us(put.time - t0):.3f} us",
        )


def _put_arrow(
    fig: go.Figure,
    to: tuple[float, float],
    frm: tuple[float, float],
    width: float,
    color: str,
    hover: str,
) -> None:
    """An arrow from a put (time, CTA row) to the poll it satisfied."""
    fig.add_annotation(
        x=to[0],
        y=to[1],
        ax=frm[0],
        ay=frm[1],
        xref="x",
        yref="y",
        axref="x",
        ayref="y",
        showarrow=True,
        arrowhead=2,
        arrowsize=1.2,
        arrowwidth=width,
        arrowcolor=color,
        text="",
        hovertext=hover,
    )


# -- other figures ---------------------------------------------------------------------


def poll_wait_matrix(tl: Timeline, rows: Sequence[int]) -> tuple[np.ndarray, list[str]]:
    """Total poll wait (us) of each CTA in each stage that polls."""
    idx = {c: i for i, c in enumerate(rows)}
    stages = stage_order(tl, {p.stage for c in tl.ctas for p in c.polls})
    col = {s: j for j, s in enumerate(stages)}
    z = np.zeros((len(rows), len(stages)))
    for c in tl.ctas:
        i = idx.get(c.cta)
        if i is None:
            continue
        for p in c.polls:
            if p.satisfied is not None and p.stage in col:
                z[i, col[p.stage]] += _us(p.satisfied - p.first_issue)
    return z, stages


def heatmap_figure(
    z: np.ndarray, stages: Sequence[str], rows: Sequence[int], title: str, diverging: bool = False
) -> go.Figure:
    lim = float(np.abs(z).max()) if z.size else 1.0
    ticks = cta_ticks(rows)
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=list(stages),
            # rows by place, labelled every few CTAs: a label a row is unreadable at 256
            y=list(range(len(rows))),
            text=[[f"CTA {c}"] * len(stages) for c in rows],
            colorscale="RdBu_r" if diverging else "Viridis",
            zmid=0 if diverging else None,
            zmin=-lim if diverging else 0,
            zmax=lim if diverging else None,
            colorbar={"title": {"text": "us"}},
            hovertemplate="%{text} · %{x}<br>poll wait %{z:.3f} us<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": title, "font": {"size": 14}},
        height=min(900, max(380, 2 * len(rows) + 120)),
        margin={"l": 70, "r": 10, "t": 40, "b": 40},
    )
    fig.update_yaxes(
        autorange="reversed", tickvals=list(ticks), ticktext=list(ticks.values()), showgrid=False
    )
    return fig


VERDICT_CODE = {"finishes": 0, "deadlocks": 1, "invalid": 2}
VERDICT_COLORS = ["#2ca02c", "#d62728", "#c7c7c7"]


def safety_figure(
    cells: dict[tuple[int, int], tuple[str, float | None]],
    gpu: str,
    axes: tuple[str, str] = ("R", "L"),
) -> go.Figure:
    """The kernel's two sweep axes (K1's R x L) as a grid: colour = verdict, text =
    predicted time (us) or the verdict."""
    Rs = sorted({r for r, _ in cells})
    Ls = sorted({ell for _, ell in cells})
    z = np.full((len(Ls), len(Rs)), np.nan)
    text = [["" for _ in Rs] for _ in Ls]
    for (r, ell), (verdict, ns) in cells.items():
        i, j = Ls.index(ell), Rs.index(r)
        z[i, j] = VERDICT_CODE[verdict]
        text[i][j] = f"{_us(ns):.1f} us" if ns is not None else verdict
    scale = []
    for k, c in enumerate(VERDICT_COLORS):
        scale += [[k / 3, c], [(k + 1) / 3, c]]
    fig = go.Figure(
        go.Heatmap(
            z=z,
            x=[f"{axes[0]}={r}" for r in Rs],
            y=[f"{axes[1]}={ell}" for ell in Ls],
            text=text,
            texttemplate="%{text}",
            colorscale=scale,
            zmin=-0.5,
            zmax=2.5,
            showscale=False,
            xgap=2,
            ygap=2,
            hovertemplate="%{x} %{y}: %{text}<extra></extra>",
        )
    )
    fig.update_layout(
        title={"text": f"{gpu}: green finishes, red deadlocks, grey invalid", "font": {"size": 14}},
        height=320,
        margin={"l": 50, "r": 10, "t": 40, "b": 30},
    )
    return fig
