"""The mutation catalogue: every mutant caught, with its category, over random shapes."""

from __future__ import annotations

import pytest
from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.checks.dataflow import check_dataflow
from kda_sim.checks.dataflow.faults import FaultKind, sites
from kda_sim.checks.findings import ADVICE_ONLY, WORDS_ONLY, Category
from kda_sim.checks.mutations import caught_text, check_mutant, generic_fault, sites_text
from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.splitk import SplitKConfig
from kda_sim.kernels.examples.ticketqueue import TicketQueueConfig
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.mutations import BY_NAME, CATALOGUE
from kda_sim.kernels.registry import spec_for
from kda_sim.machine.profile import load_profile

GPUS = {n: load_profile(n) for n in ("mi355x", "h200")}
SHAPES = [(1, 1), (2, 1), (1, 2), (2, 2), (3, 1), (1, 3), (4, 1)]


def test_the_catalogue_has_at_least_12_named_faults_in_every_category() -> None:
    names = [m.name for m in CATALOGUE]
    assert len(names) >= 12 and len(set(names)) == len(names)
    # every property a fault can break (advice, such as late loads, never fails; K1 has
    # no counter words)
    assert {m.category for m in CATALOGUE} == set(Category) - ADVICE_ONLY - WORDS_ONLY


TAGS = [m for m in CATALOGUE if m.category in (Category.STALE, Category.OVERFLOW)]
LAUNCH = [m for m in CATALOGUE if m not in TAGS]


def _caught(mutation, shape, nb, gpu) -> None:
    cfg = LaunchConfig(shape[0], shape[1], nb)
    found = check_mutant(mutation, cfg, GPUS[gpu])
    cats = {f.category for f in found if f.fails}
    assert mutation.category in cats, (mutation.name, [f.message for f in found])
    f = next(f for f in found if f.fails and f.category is mutation.category)
    # it says where: a region and index (REGION[i]) and, for tags, the slot and epoch
    assert "[" in f.message
    if mutation in TAGS:
        assert "slot" in f.message and "epoch" in f.message
    else:
        assert "CTA" in f.message


@pytest.mark.parametrize("mutation", LAUNCH, ids=lambda m: m.name)
@settings(max_examples=examples(3))
@given(
    shape=st.sampled_from(SHAPES),
    nb=st.sampled_from([1, 4, 8]),
    gpu=st.sampled_from(sorted(GPUS)),
)
def test_every_launch_mutant_is_caught_with_its_category(mutation, shape, nb, gpu) -> None:
    _caught(mutation, shape, nb, gpu)


@pytest.mark.parametrize("mutation", TAGS, ids=lambda m: m.name)
@settings(max_examples=examples(40))
@given(
    shape=st.sampled_from(
        [(r, lng) for r in range(1, 17) for lng in range(1, 17) if r * lng <= 16]
    ),
    nb=st.integers(1, 8),
    gpu=st.sampled_from(sorted(GPUS)),
)
def test_every_tag_mutant_is_caught_with_its_category(mutation, shape, nb, gpu) -> None:
    _caught(mutation, shape, nb, gpu)


# -- generic faults at a site, of any kernel ---------------------------------------------------
DATAFLOW = {
    "poll-drops-a-cell": FaultKind.DROP_POLL_CELL,
    "put-into-next-region": FaultKind.NEXT_REGION,
    "item-on-two-ctas": FaultKind.DUPLICATE_ITEM,
    "put-before-poll": FaultKind.PUT_BEFORE_POLL,
    "permuted-put": FaultKind.PERMUTE,
}


@pytest.mark.parametrize("name", sorted(DATAFLOW))
@pytest.mark.parametrize("shape", [(1, 1), (2, 3)], ids=str)
def test_k1s_data_flow_mutants_are_the_generic_injectors_at_fixed_sites(name, shape) -> None:
    m = next(m for m in CATALOGUE if m.name == name)
    case = m.apply(LaunchConfig(*shape), GPUS["h200"])
    assert case.fault is not None and case.fault.kind is DATAFLOW[name]
    found = check_dataflow(case.launch, case.cfg).findings
    caught, text = caught_text(case.fault, found)
    assert caught, (name, text, [f.text() for f in found])


KERNELS = {
    "pingpong": PingPongConfig(rounds=3),
    "gridbarrier": GridBarrierConfig(ctas=4),
    "ticketqueue": TicketQueueConfig(ctas=3, items=5),
    "splitk": SplitKConfig(tiles=2, splits=2),
    "k1": LaunchConfig(1, 1),
}


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_every_generic_fault_at_its_first_site_is_caught_naming_the_culprit(kernel) -> None:
    cfg = KERNELS[kernel]
    launch = spec_for(cfg).build(cfg)
    applied = 0
    for kind in FaultKind:
        if not sites(kind, launch):
            with pytest.raises(InvalidInput, match="applies nowhere"):
                generic_fault(kind, launch, "", str(kind))
            continue
        site, fault = generic_fault(kind, launch, "", str(kind))
        assert fault.cta == site.cta or kind is FaultKind.PERMUTE
        caught, text = caught_text(fault, check_dataflow(fault.launch, cfg).findings)
        assert caught, (kind, text)
        applied += 1
    assert applied >= 1


def test_a_site_picks_the_cta_stage_and_nth() -> None:
    cfg = KERNELS["k1"]
    launch = spec_for(cfg).build(cfg)
    site, fault = generic_fault(FaultKind.NO_DRAIN, launch, "3/mix", "no-drain@3/mix")
    assert (site.cta, site.stage, fault.cta) == (3, "mix", 3)
    all3 = [s for s in sites(FaultKind.DROP_POLL_CELL, launch) if s.cta == 3]
    second, _ = generic_fault(FaultKind.DROP_POLL_CELL, launch, "3#1", "x")
    assert second == all3[1]
    with pytest.raises(InvalidInput, match=r"no site @3/gate in this launch \(its sites: CTA"):
        generic_fault(FaultKind.NO_DRAIN, launch, "3/gate", "no-drain@3/gate")
    with pytest.raises(InvalidInput, match="a site is CTA, CTA/STAGE or CTA/STAGE#N"):
        generic_fault(FaultKind.NO_DRAIN, launch, "three", "no-drain@three")


def test_the_list_names_every_injector_its_sites_and_the_catalogue() -> None:
    cfg = KERNELS["gridbarrier"]
    text = sites_text(spec_for(cfg).build(cfg), {})
    assert all(f"  {k}: " in text for k in FaultKind)
    assert "early-clear: a CTA clears a word another unit may still wait on\n" in text
    assert "CTA 0-3: barrier (4 sites)" in text
    k1 = sites_text(spec_for(LaunchConfig(1, 1)).build(LaunchConfig(1, 1)), dict(BY_NAME))
    assert "the kernel's catalogue" in k1 and "poll-drops-a-cell" in k1
