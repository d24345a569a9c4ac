"""What-if: change the GPU, occupancy, shape, kda0, the protocol's variants or latencies;
re-simulate."""

from __future__ import annotations

import dataclasses
import itertools
import time
from typing import Any

import pandas as pd
import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from kda_sim.app.data import (
    DEFAULT_GPU,
    SimOutcome,
    floor_cached,
    profile_name,
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
    show_chart,
    us,
)
from kda_sim.app.views.export import perfetto_bytes, png_bytes, slug
from kda_sim.checks.floor import Figures
from kda_sim.checks.launch_check import check_launch
from kda_sim.errors import KdaSimError
from kda_sim.kernels.k1.config import VARIANT_HELP, VARIANTS, LaunchConfig
from kda_sim.kernels.registry import get, spec_for
from kda_sim.machine.profile import bundled_names, load_profile
from kda_sim.timeline.critical import wait_for_chain
from kda_sim.timeline.model import Meta, StuckWait, Timeline

# the latencies a user most often doubts, first; the rest sit behind "more"
LATENCY_KNOBS = ("poll", "retry", "visibility_same_xcd", "visibility_cross_xcd", "hbm_load")
MORE_KNOBS = ("store_ack", "l2_load", "dispatch", "barrier")


def render(ctx: Ctx) -> None:
    m = ctx.run.main.meta
    spec = get(m.kernel)
    names = bundled_names()
    gpu0 = profile_name(m.gpu) or DEFAULT_GPU  # not names[0]: K1 has no costs on every GPU
    a, b, c, d = st.columns(4)
    gpu = a.selectbox("GPU profile", names, index=names.index(gpu0), key="wi_gpu")
    occ = int(
        b.number_input("Occupancy (CTAs a unit; 0 = from resources)", 0, 32, 0, 1, key="wi_occ")
    )
    if isinstance(spec.config_type, type) and issubclass(spec.config_type, LaunchConfig):
        cfg = _k1_controls(m, c, d)
    else:
        cfg = _config_controls(spec, m.config())
    params = _latency_controls(gpu)
    _render_cfg(ctx, spec, gpu, cfg, occ, params)


def _k1_controls(m: Meta, c: DeltaGenerator, d: DeltaGenerator) -> LaunchConfig:
    """K1's own widgets: its shape, kda0 and protocol variants, named as its docs do."""
    gate = c.radio(
        "Gate variant",
        ("gate stage", "gate_local"),
        index=1 if m.gate_local else 0,
        key="wi_gate",
        help=f"gate_local: {VARIANT_HELP['gate_local']}",
    )
    kda0 = int(d.number_input("kda0", 0, 255, m.kda0, 1, key="wi_kda0"))
    a, b, c, d, e = st.columns(5)
    R = int(a.number_input("R (requests)", 1, 16, m.R, 1, key="wi_R"))
    L = int(b.number_input("L (tokens a request)", 1, 8, m.L, 1, key="wi_L"))
    nb = int(c.number_input("nb (AttnRes blocks)", 1, 31, m.nb, 1, key="wi_nb"))
    nw_first = d.checkbox(
        "in_nw with the slice",
        value=m.nw_first,
        key="wi_nw_first",
        help=f"nw_first: {VARIANT_HELP['nw_first']}",
    )
    onw_first = e.checkbox(
        "on_w in k.stage",
        value=m.onw_first,
        key="wi_onw_first",
        help=f"onw_first: {VARIANT_HELP['onw_first']}",
    )
    return LaunchConfig(
        R,
        L,
        nb,
        kda0,
        gate == "gate_local",
        nw_first=bool(nw_first),
        onw_first=bool(onw_first),
    )


def _config_controls(spec: Any, base: Any) -> Any:
    """A widget a configuration field of ``spec`` (by its type), starting from the open
    run's configuration ``base``; the configuration they set (validated by the
    simulation, which says what is wrong)."""
    fields = spec.config_to_dict(base)
    cols = st.columns(min(max(len(fields), 1), 5))
    out: dict[str, Any] = {}
    for i, (name, value) in enumerate(fields.items()):
        col = cols[i % len(cols)]
        key = f"wi|{spec.name}|{name}"
        if isinstance(value, bool):
            out[name] = col.checkbox(name, value=value, key=key)
        elif isinstance(value, int):
            out[name] = int(col.number_input(name, value=value, step=1, key=key))
        elif isinstance(value, float):
            out[name] = float(col.number_input(name, value=value, key=key))
        elif isinstance(value, str):
            out[name] = col.text_input(name, value=value, key=key)
        else:
            col.caption(f"{name} = {value!r} (kept)")
            out[name] = value
    return spec.config_from_dict(out)


def _render_cfg(
    ctx: Ctx, spec: Any, gpu: str, cfg: Any, occ: int, params: dict[str, float]
) -> None:
    t0 = time.perf_counter()
    with st.spinner("Simulating…"):
        out = simulate_cached(gpu, cfg, occ or None, params)
    cached = time.perf_counter() - t0 < 0.5 * out.seconds
    _verdict(ctx, out, gpu, cached)
    if isinstance(cfg, LaunchConfig):
        _variants(gpu, cfg, occ or None, params)
    else:
        _switches(spec, gpu, cfg, occ or None, params)
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
    name = slug(f"whatif-{gpu}-{_file_label(spec, cfg)}")
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


def _variants(gpu: str, cfg: LaunchConfig, occ: int | None, params: dict[str, float]) -> None:
    """Every combination of the protocol's variants at this shape, GPU and latencies: what
    each switch would save (or cost) before anyone writes it into a kernel."""
    if not st.checkbox("Every protocol variant at this shape", key="wi_variants"):
        return
    mine = simulate_cached(gpu, cfg, occ, params).timeline
    base = mine.makespan if mine is not None else None
    rows = []
    for on in itertools.product((False, True), repeat=len(VARIANTS)):
        other = dataclasses.replace(cfg, **dict(zip(VARIANTS, on, strict=True)))
        out = simulate_cached(gpu, other, occ, params)
        variants = ", ".join(other.variants()) or "none (the seed's protocol)"
        rows.append(_priced({"variants": variants}, out, base))
    st.dataframe(pd.DataFrame(rows), hide_index=True)
    st.caption("; ".join(f"{name}: {VARIANT_HELP[name]}" for name in VARIANTS) + ".")


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


def _switches(spec: Any, gpu: str, cfg: Any, occ: int | None, params: dict[str, float]) -> None:
    """Another kernel's on/off fields, every combination at this configuration: what
    each would change, as K1's variant table does for its protocol variants."""
    fields = spec.config_to_dict(cfg)
    names = [k for k, v in fields.items() if isinstance(v, bool)]
    if not names:
        st.caption(f"Every on/off flag combined: {spec.name} has no on/off field.")
        return
    if len(names) > MAX_SWITCHES:
        st.caption(
            f"Every on/off flag combined: {spec.name} has {len(names)} on/off fields, "
            f"more than {MAX_SWITCHES} ({2**MAX_SWITCHES} simulations); set them above."
        )
        return
    if not st.checkbox(f"Every combination of {', '.join(names)}", key="wi_switches"):
        return
    mine = simulate_cached(gpu, cfg, occ, params).timeline
    base = mine.makespan if mine is not None else None
    rows = []
    for on in itertools.product((False, True), repeat=len(names)):
        setting = dict(zip(names, on, strict=True))
        out = simulate_cached(gpu, spec.config_from_dict({**fields, **setting}), occ, params)
        on_ = ", ".join(k for k, v in setting.items() if v) or "none"
        rows.append(_priced({"on": on_}, out, base))
    st.dataframe(pd.DataFrame(rows), hide_index=True)


def _file_label(spec: Any, cfg: Any) -> str:
    """The configuration in a file name (K1's as it always was named)."""
    if isinstance(cfg, LaunchConfig):
        gate = "gate_local" if cfg.gate_local else "gate stage"
        return f"R{cfg.R}-L{cfg.L}-nb{cfg.nb}-kda0{cfg.kda0}-{'-'.join((gate, *cfg.variants()))}"
    return spec.label(cfg)


def _floor(gpu: str, cfg: Any, occ: int | None, params: dict[str, float]) -> None:
    """How fast this protocol could run on this GPU: the what-if's profile with its costs
    taken away a step at a time (kda_sim.checks.floor), down to the protocol's own chain."""
    if not st.checkbox("How fast this protocol could run (its floor)", key="wi_floor"):
        return
    prof = whatif_profile(gpu, params)
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


def _latency_controls(gpu: str) -> dict[str, float]:
    prof = load_profile(gpu)
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
            prof = load_profile(gpu)
            prof = prof.with_params(**params) if params else prof
        except KdaSimError as e:
            st.warning(str(e))
            return
        key = f"{gpu}|{cfg}|{occ}|{sorted(params.items())}"
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
