"""The mutation catalogue: every mutant caught, with its category, over random shapes."""

from __future__ import annotations

import pytest
from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.checks.findings import ADVICE_ONLY, WORDS_ONLY, Category
from kda_sim.checks.mutations import check_mutant
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.mutations import CATALOGUE
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
