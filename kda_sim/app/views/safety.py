"""The safety map: R x L for a GPU, finishes / deadlocks / invalid, with the predicted time."""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd
import streamlit as st

from kda_sim.app.data import profile_name, simulate_cached
from kda_sim.app.figures import VERDICT_CODE, safety_figure
from kda_sim.app.outcome import Outcome, guarded, name_of
from kda_sim.app.views.common import Ctx, show_chart
from kda_sim.checks.sweep import sweep as check_sweep
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import bundled_names, load_profile

RS = range(1, 9)
LS = range(1, 5)

Cells = dict[tuple[int, int], tuple[str, float | None]]


@st.cache_resource(max_entries=512, show_spinner=False)
def _checked_cell(gpu: str, occupancy: int | None, r: int, ell: int) -> Outcome:
    """One shape through the checks' sweep (static verdict + engine), one at a time so
    the page can show progress."""
    return guarded(
        check_sweep,
        load_profile(gpu),
        occupancy=occupancy,
        rs=range(r, r + 1),
        ls=range(ell, ell + 1),
    )


def _cell(gpu: str, occupancy: int | None, r: int, ell: int) -> tuple[str, float | None, str, str]:
    """(verdict, makespan, why, source) of one shape."""
    out = _checked_cell(gpu, occupancy, r, ell)
    cells = out.value if out.ok else None
    if cells and len(cells) == 1 and getattr(cells[0], "verdict", None) in VERDICT_CODE:
        c = cells[0]
        agree = "" if getattr(c, "agree", True) else " (the engine disagrees!)"
        return c.verdict, c.time_ns, f"{c.reason}{agree}", "checks"
    out_sim = simulate_cached(gpu, LaunchConfig(r, ell), occupancy=occupancy)
    ms = out_sim.timeline.makespan if out_sim.timeline is not None else None
    why = out_sim.error or ""
    if out_sim.timeline is not None and out_sim.timeline.deadlock:
        first = out_sim.timeline.stuck[0] if out_sim.timeline.stuck else None
        why = first.reason if first else "does not finish"
    return out_sim.verdict, ms, why, "engine"


def sweep(
    gpu: str, occupancy: int | None, progress: Callable[[float, str], None] | None = None
) -> tuple[Cells, dict[tuple[int, int], str], set[str]]:
    """Every (R, L): verdict and makespan, why it is not safe, and which source said so."""
    cells: Cells = {}
    why: dict[tuple[int, int], str] = {}
    sources: set[str] = set()
    grid = [(r, ell) for r in RS for ell in LS]
    for k, (r, ell) in enumerate(grid):
        if progress is not None:
            progress(k / len(grid), f"R={r} L={ell}")
        verdict, ms, reason, source = _cell(gpu, occupancy, r, ell)
        cells[(r, ell)] = (verdict, ms)
        sources.add(source)
        if reason:
            why[(r, ell)] = reason
    if progress is not None:
        progress(1.0, "done")
    return cells, why, sources


def render(ctx: Ctx) -> None:
    names = bundled_names()
    gpu0 = profile_name(ctx.run.main.meta.gpu) or names[0]
    a, b, c = st.columns([2, 2, 3])
    gpu = a.selectbox("GPU profile", names, index=names.index(gpu0), key="sm_gpu")
    occ = int(b.number_input("Occupancy (0 = from resources)", 0, 32, 0, 1, key="sm_occ"))
    c.caption(f"From `{name_of(check_sweep)}`, as `kda-sim sweep` computes it.")
    key = ("safety", gpu, occ)
    if st.button(f"Compute the safety map for {gpu}", key="sm_go", type="primary"):
        bar = st.progress(0.0, text="starting")
        st.session_state[key] = sweep(
            gpu, occ or None, lambda f, what: bar.progress(f, text=f"simulating {what}")
        )
        bar.empty()
    if key not in st.session_state:
        st.info(f"Press the button to simulate R 1..8 x L 1..4 on {gpu} (a few seconds a shape).")
        return
    cells, why, sources = st.session_state[key]
    if "engine" in sources and "checks" in sources:
        st.caption("Some shapes fell back to the engine alone (the checks' sweep failed there).")
    show_chart(safety_figure(cells, gpu), "safety_chart")
    counts = pd.Series([v for v, _ in cells.values()]).value_counts()
    st.markdown(" · ".join(f"**{n}** {v}" for v, n in counts.items()) + f" of {len(cells)} shapes")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "R": r,
                    "L": ell,
                    "verdict": v,
                    "predicted us": None if ms is None else round(ms / 1e3, 2),
                    "why": why.get((r, ell), ""),
                }
                for (r, ell), (v, ms) in sorted(cells.items())
            ]
        ),
        hide_index=True,
        width="stretch",
    )
