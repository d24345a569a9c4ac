"""What every view shares: the page context, the filter controls, cached figure builds.

No pandas here: the first render (the timeline view) draws no table, and pandas is a
second of its imports; the tables are in kda_sim.app.stage_tables."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import plotly.graph_objects as go
import streamlit as st

from kda_sim.app import run_store
from kda_sim.app.data import DEFAULT_GPU, Run, profile_name
from kda_sim.app.figures import (
    Filter,
    HandoffView,
    Layer,
    role_order,
    stage_order,
    timeline_figure,
)
from kda_sim.app.outcome import Outcome, guarded
from kda_sim.machine.profile import bundled_names
from kda_sim.timeline.critical import CriticalPath, critical_path, wait_for_chain
from kda_sim.timeline.model import StuckWait, Timeline

CHART_CONFIG = {"scrollZoom": True, "displaylogo": False, "responsive": True}
PICTURE_KEY = "timeline_picture"  # the picture's container (CSS class st-key-timeline_picture)


@dataclass
class Ctx:
    root: Path
    run: Run
    run_key: str  # names the run in cache keys (the timelines themselves are not hashed)


@st.cache_resource(max_entries=64, show_spinner=False)
def _critical(key: str, _tl: Timeline) -> CriticalPath | None:
    return critical_path(_tl)


def critical_of(key: str, tl: Timeline) -> CriticalPath | None:
    return _critical(key, tl)


@st.cache_resource(max_entries=48, show_spinner=False)
def _figure(
    key: str,
    _layers: tuple[Layer, ...],
    flt: Filter,
    side_by_side: bool,
    polls: bool,
    puts: bool,
    with_critical: bool,
    _critical: CriticalPath | None,
    _handoff: HandoffView | None,
    _chain: tuple[StuckWait, ...],
    title: str,
    window_us: tuple[float, float] | None = None,
) -> go.Figure:
    return timeline_figure(
        _layers,
        flt,
        side_by_side=side_by_side,
        polls=polls,
        puts=puts,
        critical=_critical if with_critical else None,
        handoff=_handoff,
        chain=_chain,
        title=title,
        window_us=window_us,
    )


def figure_cached(
    key: str,
    layers: tuple[Layer, ...],
    flt: Filter,
    *,
    side_by_side: bool = False,
    polls: bool = True,
    puts: bool = False,
    critical: CriticalPath | None = None,
    handoff: HandoffView | None = None,
    handoff_key: str = "",
    chain: tuple[StuckWait, ...] = (),
    title: str = "",
    window_us: tuple[float, float] | None = None,
) -> go.Figure:
    """A cached timeline figure; ``key`` must name the layers, ``handoff_key`` the picked
    poll; a chain is named by its first CTA."""
    chain_key = f"chain{chain[0].cta}" if chain else ""
    return _figure(
        f"{key}|{handoff_key}|{chain_key}",
        layers,
        flt,
        side_by_side,
        polls,
        puts,
        critical is not None,
        critical,
        handoff,
        chain,
        title,
        window_us,
    )


def show_chart(fig: go.Figure, key: str) -> None:
    st.plotly_chart(fig, key=key, config=CHART_CONFIG, width="stretch")


@st.cache_resource(max_entries=48, show_spinner=False)
def _picture(run_key: str, view: str, on_disk: bool, _build: Callable[[], go.Figure]) -> bytes:
    from kda_sim.app.figure_image import png_of

    if not on_disk:
        return png_of(_build())
    entry = run_store.picture_entry(run_key, view)
    return run_store.stored_png(entry, lambda: png_of(_build()))


def picture_cached(run_key: str, view: str, build: Callable[[], go.Figure], on_disk: bool) -> bytes:
    """The figure ``build()`` makes drawn as a PNG, once per (run, view): ``run_key``
    names the run, ``view`` every choice the figure is drawn from; ``on_disk``: kept in
    the run store too (a run key naming the run's content: a bundled trace's)."""
    return _picture(run_key, view, on_disk, build)


def show_picture(png: bytes, alt: str) -> None:
    """``png`` across the column. As a data URL: given bytes, Streamlit opens each image
    with PIL on every rerun and scales one wider than 1,460 px down (its own re-encode),
    which would blur the picture's thin lanes (drawn at twice the CSS width)."""
    url = "data:image/png;base64," + base64.b64encode(png).decode("ascii")
    with st.container(key=PICTURE_KEY):
        st.image(url, width="stretch", alt=alt)


def pick_gpu(where: object, gpu: str, key: str) -> str:
    """The "GPU profile" select box: the bundled profiles, opening on the one the run's GPU
    (``gpu``) names, else the default (not the first name: K1 has no costs on every GPU)."""
    names = bundled_names()
    gpu0 = profile_name(gpu) or DEFAULT_GPU
    return where.selectbox("GPU profile", names, index=names.index(gpu0), key=key)  # type: ignore[attr-defined]


def fresh(key: str, options: object, default: object) -> None:
    """Reset the widget ``key`` to ``default`` when its options changed (another kernel's
    run: its roles and stages are not this one's, and a kept pick would show nothing)."""
    seen = f"{key}__options"
    # a widget not drawn on the last rerun (another view was open) has lost its state
    if st.session_state.get(seen) != options or key not in st.session_state:
        st.session_state[seen] = options
        st.session_state[key] = default


def filter_controls(tl: Timeline, prefix: str) -> Filter:
    """Role, CTA range and stage filters for a timeline's rows."""
    roles = role_order(tl, {c.role for c in tl.ctas})
    stages = stage_order(tl, {sp.name for _, sp in tl.stage_spans()})
    n = len(tl.ctas)
    top = max(n - 1, 1)
    fresh(f"{prefix}_roles", roles, roles)
    fresh(f"{prefix}_stages", stages, stages)
    fresh(f"{prefix}_ctas", top, (0, top))
    a, b, c = st.columns([2, 3, 5])
    pick_roles = a.multiselect("Roles", roles, key=f"{prefix}_roles")
    lo, hi = b.slider("CTAs", 0, top, key=f"{prefix}_ctas")
    pick_stages = c.multiselect("Stages", stages, key=f"{prefix}_stages")
    return Filter(tuple(pick_roles), int(lo), int(hi), tuple(pick_stages))


def us(ns: float | None) -> str:
    return "—" if ns is None else f"{ns / 1e3:.2f} us"


@st.cache_resource(max_entries=32, show_spinner=False)
def _cached_call(_func: Callable[..., object], name: str, key: str, _args: tuple) -> Outcome:
    return guarded(_func, *_args)


def cached_call(func: Callable[..., object], key: str, *args: object) -> Outcome:
    """``func(*args)`` once per (function, run), a failure as a message: the comparisons
    take seconds."""
    return _cached_call(func, f"{func.__module__}.{func.__qualname__}", key, args)


def longest_chain(tl: Timeline) -> list[StuckWait]:
    """The wait-for chain with the most links among the stuck CTAs (the one to draw)."""
    waiting = [s.cta for s in tl.stuck if s.producer is not None]
    if not waiting:
        return []
    return max((wait_for_chain(tl, c) for c in waiting), key=len)


def chain_lines(tl: Timeline, chain: list[StuckWait]) -> str:
    lines = []
    for w in chain:
        at = f" on {w.region}[{w.index}]" if w.region else ""
        lines.append(f"- **CTA {w.cta}** ({tl.ctas[w.cta].role}) in `{w.stage}`{at}: {w.reason}")
    return "\n".join(lines)
