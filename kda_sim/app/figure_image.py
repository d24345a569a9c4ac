"""A timeline figure as a picture: the plotly figure drawn by matplotlib into a PNG.

The timeline view opens on this picture, with the interactive chart a toggle away: one
``<img>`` against an SVG element a bar (3,158 for the default view, which Streamlit's
chart element draws twice a visit) and plotly.js itself, most of the browser's share of
the first render (bench/README.md, "The timeline as a picture"). The picture is drawn
from the figure the chart shows, so the two cannot drift apart; this module knows the
part of plotly the timeline figures use (:func:`kda_sim.app.figures.timeline_figure`,
:func:`kda_sim.app.bands.grouped_figure`): horizontal bars, line and marker scatters,
rectangles over an axis's width, text and arrow annotations, a title, a horizontal
legend and one row of subplots. What only the chart has: hover texts, zoom and pan.

matplotlib is imported when a picture is drawn: a page whose picture is kept on disk
(:mod:`kda_sim.app.run_store`) imports neither it nor builds the figure.

Why not plotly's own static export (kaleido): it drives a headless Chromium for each
picture, a browser the app's install would have to carry beside the one the page already
runs in, where matplotlib is a dependency already. Why not :func:`kda_sim.timeline.gantt
.gantt`, the CLI's picture of one timeline: it draws neither the overlay's two lanes nor
the critical path, the role bands or the view's filters, and a second drawing of the
view's choices could drift from the chart's.
"""

from __future__ import annotations

import base64
import io
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import plotly.graph_objects as go
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

# the page's main column at a 1600 px wide window, wide layout: the picture is drawn at
# this CSS width (fonts and lines as the chart's) and scaled to the column's
WIDTH_PX = 1130
# device pixels a CSS pixel: the simulated lane (a quarter of a 5.5 px row at 256 CTAs)
# stays over a pixel on a plain screen and sharp on a HiDPI one
SCALE = 2.0
PT_PER_IN = 72  # a point is a CSS pixel: the figure is drawn at 72 dots an inch, scaled
DEFAULT_FONT_PX = 12
LEGEND_ENTRY_PX = 26  # a legend entry's swatch and gaps, beside its text
CHAR_PX = 6.2  # a character of the legend's 11 px font, about (to fill a legend row)
TAG = re.compile(r"<[^>]+>")


def png_of(fig: go.Figure, width_px: int = WIDTH_PX, scale: float = SCALE) -> bytes:
    """``fig`` drawn as a PNG ``width_px`` CSS pixels wide and as high as the figure's
    layout asks, at ``scale`` device pixels a CSS pixel."""
    buf = io.BytesIO()
    drawn(fig, width_px, scale).savefig(buf, format="png")
    return buf.getvalue()


def drawn(fig: go.Figure, width_px: int = WIDTH_PX, scale: float = SCALE) -> Figure:
    """``fig`` as a matplotlib figure (what :func:`png_of` saves)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    lay = fig.layout
    h_px = int(lay.height or 450)
    mfig = Figure(figsize=(width_px / PT_PER_IN, h_px / PT_PER_IN), dpi=PT_PER_IN * scale)
    FigureCanvasAgg(mfig)
    m = lay.margin
    left, right, top, bottom = (int(v if v is not None else 80) for v in (m.l, m.r, m.t, m.b))
    plot = (
        left / width_px,
        bottom / h_px,
        max(width_px - left - right, 1) / width_px,
        max(h_px - top - bottom, 1) / h_px,
    )
    axes = _subplots(mfig, fig, plot)
    # "paper": the plot area inside the margins, where annotations and legends are placed
    paper = mfig.add_axes(plot, zorder=10)
    paper.set_axis_off()
    paper.set_xlim(0, 1)
    paper.set_ylim(0, 1)
    handles: list[tuple[str, Any]] = []
    seen: set[str] = set()
    for tr in fig.data:
        ax = axes.get(tr.yaxis or "y", axes["y"])
        handle = _trace(ax, tr)
        group = tr.legendgroup or tr.name or ""
        shown = tr.showlegend is not False and handle is not None and tr.name
        if shown and group not in seen:
            seen.add(group)
            handles.append((tr.name, handle))
    for shape in lay.shapes or ():
        _shape(axes, shape)
    for ann in lay.annotations or ():
        _annotation(axes, paper, ann)
    for name, ax in axes.items():
        _axis(ax, fig, name)
    _title(mfig, lay, h_px)
    if handles and lay.showlegend is not False:
        _legend(mfig, lay, handles, plot, width_px - left - right)
    return mfig


# -- the plot area ---------------------------------------------------------------------


def _subplots(
    mfig: Figure, fig: go.Figure, plot: tuple[float, float, float, float]
) -> dict[str, Axes]:
    """An axes a plotly x axis (one row of them: ``y``, ``y2``, ... share the rows), each
    over its axis's domain of the plot area, keyed by the y axis its traces name."""
    x0, y0, w, h = plot
    out: dict[str, Axes] = {}
    k = 1
    while True:
        name = "xaxis" if k == 1 else f"xaxis{k}"
        # a plotly Layout has no get(): its axes are looked up by name
        xa = fig.layout[name] if name in fig.layout else None  # noqa: SIM401
        if k > 1 and (xa is None or xa.domain is None):
            break
        lo, hi = xa.domain if xa is not None and xa.domain is not None else (0.0, 1.0)
        share = out.get("y")
        ax = mfig.add_axes((x0 + lo * w, y0, (hi - lo) * w, h), sharey=share)
        out["y" if k == 1 else f"y{k}"] = ax
        k += 1
    return out


def _axis(ax: Axes, fig: go.Figure, yname: str) -> None:
    """Ranges, ticks, grid and titles as the figure's axes pair ``yname`` asks."""
    k = "" if yname == "y" else yname[1:]
    xa, ya = fig.layout[f"xaxis{k}"], fig.layout[f"yaxis{k}"]
    ax.set_facecolor(_rgba(fig.layout.plot_bgcolor or "white"))
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    for side in ("left", "bottom"):
        ax.spines[side].set_color("#444444")
        ax.spines[side].set_linewidth(0.8)
    if ya.range is not None:
        ax.set_ylim(*ya.range)
    elif ya.autorange == "reversed":
        lo, hi = ax.get_ylim()
        ax.set_ylim(max(lo, hi), min(lo, hi))
    if ya.tickvals is not None:
        ax.set_yticks(list(ya.tickvals))
        texts = list(ya.ticktext) if ya.ticktext is not None else [str(v) for v in ya.tickvals]
        ax.set_yticklabels([_text(t) for t in texts])
        for label, raw in zip(ax.get_yticklabels(), texts, strict=True):
            label.set_fontweight("bold" if "<b>" in str(raw) else "normal")
    size = ya.tickfont.size if ya.tickfont and ya.tickfont.size else DEFAULT_FONT_PX
    ax.tick_params(axis="y", labelsize=size, length=0, pad=4, labelcolor="#444444")
    if k:  # side by side: the rows are labelled on the first plot only
        ax.tick_params(axis="y", labelleft=False)
    if xa.range is not None:
        ax.set_xlim(*xa.range)
    else:
        _autorange_x(ax, xa.rangemode == "tozero")
    ax.tick_params(axis="x", labelsize=DEFAULT_FONT_PX, length=0, pad=6, labelcolor="#444444")
    if xa.showgrid:
        ax.grid(axis="x", color=_rgba(xa.gridcolor or "#eeeeee"), linewidth=1)
        ax.set_axisbelow(True)
    if xa.title and xa.title.text:
        ax.set_xlabel(_text(xa.title.text), fontsize=DEFAULT_FONT_PX + 2, color="#444444")


def _autorange_x(ax: Axes, tozero: bool) -> None:
    """What plotly's autorange gives bars: the data's extent, from 0 with ``tozero``."""
    lo, hi = np.inf, -np.inf
    for art in [*ax.collections, *ax.lines]:
        data = art.get_datalim(ax.transData) if hasattr(art, "get_datalim") else None
        if data is not None and np.isfinite(data.x0) and np.isfinite(data.x1):
            lo, hi = min(lo, data.x0), max(hi, data.x1)
        elif hasattr(art, "get_xdata"):
            xs = np.asarray(art.get_xdata(), dtype=float)
            if np.isfinite(xs).any():
                lo, hi = min(lo, np.nanmin(xs)), max(hi, np.nanmax(xs))
    if not np.isfinite(lo):
        return
    if tozero:
        lo = min(lo, 0.0)
    pad = 0.0 if tozero else 0.02 * (hi - lo)
    ax.set_xlim(lo - pad, hi + 0.02 * (hi - lo) if hi > lo else hi + 1)


# -- traces ----------------------------------------------------------------------------


def _trace(ax: Axes, tr: Any) -> Any:
    """``tr`` drawn on ``ax``; the legend's handle for it (None: a trace not drawn)."""
    if tr.visible is False:
        return None
    if tr.type == "bar" and tr.orientation == "h":
        return _bars(ax, tr)
    if tr.type in ("scatter", "scattergl"):
        return _scatter(ax, tr)
    return None  # no other kind is in a timeline figure


def _bars(ax: Axes, tr: Any) -> Any:
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    y = _array(tr.y)
    if not y.size:
        return None
    length = _array(tr.x)
    base = np.zeros_like(y) if tr.base is None else _array(tr.base)
    base = np.broadcast_to(base, y.shape)
    half = np.broadcast_to(np.asarray(tr.width if tr.width is not None else 0.8) / 2, y.shape)
    x0, x1, y0, y1 = base, base + length, y - half, y + half
    corners = ((x0, y0), (x1, y0), (x1, y1), (x0, y1))
    verts = np.stack([np.stack(c, -1) for c in corners], axis=1)  # (bars, 4, 2)
    alpha = 1.0 if tr.opacity is None else float(tr.opacity)
    face = _rgba(tr.marker.color or "#444444", alpha)
    line_w = tr.marker.line.width if tr.marker.line and tr.marker.line.width else 0.0
    edge = _rgba(tr.marker.line.color, alpha) if line_w and tr.marker.line.color else "none"
    coll = PolyCollection(
        verts, facecolors=[face], edgecolors=[edge], linewidths=line_w, antialiaseds=False
    )
    ax.add_collection(coll)
    ax.update_datalim(np.concatenate([np.stack([x0, y0], -1), np.stack([x1, y1], -1)]))
    return Patch(facecolor=face, edgecolor=edge, linewidth=line_w)


def _scatter(ax: Axes, tr: Any) -> Any:
    from matplotlib.lines import Line2D

    x = _floats(tr.x)
    y = _floats(tr.y)
    if not x.size:
        return None
    mode = tr.mode or "lines+markers"
    alpha = 1.0 if tr.opacity is None else float(tr.opacity)
    color = (tr.line.color if tr.line else None) or (tr.marker.color if tr.marker else None)
    color = color or "#1f77b4"
    style: dict[str, Any] = {"color": _rgba(color, alpha), "zorder": 3}
    style["linestyle"] = "-" if "lines" in mode else "none"
    style["linewidth"] = tr.line.width if tr.line and tr.line.width else 2
    if "markers" in mode:
        mk = tr.marker
        style["marker"] = {"triangle-right": ">", "square": "s"}.get(mk.symbol or "", "o")
        style["markersize"] = mk.size if mk.size else 6
        style["markerfacecolor"] = _rgba(mk.color or color, alpha)
        edge = mk.line.color if mk.line and mk.line.width else None
        style["markeredgecolor"] = _rgba(edge, alpha) if edge else style["markerfacecolor"]
        style["markeredgewidth"] = mk.line.width if edge else 0
    ax.plot(x, y, **style)
    return Line2D([], [], **style)


def _floats(values: Any) -> np.ndarray:
    """A trace's coordinates as floats, plotly's ``None`` gaps as NaN (a break)."""
    if values is None:
        return np.zeros(0)
    if isinstance(values, dict):
        return _array(values)
    return np.array([np.nan if v is None else v for v in values], dtype=float)


def _array(values: Any) -> np.ndarray:
    """A trace's numbers as floats: an array, a list, or plotly's typed array (``dtype``
    and base64 ``bdata``, as a figure made from its dict or JSON holds them)."""
    if isinstance(values, dict) and "bdata" in values:
        raw = base64.b64decode(values["bdata"])
        out = np.frombuffer(raw, dtype=np.dtype(values["dtype"])).astype(float)
        return out.reshape(values["shape"]) if values.get("shape") else out
    return np.asarray(values, dtype=float)


# -- layout: shapes, annotations, title, legend ----------------------------------------


def _shape(axes: dict[str, Axes], shape: Any) -> None:
    """A rectangle over an axis's width (a role's band) or in data coordinates."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import blended_transform_factory

    if shape.type != "rect":
        return
    ax = axes.get(shape.yref or "y")
    if ax is None:
        return
    xref = shape.xref or "x"
    xt = ax.transAxes if xref.endswith("domain") else ax.transData
    fill = _rgba(shape.fillcolor) if shape.fillcolor else "none"
    rect = Rectangle(
        (shape.x0, shape.y0),
        shape.x1 - shape.x0,
        shape.y1 - shape.y0,
        transform=blended_transform_factory(xt, ax.transData),
        facecolor=fill,
        edgecolor="none",
        zorder=0 if shape.layer == "below" else 4,
    )
    ax.add_patch(rect)


def _annotation(axes: dict[str, Axes], paper: Axes, ann: Any) -> None:
    """A label (a role's name at the right edge, a subplot's title) or an arrow (a put
    to the poll it satisfied)."""
    from matplotlib.transforms import blended_transform_factory

    ax = axes.get(ann.yref) if ann.yref and ann.yref != "paper" else None
    if ann.showarrow is not False and ann.ax is not None and ann.axref not in (None, "pixel"):
        data = axes.get((ann.yref or "y"), axes["y"])
        color = _rgba(ann.arrowcolor or "#444444")
        data.annotate(
            "",
            xy=(ann.x, ann.y),
            xytext=(ann.ax, ann.ay),
            arrowprops={
                "arrowstyle": "-|>",
                "color": color,
                "linewidth": ann.arrowwidth or 1,
                "shrinkA": 0,
                "shrinkB": 0,
            },
            zorder=5,
        )
        return
    if not ann.text:
        return
    xt = paper.transAxes if (ann.xref or "paper") == "paper" else axes["y"].transData
    yt = ax.transData if ax is not None else paper.transAxes
    ha = {"left": "left", "right": "right"}.get(ann.xanchor or "", "center")
    va = {"top": "top", "bottom": "bottom"}.get(ann.yanchor or "", "center")
    font = ann.font
    bbox = None
    if ann.bgcolor:
        bbox = {"facecolor": _rgba(ann.bgcolor), "edgecolor": "none", "pad": 1.5}
    paper.text(
        ann.x,
        ann.y,
        _text(ann.text),
        transform=blended_transform_factory(xt, yt),
        ha=ha,
        va=va,
        fontsize=font.size if font and font.size else DEFAULT_FONT_PX,
        color=_rgba(font.color) if font and font.color else "#444444",
        fontweight="bold" if "<b>" in ann.text else "normal",
        bbox=bbox,
        clip_on=False,
    )


def _title(mfig: Figure, lay: Any, h_px: int) -> None:
    t = lay.title
    if not t or not t.text:
        return
    pad = t.pad.t if t.pad and t.pad.t else 0
    y = 1.0 - (pad + 4) / h_px if t.yref == "container" else float(t.y or 1.0)
    mfig.text(
        0.005 + float(t.x or 0.0),
        y,
        _text(t.text),
        ha="left",
        va="top",
        fontsize=t.font.size if t.font and t.font.size else 17,
        fontweight="bold",
        color="#31333f",
    )


def _legend(
    mfig: Figure,
    lay: Any,
    handles: Sequence[tuple[str, Any]],
    plot: tuple[float, float, float, float],
    plot_px: int,
) -> None:
    """A horizontal legend where the layout places it (above or under the plot area),
    as many entries a row as its width holds."""
    leg = lay.legend
    size = leg.font.size if leg and leg.font and leg.font.size else 11
    widest = max(len(name) for name, _ in handles) * CHAR_PX * size / 11 + LEGEND_ENTRY_PX
    ncol = max(1, min(len(handles), int(plot_px // widest)))
    x0, y0, w, h = plot
    at_y = y0 + h * (leg.y if leg and leg.y is not None else 1.0)
    below = leg is not None and leg.yanchor == "top"
    mfig.legend(
        [hd for _, hd in handles],
        [name for name, _ in handles],
        loc="upper left" if below else "lower left",
        bbox_to_anchor=(x0 + w * (leg.x or 0.0 if leg else 0.0), at_y),
        ncol=ncol,
        frameon=False,
        fontsize=size,
        handlelength=1.2,
        handleheight=0.9,
        columnspacing=1.2,
        borderaxespad=0.2,
    )


def _text(html: object) -> str:
    """Plotly's HTML text as plain lines."""
    return TAG.sub("", str(html).replace("<br>", "\n"))


def _rgba(color: str | None, alpha: float = 1.0) -> tuple[float, float, float, float]:
    """A plotly colour (``#rrggbb``, ``rgb(...)``, ``rgba(...)``, a name) as RGBA, its
    alpha times ``alpha``."""
    from matplotlib.colors import to_rgba

    c = (color or "black").strip()
    if c.startswith("rgb"):
        parts = [float(v) for v in c[c.index("(") + 1 : c.index(")")].split(",")]
        a = parts[3] if len(parts) > 3 else 1.0
        return (parts[0] / 255, parts[1] / 255, parts[2] / 255, a * alpha)
    r, g, b, a = to_rgba(c)
    return (r, g, b, a * alpha)
