"""The engine's fast path equals the engine it replaced, record for record: K1 at several
shapes, variants and GPUs, nominal and jittered, a deadlock, a stale-read mutant, a host
sequence's tagged launch, and every example kernel. The reference is the old engine kept
beside the tests (``engine_reference.py``), run through the same ``simulate`` with its
classes swapped in; results are compared whole (dataclass equality, floats exact).

The engine folds events (``simulate``'s ``fold_events``): fewer events, in another order
among the ties of one instant, so a folded run must give the reference's results (the
timeline, stale reads, stuck report, HBM bytes, what memory holds after) with no more
events; the engine unfolded must give the reference's SimPy events too, one for one."""

from __future__ import annotations

import dataclasses
import importlib
import statistics as st
from typing import Any

import pytest
from engine_reference import ReferenceBandwidth, ReferenceCtaRun, ReferenceWorld

from kda_sim.engine import simulate
from kda_sim.engine.initial import Initial
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import BUILTIN, DEFAULT_KERNEL, get
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Poll
from kda_sim.protocol.program import Launch

# the module, not the function kda_sim.engine exports under the same name
sim_module = importlib.import_module("kda_sim.engine.simulate")
EXAMPLES = sorted(n for n in BUILTIN if n != DEFAULT_KERNEL)
# the launches a put's wait behind its CTA's stores is checked on: a large one, a jittered
# one, a ticket loop
PUT_BEHIND = [
    (LaunchConfig(4, 4), None),
    (LaunchConfig(1, 4), 7),
    (LaunchConfig(2, 2, kda_tickets=True), None),
]


def _case_id(v: object) -> str:
    """A case's id: a launch configuration by its label, anything else as it prints."""
    return v.label() if isinstance(v, LaunchConfig) else str(v)


def _launches(names: tuple[str, ...], cases: list[tuple[Any, ...]]) -> pytest.MarkDecorator:
    """``pytest.mark.parametrize`` over launch cases, each named by ``_case_id``."""
    return pytest.mark.parametrize(names, cases, ids=_case_id)


def _both(
    monkeypatch: pytest.MonkeyPatch, cfg: Any, gpu: str | GpuProfile, **kw: Any
) -> tuple[Any, Any]:
    """The engine's result (folded) and the reference's; the engine unfolded is checked
    against the reference here, event for event."""
    prof = load_profile(gpu) if isinstance(gpu, str) else gpu
    fast = simulate(cfg, prof, **kw)
    unfolded = simulate(cfg, prof, fold_events=False, **kw)
    with monkeypatch.context() as m:
        m.setattr(sim_module, "CtaRun", ReferenceCtaRun)
        m.setattr(sim_module, "SharedBandwidth", ReferenceBandwidth)
        m.setattr(sim_module, "World", ReferenceWorld)
        ref = simulate(cfg, prof, fold_events=False, **kw)  # dispatch unfolded too
    _assert_same(unfolded, ref)
    assert unfolded.events == ref.events  # the same SimPy events, so the same ties too
    return fast, ref


def _assert_same(fast: Any, ref: Any) -> None:
    assert fast.timeline.meta == ref.timeline.meta
    for a, b in zip(fast.timeline.ctas, ref.timeline.ctas, strict=True):
        assert a == b, f"CTA {a.cta} differs"
    assert fast.timeline.stuck == ref.timeline.stuck
    assert fast.stale_reads == ref.stale_reads
    assert fast.hbm_bytes == ref.hbm_bytes
    assert fast.final == ref.final
    assert fast.events <= ref.events


def _priced_alike(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, seed: int | None, **params: float
) -> None:
    """``h200-k1`` with ``params`` (optional latencies the bundled profiles leave at 0) runs
    alike in both engines, and differently from ``h200-k1`` alone (the terms took effect)."""
    base = load_profile("h200-k1")
    fast, ref = _both(monkeypatch, cfg, base.with_params(**params), seed=seed)
    plain = simulate(cfg, base, seed=seed)
    assert plain.timeline.ctas != fast.timeline.ctas  # the terms took effect
    _assert_same(fast, ref)


@_launches(
    ("cfg", "gpu", "seed"),
    [
        (LaunchConfig(4, 2), "mi355x", None),
        (LaunchConfig(4, 2), "mi355x", 3),
        (LaunchConfig(1, 1), "h200", None),
        (LaunchConfig(2, 1), "mi300x", 11),
        (LaunchConfig(2, 3), "h200", 5),
        (LaunchConfig(2, 2, nw_first=True, onw_first=True), "mi355x", None),
        (LaunchConfig(2, 2, kda_tickets=True), "mi355x", 2),
        (LaunchConfig(2, 2, gemv_tickets=True), "h200", None),
        (LaunchConfig(2, 2, gate_local=True, nb=4), "mi355x", None),
    ],
)
def test_k1_launches_equal_the_reference(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, gpu: str, seed: int | None
) -> None:
    fast, ref = _both(monkeypatch, cfg, gpu, seed=seed)
    assert fast.timeline.makespan is not None  # a launch that ran, not a trivial equality
    _assert_same(fast, ref)
    assert fast.events < ref.events  # the folding took effect


def test_a_deadlock_and_a_dispatch_order_equal_the_reference(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    fast, ref = _both(monkeypatch, LaunchConfig(4, 2), "h200", occupancy=1)
    assert fast.deadlock
    _assert_same(fast, ref)
    order = list(reversed(range(len(handoffs_of(LaunchConfig(1, 1)).launch.programs))))
    _assert_same(*_both(monkeypatch, LaunchConfig(1, 1), "mi355x", order=order))


@pytest.mark.parametrize(("seed", "skew"), [(None, 0.0), (9, 0.0), (None, 0.4), (9, 0.4)])
def test_streamed_weights_and_shared_units_equal_the_reference(
    monkeypatch: pytest.MonkeyPatch, seed: int | None, skew: float
) -> None:
    """The profile knobs the stock profiles leave off: weights streamed at their Use, and
    gemv CTAs on one unit slowing each other (two CTAs a unit), alike or the later more."""
    prof = dataclasses.replace(
        load_profile("h200-k1"),
        streamed_weights=True,
        unit_shared=("gemv",),
        unit_share=0.5,
        unit_share_skew=skew,
    )
    cfg = LaunchConfig(1, 1, 8)  # as test_unit_share: gemv CTAs side by side on a unit
    fast, ref = _both(monkeypatch, cfg, prof, seed=seed, occupancy=2)
    plain = simulate(cfg, dataclasses.replace(prof, unit_share_skew=0.0), seed=seed, occupancy=2)
    unshared = simulate(cfg, dataclasses.replace(prof, unit_share=0.0), seed=seed, occupancy=2)
    assert unshared.timeline.ctas != fast.timeline.ctas  # the sharing took effect
    assert (plain.timeline.ctas != fast.timeline.ctas) == bool(skew)  # and the skew
    _assert_same(fast, ref)


@_launches(
    ("cfg", "seed"),
    [
        (LaunchConfig(2, 2), None),
        (LaunchConfig(1, 4), 7),
        (LaunchConfig(2, 2, kda_tickets=True), None),
    ],
)
def test_a_first_try_behind_the_ctas_traffic_equals_the_reference(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, seed: int | None
) -> None:
    """A poll's first try waits behind the CTA's own stores and unused loads (the
    profile's first_try_*, which the bundled profiles leave at 0): counted in program
    order, so folded and unfolded alike."""
    _priced_alike(
        monkeypatch,
        cfg,
        seed,
        first_try_stores=80.0,
        first_try_store_kib=10.6,
        first_try_load_kib=4.8,
    )


@_launches(
    ("cfg", "seed", "first_try"),
    [(*case, first) for case, first in zip(PUT_BEHIND, (False, True, True), strict=True)],
)
def test_a_put_behind_the_ctas_stores_equals_the_reference(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, seed: int | None, first_try: bool
) -> None:
    """A put's pairs are visible behind the CTA's own stores ahead of them (the profile's
    put_*, which the bundled profiles leave at 0), alone or with the first try's wait:
    counted in program order, so folded and unfolded alike."""
    first = {"first_try_stores": 88.0, "first_try_store_kib": 9.9, "first_try_load_kib": 4.0}
    _priced_alike(
        monkeypatch, cfg, seed, put_stores=88.0, put_store_kib=9.9, **(first if first_try else {})
    )


@_launches(("cfg", "seed"), [(LaunchConfig(4, 4), None), (LaunchConfig(1, 1), 7)])
def test_priced_polls_equal_the_reference(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, seed: int | None
) -> None:
    """A try's pairs a thread and a retry's back-off (the profile's poll_lane and
    backoff, which the bundled profiles leave at 0), folded and unfolded alike."""
    _priced_alike(monkeypatch, cfg, seed, poll_lane=25.0, backoff=300.0)


@_launches(("cfg", "seed"), PUT_BEHIND)
def test_a_crowded_landing_equals_the_reference(
    monkeypatch: pytest.MonkeyPatch, cfg: LaunchConfig, seed: int | None
) -> None:
    """A put's wait behind its CTA's stores grows with the other polls waiting on it (the
    profile's put_crowd, which the bundled profiles leave at 0), folded and unfolded alike."""
    _priced_alike(monkeypatch, cfg, seed, put_stores=88.0, put_store_kib=9.9, put_crowd=0.3)


def _norm_handoffs(cfg: LaunchConfig, p: GpuProfile) -> list[float]:
    """Put to seen of the k.norm polls that waited on a put made after their first try."""
    tl = simulate(cfg, p).timeline
    return [
        q.satisfied - q.put_time
        for c in tl.ctas
        for q in c.polls
        if q.label == "ONRM+PROJ" and q.put_time is not None and q.put_time > q.first_issue
    ]


def test_only_a_crowded_put_behind_stores_lands_later() -> None:
    """k.norm's 8 chunk tasks of a head poll the same ONRM flags (1 pair a thread), each
    put behind its task's state: with put_crowd set those puts land later for the polls
    waiting on them; without a wait behind stores there is nothing to stretch."""
    base = load_profile("h200-k1")
    one = LaunchConfig(1, 1)
    alone = base.with_params(put_crowd=0.3)
    assert simulate(one, alone).timeline.ctas == simulate(one, base).timeline.ctas
    behind = base.with_params(put_stores=88.0, put_store_kib=9.9)
    crowded = behind.with_params(put_crowd=0.3)
    for cfg in (one, LaunchConfig(2, 2)):
        late, early = _norm_handoffs(cfg, crowded), _norm_handoffs(cfg, behind)
        assert len(late) == len(early) > 0
        assert st.median(late) > st.median(early)
        assert min(late) >= min(early)


def test_items_sharing_a_unit_equal_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """CTAs in a ticket loop compute their items' stages: a unit shared by two of them
    slows k.recur alike in both engines."""
    prof = dataclasses.replace(load_profile("h200-k1"), unit_shared=("k.recur",), unit_share=0.5)
    cfg = LaunchConfig(2, 2, 8, kda_tickets=True)
    fast, ref = _both(monkeypatch, cfg, prof, occupancy=2)
    plain = simulate(cfg, dataclasses.replace(prof, unit_share=0.0), occupancy=2)
    assert plain.timeline.ctas != fast.timeline.ctas  # the sharing took effect
    _assert_same(fast, ref)


def test_stale_reads_equal_the_reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """A mutant with every poll of the gemv CTAs dropped reads x rows before they land."""
    cfg = LaunchConfig(1, 1)
    base = handoffs_of(cfg).launch
    programs = tuple(
        dataclasses.replace(p, ops=tuple(op for op in p.ops if not isinstance(op, Poll)))
        if str(p.role) == "gemv"
        else p
        for p in base.programs
    )
    fast, ref = _both(monkeypatch, cfg, "mi355x", launch=Launch(cfg, base.space, programs))
    assert fast.stale_reads
    _assert_same(fast, ref)


@pytest.mark.parametrize("name", EXAMPLES)
@pytest.mark.parametrize("seed", [None, 5])
def test_example_kernels_equal_the_reference(
    monkeypatch: pytest.MonkeyPatch, name: str, seed: int | None
) -> None:
    cfg = get(name).default_config()
    fast, ref = _both(monkeypatch, cfg, "h200", seed=seed)
    _assert_same(fast, ref)
    tagged = Initial(tagged=frozenset({0}), words={0: 1})  # a host sequence's later launch
    _assert_same(*_both(monkeypatch, cfg, "mi355x", seed=seed, initial=tagged))
