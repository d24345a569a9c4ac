"""Tags: can a poll of the open run's kernel pass on a pair its own launch did not write,
over a sequence of steps of the user's shapes? The inputs of ``kda-sim check --tags``,
the tag each launch slot writes, each class of pairs with the launch that last wrote it,
and the stale-pass scenarios, the shortest drawn as launches in a row."""

from __future__ import annotations

from typing import Any

import streamlit as st

from kda_sim.app.tag_tables import (
    SHAPES,
    TagInputs,
    pair_classes,
    parse_nb,
    run_check,
    scenario_figure,
    scenario_table,
    scheme_defaults,
    slot_tags,
)
from kda_sim.app.views.common import Ctx, show_chart
from kda_sim.checks.tags.analysis import Policy
from kda_sim.checks.tags.footprint import Layout
from kda_sim.errors import KdaSimError
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import hook

FAULTS = {
    "frozen-epoch": "the epoch never advances (a value captured at graph capture)",
    "drop-slot": "tags without the slot term",
}


def render(ctx: Ctx) -> None:
    m = ctx.run.main.meta
    try:
        spec = get(m.kernel)
    except KdaSimError as e:
        st.info(f"Tag checks are not available: the run's kernel {m.kernel!r} is unknown ({e}).")
        return
    tm = hook(spec, "tag_model")
    if tm is None:
        st.info(
            f"Tag checks are not available for the kernel {spec.name!r}: it declares no "
            f"tag check (the kernel's `tag_model` hook: its tag and the pairs each launch "
            f"writes and polls)."
        )
        return
    cfg = m.config()
    shape = "x".join(map(str, tm.shape_of(cfg)))
    # the run's gate variant moves K1's gate polls; the rest of a launch: the defaults
    fields = {"gate_local": cfg.gate_local} if hasattr(cfg, "gate_local") else {}
    inp = _inputs(spec.name, tuple(tm.schemes), shape, tm.nb_of(cfg), fields)
    if inp is None:
        return
    try:
        model, scheme, v = run_check(inp)
    except KdaSimError as e:
        st.error(f"Cannot check these inputs: {e}")
        return
    head = (
        f"{scheme.formula()}; {inp.policy.value}; steps of shape {', '.join(v.shapes)} in "
        f"any order; {len(v.nb)} launch slots (nb {', '.join(map(str, v.nb))})"
    )
    if v.safe:
        st.success(f"SAFE: no poll can pass on a pair its own launch did not write. {head}")
    else:
        st.error(f"UNSAFE: a poll can pass on a stale pair. {head}")
    for f in v.findings:
        (st.warning if f.fails else st.caption)(f.message + (f"\n\nFix: {f.fix}" if f.fix else ""))
    if v.shortest is not None:
        st.subheader("The shortest scenario")
        show_chart(scenario_figure(v.shortest, v.nb, model.slots), "tags_scenario")
        st.caption(f"{len(v.scenarios)} scenarios in all, shortest first:")
        st.dataframe(scenario_table(v, scheme.bits), hide_index=True, width="stretch")
    st.subheader("Tags each launch writes")
    st.caption(f"Every region of a launch carries the launch's tag: {scheme.formula()}.")
    epoch0 = 0 if inp.epoch0 is None else inp.epoch0
    st.dataframe(slot_tags(model, scheme, epoch0), hide_index=True, width="stretch")
    st.subheader("Pairs and their last writer")
    st.caption(
        "A row a class of pairs every launch treats alike: the slot of each step shape "
        "that writes it last, the slots that poll it, and what each poll finds before its "
        "own launch writes it."
    )
    st.dataframe(pair_classes(model, inp.policy), hide_index=True, width="stretch")


def _inputs(
    kernel: str, schemes: tuple[str, ...], shape: str, nb: int, fields: dict[str, Any]
) -> TagInputs | None:
    d = scheme_defaults(kernel)
    a, b, c = st.columns([4, 3, 3])
    shapes = a.multiselect(
        "Step shapes (R x L)",
        SHAPES,
        default=[shape] if shape in SHAPES else [],
        key="tags_shapes",
        help="the shapes a sequence of steps may take, in any order (the open run's first)",
    )
    nb_text = b.text_input(
        "nb of each launch slot",
        value=str(nb),
        key="tags_nb",
        help="comma-separated, a launch slot of a step each, e.g. 1,1,2,8",
    )
    policy = c.radio(
        "Scratch between steps",
        [p.value for p in Policy],
        key="tags_policy",
        help="never-zeroed: a pair keeps what the last launch wrote; zeroed-per-step: "
        "cleared to 0 before each step",
    )
    e, f, g, h = st.columns(4)
    scheme = e.selectbox(
        "Tag scheme", schemes, key="tags_scheme", help="how a launch's tag is made"
    )
    tag_slots = f.number_input(
        "Tag slots",
        min_value=1,
        value=d.tag_slots,
        key="tags_tag_slots",
        help="launch slots a step in the tag: epoch * slots + slot + 1",
    )
    epoch_bits = g.number_input(
        "Epoch bits",
        min_value=1,
        max_value=d.bits - 1,
        value=d.epoch_bits or d.bits - 1,
        key="tags_epoch_bits",
        help="bits of the step counter the tag keeps (epoch % 2^bits)",
    )
    layout = h.radio(
        "Scratch layout",
        [x.value for x in Layout],
        key="tags_layout",
        help="fixed: each region at the same address for every shape; packed: regions "
        "packed to each launch's extents",
    )
    faults = st.multiselect(
        "Faults to inject",
        list(FAULTS),
        key="tags_faults",
        format_func=lambda x: f"{x}: {FAULTS[x]}",
        help="a bug to try: the check should then find a stale pass",
    )
    try:
        nbs = parse_nb(nb_text)
    except KdaSimError as err:
        st.error(f"nb of each launch slot: {err}")
        return None
    return TagInputs(
        tuple(shapes),
        nbs,
        Policy(policy),
        scheme,
        int(tag_slots),
        int(epoch_bits),
        tuple(faults),
        Layout(layout),
        kernel=kernel,
        config=fields,
    )
