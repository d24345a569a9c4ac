"""The static data-flow checks against the engine's stale-read record, on K1's mutation
catalogue and on the property's injected faults: every stale read the engine records is
explained by a static finding (static clean but dynamic stale fails); a static fault the
engine does not show is timing, reported and allowed (:mod:`kda_sim.checks.dataflow.agreement`)."""

from __future__ import annotations

import random
from typing import Any

import pytest
from pingpong_variants import VariantConfig

from kda_sim.checks.dataflow import check_dataflow
from kda_sim.checks.dataflow.agreement import agree
from kda_sim.checks.dataflow.faults import FaultKind, inject
from kda_sim.checks.findings import Category
from kda_sim.checks.visibility import check_visibility
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.mutations import CATALOGUE
from kda_sim.kernels.registry import spec_for
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.protocol.program import Launch

MI355X = load_profile("mi355x")
LAUNCH_MUTANTS = [m for m in CATALOGUE if m.category not in (Category.STALE, Category.OVERFLOW)]


def _both(cfg: Any, prof: GpuProfile, launch: Launch, occupancy: int | None = None):
    static = check_dataflow(launch, cfg).findings
    dyn = check_visibility(cfg, prof, occupancy=occupancy, launch=launch, seeds=(1,))
    return static, dyn, agree(launch, static, dyn.stale)


@pytest.mark.parametrize("mutation", LAUNCH_MUTANTS, ids=lambda m: m.name)
def test_k1_catalogue_static_explains_every_stale_read(mutation) -> None:
    case = mutation.apply(LaunchConfig(1, 1), MI355X)
    launch = case.launch or spec_for(case.cfg).build(case.cfg)
    static, dyn, a = _both(case.cfg, case.prof, launch, case.occupancy)
    assert a.ok, (mutation.name, a.unexplained[:3], [f.text() for f in static])
    if mutation.name in ("publish-without-drain", "store-after-publish"):
        # the faults the adversarial store model is built to show: both see them
        assert dyn.stale and not a.unconfirmed


# the injected faults that keep every cell inside the launch (the engine indexes by cell)
ENGINE_FAULTS = sorted(set(FaultKind) - {FaultKind.NEXT_REGION})
PROPERTY_CASES = [
    (cfg, kind, seed)
    for cfg in (VariantConfig(rounds=2, flagged=True), LaunchConfig(1, 1))
    for kind in ENGINE_FAULTS
    for seed in (0, 1)
    if inject(kind, spec_for(cfg).build(cfg), random.Random(seed)) is not None
]


@pytest.mark.parametrize(
    ("cfg", "kind", "seed"),
    PROPERTY_CASES,
    ids=lambda v: type(v).__name__ if not isinstance(v, (FaultKind, int)) else str(v),
)
def test_injected_faults_static_explains_every_stale_read(cfg, kind, seed) -> None:
    fault = inject(kind, spec_for(cfg).build(cfg), random.Random(seed))
    assert fault is not None
    static, dyn, a = _both(cfg, MI355X, fault.launch)
    assert a.ok, (kind, a.unexplained[:3], [f.text() for f in static])
    if kind is FaultKind.NO_DRAIN and isinstance(cfg, VariantConfig):
        assert dyn.stale and not a.unconfirmed  # one hand-off: every run shows it


def test_a_static_model_blind_to_a_stale_read_is_a_failure() -> None:
    """The hard direction can fail: the engine's stale reads of a no-drain pingpong,
    held against static findings that say nothing about them."""
    cfg = VariantConfig(flagged=True, drain=False)
    launch = spec_for(cfg).build(cfg)
    static, dyn, a = _both(cfg, MI355X, launch)
    assert dyn.stale and a.ok and {f.category for f in static} == {Category.VISIBILITY}
    blind = agree(launch, [], dyn.stale)
    assert not blind.ok and blind.unexplained == dyn.stale


def test_a_static_fault_no_run_shows_is_reported_not_failed() -> None:
    """K1's gemv CTA reading x slice 1 without polling its XRDY: the static checks prove
    it; at 1 x 1 the other slices' polls keep the read late enough in every run."""
    mutation = next(m for m in CATALOGUE if m.name == "poll-drops-a-cell")
    case = mutation.apply(LaunchConfig(1, 1), MI355X)
    assert case.launch is not None
    _, dyn, a = _both(case.cfg, case.prof, case.launch)
    assert a.ok and not dyn.stale
    assert [f.category for f in a.unconfirmed] == [Category.COVERAGE]
