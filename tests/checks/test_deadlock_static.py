"""The static deadlock analysis: chains, fixes, the any-order verdict, kda0 relabelling,
and no false alarm on launches within the design envelope."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from pingpong_variants import VariantConfig

from kda_sim.checks.deadlock_static import (
    ANY_ORDER,
    IN_ORDER,
    any_order,
    check_static,
    slots_for,
    suggest_fix,
)
from kda_sim.checks.waitgraph import build_waitgraph, waitgraph_of
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.machine.residency import check_fits


def test_h200_r4_l2_deadlocks_with_a_chain_to_a_cta_that_is_not_resident(h200) -> None:
    cfg = LaunchConfig(4, 2)
    slots = slots_for(cfg, h200, None)
    v = check_static(waitgraph_of(cfg), slots)
    assert v.finishes is False and v.assumption == IN_ORDER and len(v.stuck) == 256
    f = v.findings[0]
    chain = f.details["chain"]
    assert chain[0]["cta"] == 0 and chain[0]["stage"] == "k.conv" and chain[0]["region"] == "PROJ"
    assert chain[-1]["producer"] >= slots.total  # a gemv CTA that never got a slot
    assert "not resident" in f.message and "132 slots" in f.message
    fix = suggest_fix(cfg, h200, slots, v)
    assert "2 CTAs a SM" in fix and "LDS" in fix


def test_more_occupancy_and_another_kda0_are_found_as_fixes(h200) -> None:
    # 96 slots: CTAs 0..95 all run kda tasks that wait on gemv CTAs past the slots; kda0 =
    # 96 leaves them task-free, so they finish and free their slots
    small = replace(h200, units=96)
    cfg = LaunchConfig(1, 2)
    slots = slots_for(cfg, small, 1)
    v = check_static(waitgraph_of(cfg), slots)
    assert v.finishes is False
    fix = suggest_fix(cfg, small, slots, v)
    assert "2 CTAs a SM" in fix and "kda0 = " in fix
    k = int(fix.split("kda0 = ")[1].split()[0])
    assert check_static(waitgraph_of(replace(cfg, kda0=k)), slots).finishes


def test_mi355x_finishes_for_every_order(mi355x) -> None:
    cfg = LaunchConfig(2, 2)
    v = any_order(waitgraph_of(cfg), slots_for(cfg, mi355x, None))
    assert v.finishes is True and v.assumption == ANY_ORDER and "co-resident" in v.note


def test_any_order_witness_deadlocks_the_engine_too(h200) -> None:
    cfg = LaunchConfig(1, 4)
    slots = slots_for(cfg, h200, 1)
    g = waitgraph_of(cfg)
    v = any_order(g, slots)
    assert v.finishes is False and v.order is not None
    assert simulate(cfg, h200, occupancy=1, order=v.order).deadlock


@pytest.mark.parametrize("kda0", [1, 77, 200, 255])
def test_kda0_relabelling_equals_a_fresh_build(kda0: int) -> None:
    cfg = LaunchConfig(2, 1, 4, kda0=kda0)
    fast = waitgraph_of(cfg)
    slow = build_waitgraph(build_launch(cfg))
    for a, b in zip(fast.polls, slow.polls, strict=True):
        assert [(s.stage, s.task, s.label) for s in a] == [(s.stage, s.task, s.label) for s in b]
        for x, y in zip(a, b, strict=True):
            assert _needs(x) == _needs(y)


def _needs(site) -> dict[int, int]:
    """Per producer CTA, the level the site needs of it (requirements on one CTA collapse
    to the highest)."""
    out: dict[int, int] = {}
    for d, lv in zip(site.need_cta.tolist(), site.need_level.tolist(), strict=True):
        out[d] = max(out.get(d, 0), lv)
    return out


SHAPES = [(r, lng) for r in range(1, 9) for lng in range(1, 9) if r * lng <= 8]
GPUS = {n: load_profile(n) for n in ("mi355x", "h200", "h200-stock", "mi300x")}


@st.composite
def resident_launches(draw: st.DrawFn) -> tuple[LaunchConfig, GpuProfile, int | None]:
    """Launches within the design envelope: they fit, and every CTA is co-resident."""
    prof = GPUS[draw(st.sampled_from(sorted(GPUS)))]
    r, lng = draw(st.sampled_from(SHAPES))
    cfg = LaunchConfig(
        r, lng, draw(st.sampled_from([1, 8])), draw(st.integers(0, 255)), draw(st.booleans())
    )
    try:
        check_fits(cfg, prof)
    except InvalidInput:
        cfg = replace(cfg, R=1, L=1)
    need = -(-cfg.blocks // prof.units)
    occ = draw(st.one_of(st.none(), st.integers(need, need + 2)))
    if occ is None and slots_for(cfg, prof, None).total < cfg.blocks:
        occ = need
    return cfg, prof, occ


@settings(max_examples=examples(1000))
@given(resident_launches())
def test_no_false_alarm_within_the_design_envelope(
    case: tuple[LaunchConfig, GpuProfile, int | None],
) -> None:
    cfg, prof, occ = case
    slots = slots_for(cfg, prof, occ)
    g = waitgraph_of(cfg)
    v = check_static(g, slots)
    assert v.finishes, cfg
    assert any_order(g, slots, v).finishes, cfg


def test_a_poll_nobody_puts_is_named() -> None:
    from kda_sim.kernels.k1.mutations import poll_unput_region

    case = poll_unput_region(LaunchConfig(1, 1), load_profile("mi355x"))
    assert case.launch is not None
    v = check_static(build_waitgraph(case.launch), slots_for(case.cfg, case.prof, None))
    assert v.finishes is False
    assert "no CTA of this launch puts WGT[" in v.findings[0].message
    assert np.all([lk["region"] == "WGT" for lk in v.findings[0].details["chain"]])


# -- any kernel: the pingpong example ----------------------------------------------------------
def test_a_kernel_without_task_rotation_gets_its_own_structure_and_an_occupancy_fix(h200) -> None:
    cfg = VariantConfig(rounds=2)
    g = waitgraph_of(cfg)
    assert g.blocks == 2 and g.shift == 0 and list(g.n_polls()) == [0, 2]
    assert waitgraph_of(cfg) is g  # cached like K1's
    one = replace(h200, units=1, xcds=1, name="one-sm")
    slots = slots_for(cfg, one, 1)
    assert check_static(g, slots).finishes  # the producer is dispatched first
    v = check_static(g, slots, (1, 0))  # the consumer first: it spins on the only slot
    assert not v.finishes and "CTA 1 waits in consume on VAL[0]" in v.findings[0].message
    fix = suggest_fix(cfg, one, slots, v)
    assert fix.startswith("more occupancy: 2 CTAs a SM") and "another" not in fix
