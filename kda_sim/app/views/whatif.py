"""What-if: change the GPU, occupancy, shape, kda0, the protocol's variants or latencies;
re-simulate."""

from __future__ import annotations

import itertools
import time
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from kda_sim.app.data import (
    SimOutcome,
    costs_said,
    floor_cached,
    simulate_cached,
    whatif_profile,
)
from kda_sim.app.figures import Filter, Layer
from kda_sim.app.outcome import Outcome, guarded, name_of, plain
from kda_sim.app.views.common import (
    Ctx,
    chain_lines,
    critical_of,
    figure_cached,
    longest_chain,
    pick_gpu,
    show_chart,
    us,
)
from kda_sim.app.views.export import perfetto_bytes, png_bytes, slug
from kda_sim.checks.floor import Figures
from kda_sim.checks.launch_check import check_launch
from kda_sim.errors import KdaSimError
from kda_sim.kernels.registry import get, spec_for
from kda_sim.kernels.spec import ConfigForm, FormField, hook
from kda_sim.machine.profile import load_profile
from kda_sim.machine.residency import check_occupancy
from kda_sim.timeline.critical import wait_for_chain
from kda_sim.timeline.model import StuckWait, Timeline

# the latencies a user most often doubts, first; the rest sit behind "more"
LATENCY_KNOBS = ("poll", "retry", "visibility_same_xcd", "visibility_cross_xcd", "hbm_load")
MORE_KNOBS = ("store_ack", "l2_load", "dispatch", "barrier")


def render(ctx: Ctx) -> None:
    m = ctx.run.main.meta
    spec = get(m.kernel)
    a, b, c, d = st.columns(4)
    gpu = pick_gpu(a, m.gpu, "wi_gpu")
    occ = int(
        b.number_input("Occupancy (CTAs a unit; 0 = from resources)", 0, 32, 0, 1, key="wi_occ")
    )
    st.caption(f"Simulated on {costs_said(gpu, spec.name)}.")
    form = form_of(spec, m.config())
    cfg = _config_controls(spec, form, m.config(), (c, d))
    params = _latency_controls(gpu, spec.name)
    refused = occupancy_refused(spec, cfg, gpu, params, occ)
    if refused:
        st.error(f"Not simulated: {refused}")
        return
    _render_cfg(ctx, spec, form, gpu, cfg, occ, params)


def occupancy_refused(spec: Any, cfg: Any, gpu: str, params: dict[str, float], occ: int) -> str:
    """Why the occupancy asked for cannot run this build here ('' if it can, or if the
    configuration itself is invalid: the simulation says what is wrong with that)."""
    if not occ:
        return ""
    try:
        valid = spec.validate(cfg)
        prof = whatif_profile(gpu, params, spec.name)
    except KdaSimError:
        return ""
    try:
        check_occupancy(valid, prof, occ)
    except KdaSimError as e:
        return str(e)
    return ""


def form_of(spec: Any, base: Any) -> ConfigForm:
    """The kernel's form (its ``config_form`` hook), else every field of ``base`` by its
    type and every on/off field combined."""
    form = hook(spec, "config_form")
    if form is not None:
        return form
    fields = spec.config_to_dict(base)
    switches = tuple(k for k, v in fields.items() if isinstance(v, bool))
    return ConfigForm(
        fields=tuple(FormField(name, name) for name in fields),
        switches=switches,
        switches_title=f"Every combination of {', '.join(switches)}",
    )


def _config_controls(
    spec: Any, form: ConfigForm, base: Any, spare: tuple[DeltaGenerator, ...]
) -> Any:
    """A widget a field of ``form`` (the ``spare`` columns first, then rows of five),
    starting from the open run's configuration ``base``; the configuration they set
    (validated by the simulation, which says what is wrong)."""
    values = spec.config_to_dict(base)
    default = spec.config_to_dict(spec.default_config())
    rest = form.fields[len(spare) :]
    cols = [*spare, *(st.columns(min(len(rest), 5)) if rest else ())]
    out: dict[str, Any] = {}
    for i, f in enumerate(form.fields):
        col = cols[i if i < len(spare) else len(spare) + (i - len(spare)) % 5]
        value = values.get(f.name, default.get(f.name))
        out[f.name] = _widget(col, f, value, f"wi|{spec.name}|{f.name}")
    return spec.config_from_dict(out)


def _widget(col: DeltaGenerator, f: FormField, value: Any, key: str) -> Any:
    """One field's widget, by its value's type; a field of another type keeps its value
    (said beside it)."""
    help_ = f.help or None
    if isinstance(value, bool):
        if f.choices is not None:
            picked = col.radio(f.label, f.choices, index=int(value), key=key, help=help_)
            return picked == f.choices[1]
        return bool(col.checkbox(f.label, value=value, key=key, help=help_))
    if isinstance(value, int):
        if f.lo is not None and f.hi is not None:
            return int(col.number_input(f.label, f.lo, f.hi, value, 1, key=key, help=help_))
        return int(col.number_input(f.label, value=value, step=1, key=key, help=help_))
    if isinstance(value, float):
        return float(col.number_input(f.label, value=value, key=key, help=help_))
    if isinstance(value, str):
        return col.text_input(f.label, value=value, key=key, help=help_)
    col.caption(f"{f.label} = {value!r} (kept)")
    return value


def _render_cfg(
    ctx: Ctx,
    spec: Any,
    form: ConfigForm,
    gpu: str,
    cfg: Any,
    occ: int,
    params: dict[str, float],
) -> None:
    t0 = time.perf_counter()
    with st.spinner("Simulating…"):
        out = simulate_cached(gpu, cfg, occ or None, params)
    cached = time.perf_counter() - t0 < 0.5 * out.seconds
    _verdict(ctx, out, gpu, cached)
    _switches(spec, form, gpu, cfg, occ or None, params)
    _floor(gpu, cfg, occ or None, params)
    _checks(gpu, cfg, occ or None, params)
    if out.timeline is None:
        return
    tl = out.timeline
    key = f"whatif|{gpu}|{cfg}|{occ}|{sorted(params.items())}"
    cp = critical_of(key, tl) if not tl.deadlock else None
    chain = _pick_chain(tl) if tl.deadlock else []
    fig = figure_cached(
        key,
        (Layer("what-if", tl, False),),
        Filter(),
        critical=cp,
        chain=tuple(chain),
        title=f"what-if: {gpu} {spec.label(cfg)}",
    )
    show_chart(fig, "whatif_chart")
    a, b = st.columns(2)
    label = form.file_label(cfg) if form.file_label is not None else spec.label(cfg)
    name = slug(f"whatif-{gpu}-{label}")
    a.download_button(
        "PNG of this what-if",
        data=lambda: png_bytes(tl),
        file_name=f"{name}.png",
        mime="image/png",
        key="wi_dl_png",
    )
    b.download_button(
        "Perfetto JSON of this what-if",
        data=lambda: perfetto_bytes(tl),
        file_name=f"{name}.json",
        mime="application/json",
        key="wi_dl_json",
    )
    if tl.deadlock:
        _stuck_table(tl)


def _priced(row: dict[str, Any], out: Any, base: float | None) -> dict[str, Any]:
    """A combination's table row: ``row``'s label, its verdict, its makespan and the
    difference from this what-if's (``base``, ns)."""
    span = out.timeline.makespan if out.timeline is not None else None
    diff = None if span is None or base is None else round((span - base) / 1e3, 2)
    return {
        **row,
        "verdict": out.verdict,
        "makespan (us)": None if span is None else round(span / 1e3, 2),
        "vs this what-if (us)": diff,
    }


MAX_SWITCHES = 4  # on/off fields combined at most (2^4 simulations)


def _switches(
    spec: Any, form: ConfigForm, gpu: str, cfg: Any, occ: int | None, params: dict[str, float]
) -> None:
    """Every combination of the form's on/off fields at this configuration, GPU and
    latencies: what each would save (or cost) before anyone writes it into a kernel."""
    names = form.switches
    if not names:
        st.caption(f"Every on/off flag combined: {spec.name} has no on/off field.")
        return
    if len(names) > MAX_SWITCHES:
        st.caption(
            f"Every on/off flag combined: {spec.name} has {len(names)} on/off fields, "
            f"more than {MAX_SWITCHES} ({2**MAX_SWITCHES} simulations); set them above."
        )
        return
    if not st.checkbox(form.switches_title, key="wi_switches"):
        return
    mine = simulate_cached(gpu, cfg, occ, params).timeline
    base = mine.makespan if mine is not None else None
    fields = spec.config_to_dict(cfg)
    rows = []
    for on in itertools.product((False, True), repeat=len(names)):
        setting = dict(zip(names, on, strict=True))
        out = simulate_cached(gpu, spec.config_from_dict({**fields, **setting}), occ, params)
        on_ = ", ".join(k for k, v in setting.items() if v) or form.none_on
        rows.append(_priced({form.switches_column: on_}, out, base))
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    if form.switch_help:
        st.caption("; ".join(f"{k}: {v}" for k, v in form.switch_help.items()) + ".")


def _floor(gpu: str, cfg: Any, occ: int | None, params: dict[str, float]) -> None:
    """How fast this protocol could run on this GPU: the what-if's profile with its costs
    taken away a step at a time (kda_sim.checks.floor), down to the protocol's own chain."""
    if not st.checkbox("How fast this protocol could run (its floor)", key="wi_floor"):
        return
    prof = whatif_profile(gpu, params, spec_for(cfg).name)
    a, b, c = st.columns(3)
    top = prof.hbm_peak_bytes_per_ns or 1e5
    stream = a.number_input(
        "best read measured, GB/s",
        1.0,
        top,
        min(prof.hbm_bytes_per_ns, top),
        key=f"wi_fl_bw_{gpu}",
    )
    vis = b.number_input(
        "a store seen by another CTA, ns",
        0.0,
        1e6,
        float(prof.latency_ns["visibility_same_xcd"]),
        key=f"wi_fl_vis_{gpu}",
    )
    poll = c.number_input(
        "one poll's round trip, ns",
        0.0,
        1e6,
        float(prof.latency_ns["poll"]),
        key=f"wi_fl_poll_{gpu}",
    )
    with st.spinner("Six simulations…"):
        rep = floor_cached(gpu, cfg, occ, params, Figures(float(stream), float(vis), float(poll)))
    if isinstance(rep, str):
        st.error(rep)
        return
    rows = [
        {
            "each step on the one before": r["step"],
            "makespan (us)": round(r["makespan_us"], 1),
            "x the HBM bound": round(r["x_bound"], 2),
            "hand-off latency on the critical path (us)": round(r["handoff_latency_us"], 1),
            "gemv on it (us)": round(r["gemv_us"], 1),
        }
        for r in rep["rows"]
    ]
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption(
        f"HBM bound: this launch's bytes at the datasheet's bandwidth, "
        f"{rep['rows'][0]['bound_us']:.1f} us. The figures above start at the profile's own; "
        "type the GPU's measured ones (the H200's: 3910 GB/s read, 300 ns, 190 ns; "
        "kda-sim floor). What is left at the last steps is the protocol's own "
        "chain: its hand-offs in order and the weight read behind the XRDY flags."
    )


def _latency_controls(gpu: str, kernel: str) -> dict[str, float]:
    prof = load_profile(gpu, kernel=kernel)
    lat = prof.latency_ns
    params: dict[str, float] = {}
    with st.expander("Latencies (ns) and bandwidth", expanded=False):
        cols = st.columns(len(LATENCY_KNOBS))
        for col, name in zip(cols, LATENCY_KNOBS, strict=True):
            v = col.number_input(name, 0.0, 1e6, float(lat[name]), key=f"wi_lat_{gpu}_{name}")
            if v != lat[name]:
                params[name] = float(v)
        cols = st.columns(len(MORE_KNOBS) + 1)
        for col, name in zip(cols, MORE_KNOBS, strict=False):
            v = col.number_input(name, 0.0, 1e6, float(lat[name]), key=f"wi_lat_{gpu}_{name}")
            if v != lat[name]:
                params[name] = float(v)
        bw = cols[-1].number_input(
            "HBM GB/s", 1.0, 1e5, float(prof.hbm_bytes_per_ns), key=f"wi_bw_{gpu}"
        )
        if bw != prof.hbm_bytes_per_ns:
            params["hbm_bytes_per_ns"] = float(bw)
    return params


def _verdict(ctx: Ctx, out: SimOutcome, gpu: str, cached: bool) -> None:
    if out.timeline is None:
        st.warning(f"Invalid configuration: {out.error}")
        return
    tl = out.timeline
    base = ctx.run.sim.makespan if ctx.run.sim is not None else None
    took = "cached" if cached else f"simulated in {out.seconds:.2f} s"
    took = f"({took}; {out.residency})"
    if tl.deadlock:
        st.error(
            f"DEADLOCK on {gpu}: {len(tl.stuck)} CTAs cannot go on, "
            f"{sum(c.start is None for c in tl.ctas)} never became resident. {took}"
        )
    else:
        delta = ""
        if base:
            delta = f" ({100 * (tl.makespan / base - 1):+.1f}% vs the open run's simulation)"  # type: ignore[operator]
        st.success(f"Finishes in {us(tl.makespan)}{delta}. {took}")
    if out.stale_reads:
        st.error(
            f"Visibility: {out.stale_reads} flagged reads saw x before its stores were visible."
        )


@st.cache_resource(max_entries=64, show_spinner=False)
def _run_checks(key: str, _cfg: Any, _prof: object, occ: int | None) -> Outcome:
    return guarded(check_launch, _cfg, _prof, occupancy=occ)


def _checks(gpu: str, cfg: Any, occ: int | None, params: dict[str, float]) -> None:
    with st.expander("Check verdicts (deadlock, visibility, role rule)", expanded=True):
        try:
            cfg = spec_for(cfg).validate(cfg)
            prof = whatif_profile(gpu, params, spec_for(cfg).name)
        except KdaSimError as e:
            st.warning(str(e))
            return
        # the profile's identity, not its name alone: a name may come to mean other costs
        key = f"{gpu}|{prof.identity()}|{cfg}|{occ}|{sorted(params.items())}"
        done = st.session_state.setdefault("wi_checked", set())
        # the checks run the engine under several adversarial latencies (seconds): on demand
        if key not in done and not st.button("Run the checks", key="wi_check_go"):
            st.caption(
                f"`{name_of(check_launch)}`: static wait-for analysis, adversarial engine runs, "
                f"visibility and the role rule; takes a few seconds."
            )
            return
        done.add(key)
        with st.spinner("Checking deadlock freedom, visibility and the role rule…"):
            out = _run_checks(key, cfg, prof, occ)
        if not out.ok:
            st.warning(out.message)
            return
        _findings(out.value)


def _findings(report: object) -> None:
    findings = getattr(report, "findings", None)
    if findings is None:
        st.json(plain(report), expanded=1)
        return
    ok = getattr(report, "ok", None)
    failing = [f for f in findings if getattr(f, "fails", False)]
    if ok or (ok is None and not failing):
        st.success(f"Every check passes ({len(findings)} notes).")
    for f in findings:
        cat = getattr(getattr(f, "category", ""), "value", getattr(f, "category", ""))
        text = f"**{cat}**: {getattr(f, 'message', f)}"
        fix = getattr(f, "fix", "")
        if fix:
            text += f"\n\n*Fix:* {fix}"
        (st.error if getattr(f, "fails", False) else st.info)(text)


def _pick_chain(tl: Timeline) -> list[StuckWait]:
    """The chain to draw bold: from a stuck CTA the user picks (default: the longest)."""
    st.subheader("Wait-for chain")
    waiting = [s.cta for s in tl.stuck if s.producer is not None]
    if not waiting:
        st.markdown("No stuck CTA names a producer: each waits on a pair no CTA puts.")
        return []
    longest = longest_chain(tl)[0].cta
    start = st.selectbox("From stuck CTA", waiting, index=waiting.index(longest), key="wi_chain")
    chain = wait_for_chain(tl, int(start))
    st.markdown(chain_lines(tl, chain))
    st.caption("Drawn bold on the timeline below; faint red lines: every stuck CTA's wait.")
    return chain


def _stuck_table(tl: Timeline) -> None:
    st.markdown(f"**All {len(tl.stuck)} stuck CTAs**")
    st.dataframe(
        pd.DataFrame(
            [
                {
                    "CTA": s.cta,
                    "role": tl.ctas[s.cta].role,
                    "stage": s.stage,
                    "waits on": f"{s.region}[{s.index}]" if s.region else "a slot",
                    "producer": s.producer,
                    "reason": s.reason,
                }
                for s in tl.stuck
            ]
        ),
        hide_index=True,
        width="stretch",
        height=260,
    )
