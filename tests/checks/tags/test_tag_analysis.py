"""The tag analysis: against an exhaustive search on scaled-down schemes, on the real
scheme's scenarios, and without false alarms on safe setups."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.checks.findings import Category
from kda_sim.checks.tags.analysis import Kind, Policy, analyse
from kda_sim.checks.tags.brute import exhaustive
from kda_sim.checks.tags.footprint import StepModel
from kda_sim.checks.tags.schemes import FrozenEpoch, SlotOnly, StepTag, TagScheme
from kda_sim.kernels.k1.footprint import k1_step_model
from kda_sim.kernels.k1.tags import STEP_TAG


@st.composite
def small_schemes(draw: st.DrawFn) -> TagScheme:
    bits = draw(st.integers(3, 4))
    kind = draw(st.sampled_from(["step", "step", "step", "frozen", "slot"]))
    base = StepTag(
        bits,
        draw(st.one_of(st.none(), st.integers(1, bits - 1))),
        draw(st.integers(1, 4)),
        slot_term=draw(st.booleans()) or kind != "step",
    )
    if kind == "frozen":
        return FrozenEpoch(base, draw(st.integers(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)))
    if kind == "slot":
        return SlotOnly(bits, slot_term=draw(st.booleans()))
    return base


@st.composite
def small_models(draw: st.DrawFn) -> StepModel:
    k, n, c = draw(st.integers(1, 3)), draw(st.integers(1, 3)), draw(st.integers(1, 3))
    cells = st.lists(st.booleans(), min_size=k * n * c, max_size=k * n * c)
    w = np.array(draw(cells)).reshape(k, n, c)
    p = np.array(draw(cells)).reshape(k, n, c)
    return StepModel(
        tuple(f"s{i}" for i in range(k)), (0,) * n, w, p, np.ones(c, int), np.arange(c)
    )


@settings(max_examples=examples(400))
@given(small_models(), small_schemes(), st.sampled_from(list(Policy)), st.integers(-8, 7))
def test_analysis_agrees_with_exhaustive_search(
    model: StepModel, scheme: TagScheme, policy: Policy, epoch0: int
) -> None:
    epoch0 = max(-(1 << (scheme.bits - 1)), min(epoch0, (1 << (scheme.bits - 1)) - 1))
    v = analyse(model, scheme, policy, epoch0=epoch0, horizon=1 << 62)
    stale = any(f.fails and f.category is Category.STALE for f in v.findings)
    b = exhaustive(model, scheme, policy, epoch0=epoch0)
    assert stale == b.stale, (v.findings, b)


def test_never_zeroed_fails_after_2_to_the_22_steps_of_a_smaller_shape() -> None:
    m = k1_step_model(((8, 1), (1, 1)), (1, 1, 2, 8))
    v = analyse(m, STEP_TAG, Policy.NEVER_ZEROED)
    assert not v.safe
    sc = v.shortest
    assert sc is not None and sc.kind is Kind.ACROSS
    assert sc.gap == 1 << 22 and sc.between_shape == "1x1" and sc.writer_slot == sc.reader_slot == 3
    assert sc.pair.startswith("PART[") and "CTA" in sc.reader and "gate" in sc.reader
    msg = v.findings[0].message + v.findings[0].fix
    for needle in ("slot 3", "8x1", "epoch", "tag", "PART[", "zeroed-per-step", "wider tag"):
        assert needle in msg


def test_zeroing_every_step_makes_the_same_run_safe() -> None:
    m = k1_step_model(((8, 1), (1, 1)), (1, 1, 2, 8))
    assert analyse(m, STEP_TAG, Policy.ZEROED).safe


def test_slot_255_reads_a_zeroed_pair_with_tag_0() -> None:
    m = k1_step_model(((2, 2),), (1,) * 255 + (8,))
    v = analyse(m, STEP_TAG, Policy.ZEROED)
    sc = v.shortest
    assert sc is not None and sc.kind is Kind.CLEARED and sc.reader_slot == 255
    assert sc.reader_epoch == -1 and sc.tag == 0 and 0 < sc.epoch_fraction < 1e-6


def test_a_single_slot_never_zeroed_is_unsafe_and_one_nb_for_many_slots_is_safe() -> None:
    shapes = ((4, 1), (1, 1))
    assert not analyse(k1_step_model(shapes, (8,)), STEP_TAG, Policy.NEVER_ZEROED).safe
    assert analyse(k1_step_model(shapes, (8,) * 4), STEP_TAG, Policy.NEVER_ZEROED).safe


shape_st = st.sampled_from([(1, 1), (2, 1), (8, 1), (2, 2), (1, 4), (4, 2), (3, 3), (16, 1)])


@settings(max_examples=examples(1000))
@given(
    st.lists(shape_st, min_size=1, max_size=4, unique=True),
    st.lists(st.integers(1, 8), min_size=1, max_size=12),
    st.integers(2, 255),
    st.booleans(),
)
def test_no_false_alarm_on_safe_setups(
    shapes: list[tuple[int, int]], nbs: list[int], slots: int, zeroed: bool
) -> None:
    # safe by construction: zeroed with fewer than 255 slots (no tag is 0, no tag repeats
    # within a step), or never zeroed with one nb for every slot (a pair's last writer, the
    # step's last slot, never has the tag of its next reader, the first)
    if zeroed:
        model = k1_step_model(tuple(shapes), tuple(nbs))
        v = analyse(model, STEP_TAG, Policy.ZEROED)
    else:
        model = k1_step_model(tuple(shapes), (nbs[0],) * slots)
        v = analyse(model, STEP_TAG, Policy.NEVER_ZEROED)
    assert v.safe, v.findings


@settings(max_examples=examples(200))
@given(small_models(), small_schemes(), st.sampled_from(list(Policy)), st.integers(-8, 7))
def test_an_epoch_frozen_at_any_value_is_stale_where_some_value_is(
    model: StepModel, scheme: TagScheme, policy: Policy, epoch0: int
) -> None:
    base = scheme.base if isinstance(scheme, FrozenEpoch) else scheme
    if isinstance(base, SlotOnly):
        return  # no epoch to freeze (make_scheme refuses it)
    fz = FrozenEpoch(base)
    v = analyse(model, fz, policy, epoch0=epoch0, horizon=1 << 62)
    stale = any(f.fails and f.category is Category.STALE for f in v.findings)
    # the exhaustive search from each epoch the run can be frozen at
    want = any(exhaustive(model, FrozenEpoch(base, e), policy).stale for e in base.epochs())
    assert stale == want, v.findings
    assert "every epoch it can be frozen at" in v.epochs


def test_a_frozen_epoch_is_analysed_at_the_epoch_given() -> None:
    # zeroed per step, tag_slots 1: slot 0's tag is the cleared value at epoch -1 only
    m = k1_step_model(((2, 2),), (8,))
    base = replace(STEP_TAG, tag_slots=1)
    assert analyse(m, FrozenEpoch(base, 0), Policy.ZEROED).safe
    v = analyse(m, FrozenEpoch(base, -1), Policy.ZEROED)
    assert not v.safe and v.shortest is not None and v.shortest.kind is Kind.CLEARED
    assert v.shortest.reader_epoch == -1 and "epoch -1 only" in v.epochs
    anyv = analyse(m, FrozenEpoch(base), Policy.ZEROED)
    assert not anyv.safe and anyv.shortest is not None and anyv.shortest.reader_epoch == -1
