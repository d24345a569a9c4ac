"""Safety: the open run's launch through every check (any kernel: deadlock static and in
the engine, visibility, the role rule, the ticket and ABA sections), then the safety map
over the kernel's two sweep axes (K1's R x L) where the kernel has them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd
import streamlit as st

from kda_sim.app.data import config_key, config_of, costs_said, profile_id, simulate_cached
from kda_sim.app.figures import VERDICT_CODE, safety_figure
from kda_sim.app.outcome import Outcome, guarded, name_of
from kda_sim.app.views.common import Ctx, pick_gpu, show_chart
from kda_sim.checks.findings import Category
from kda_sim.checks.launch_check import check_launch, launch_text
from kda_sim.checks.sweep import sweep as check_sweep
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import load_profile

RS = range(1, 9)  # the first axis's values (K1: requests)
LS = range(1, 5)  # the second's (K1: tokens a request)

Cells = dict[tuple[int, int], tuple[str, float | None]]


@st.cache_resource(max_entries=512, show_spinner=False)
def _checked_cell(
    kernel: str, gpu: str, occupancy: int | None, r: int, ell: int, costs_id: str = ""
) -> Outcome:
    """One shape through the checks' sweep (static verdict + engine), one at a time so
    the page can show progress; ``costs_id``: the profile's identity (a cache key only)."""
    del costs_id
    return guarded(
        check_sweep,
        load_profile(gpu, kernel=kernel),
        kernel=kernel,
        occupancy=occupancy,
        rs=range(r, r + 1),
        ls=range(ell, ell + 1),
        jobs=1,
    )


def _cell(
    kernel: str, gpu: str, occupancy: int | None, r: int, ell: int, costs_id: str = ""
) -> tuple[str, float | None, str, str]:
    """(verdict, makespan, why, source) of one shape."""
    out = _checked_cell(kernel, gpu, occupancy, r, ell, costs_id)
    cells = out.value if out.ok else None
    if cells and len(cells) == 1 and getattr(cells[0], "verdict", None) in VERDICT_CODE:
        c = cells[0]
        agree = "" if getattr(c, "agree", True) else " (the engine disagrees!)"
        return c.verdict, c.time_ns, f"{c.reason}{agree}", "checks"
    spec = get(kernel)
    first, second = hook(spec, "sweep_axes")
    out_sim = simulate_cached(gpu, spec.config_from_dict({first: r, second: ell}), occupancy)
    ms = out_sim.timeline.makespan if out_sim.timeline is not None else None
    why = out_sim.error or ""
    if out_sim.timeline is not None and out_sim.timeline.deadlock:
        first_stuck = out_sim.timeline.stuck[0] if out_sim.timeline.stuck else None
        why = first_stuck.reason if first_stuck else "does not finish"
    return out_sim.verdict, ms, why, "engine"


def sweep(
    gpu: str,
    occupancy: int | None,
    progress: Callable[[float, str], None] | None = None,
    kernel: str = DEFAULT_KERNEL,
) -> tuple[Cells, dict[tuple[int, int], str], set[str]]:
    """Every shape of the kernel's two axes: verdict and makespan, why it is not safe,
    and which source said so."""
    first, second = hook(get(kernel), "sweep_axes")
    cells: Cells = {}
    why: dict[tuple[int, int], str] = {}
    sources: set[str] = set()
    grid = [(r, ell) for r in RS for ell in LS]
    ident = profile_id(gpu, kernel)
    for k, (r, ell) in enumerate(grid):
        if progress is not None:
            progress(k / len(grid), f"{first}={r} {second}={ell}")
        verdict, ms, reason, source = _cell(kernel, gpu, occupancy, r, ell, ident)
        cells[(r, ell)] = (verdict, ms)
        sources.add(source)
        if reason:
            why[(r, ell)] = reason
    if progress is not None:
        progress(1.0, "done")
    return cells, why, sources


def render(ctx: Ctx) -> None:
    m = ctx.run.main.meta
    spec = get(m.kernel)
    a, b, c = st.columns([2, 2, 3])
    gpu = pick_gpu(a, m.gpu, "sm_gpu")
    occ = int(b.number_input("Occupancy (0 = from resources)", 0, 32, 0, 1, key="sm_occ"))
    st.caption(f"Checked on {costs_said(gpu, spec.name)}.")
    c.caption(
        f"`{name_of(check_launch)}` on this run's launch ({spec.name}), as `kda-sim check` "
        f"runs it; the map from `{name_of(check_sweep)}`, as `kda-sim sweep` computes it."
    )
    _launch_checks(m.config(), gpu, occ or None)
    st.subheader("Safety map")
    axes = hook(spec, "sweep_axes")
    if axes is None:
        st.info(
            f"No safety map for {spec.name}: it defines no sweep axes (the kernel's "
            f"`sweep_axes` hook names the two configuration fields a map spans)."
        )
        return
    _map(spec.name, tuple(axes), gpu, occ)


@st.cache_resource(max_entries=32, show_spinner=False)
def _checked_launch(
    kernel: str,
    config: tuple[tuple[str, Any], ...],
    gpu: str,
    occ: int | None,
    costs_id: str = "",
) -> Outcome:
    del costs_id  # part of the cache key only: the profile's identity
    return guarded(
        lambda: check_launch(
            config_of(kernel, config), load_profile(gpu, kernel=kernel), occupancy=occ
        )
    )


def _launch_checks(cfg: Any, gpu: str, occ: int | None) -> None:
    """The open run's launch through ``check_launch``, on request (several engine runs)."""
    st.subheader("This launch")
    kernel, config = config_key(cfg)
    ident = profile_id(gpu, kernel)
    key = ("sm_checked", kernel, config, gpu, ident, occ)
    if key not in st.session_state and not st.button(
        "Check this launch", key="sm_check_go", type="primary"
    ):
        st.caption(
            "Deadlock freedom (static and in the engine under adversarial latencies), "
            "visibility, the role rule, tickets and counter reuse (ABA): a few seconds."
        )
        return
    with st.spinner("Checking the launch…"):
        out = _checked_launch(kernel, config, gpu, occ, ident)
    st.session_state[key] = True
    if not out.ok:
        st.error(f"The checks could not run: {out.message}")
        return
    rep = out.value
    failing = sorted(c.value for c in rep.failing())
    if rep.ok:
        st.success(f"PASS on {gpu}: every check holds ({len(rep.findings)} notes).")
    elif Category.DEADLOCK in rep.failing():
        st.error(f"DEADLOCK on {gpu}: FAIL ({', '.join(failing)}); the wait-for chain below.")
    else:
        st.error(f"FAIL on {gpu}: {', '.join(failing)}")
    st.code(launch_text(rep), language=None)
    for f in rep.findings:
        text = f"**{f.category.value}**: {f.message}"
        if f.fix:
            text += f"\n\n*Fix:* {f.fix}"
        (st.error if f.fails else st.info)(text)


def _map(kernel: str, axes: tuple[str, str], gpu: str, occ: int) -> None:
    first, second = axes
    key = ("safety", kernel, gpu, profile_id(gpu, kernel), occ)
    if st.button(f"Compute the safety map for {gpu}", key="sm_go", type="primary"):
        bar = st.progress(0.0, text="starting")
        st.session_state[key] = sweep(
            gpu,
            occ or None,
            lambda f, what: bar.progress(f, text=f"simulating {what}"),
            kernel=kernel,
        )
        bar.empty()
    if key not in st.session_state:
        st.info(
            f"Press the button to simulate {first} {RS[0]}..{RS[-1]} x {second} "
            f"{LS[0]}..{LS[-1]} on {gpu} (a few seconds a shape)."
        )
        return
    cells, why, sources = st.session_state[key]
    if "engine" in sources and "checks" in sources:
        st.caption("Some shapes fell back to the engine alone (the checks' sweep failed there).")
    show_chart(safety_figure(cells, gpu, axes), "safety_chart")
    counts = pd.Series([v for v, _ in cells.values()]).value_counts()
    st.markdown(" · ".join(f"**{n}** {v}" for v, n in counts.items()) + f" of {len(cells)} shapes")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    first: r,
                    second: ell,
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
