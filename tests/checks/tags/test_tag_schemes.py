"""The schemes' analytic answers against brute force over every epoch of small schemes,
and the facts of the real step_tag."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest
from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.checks.tags.device import in_range, wrap
from kda_sim.checks.tags.schemes import (
    NOT_APPLICABLE,
    SCHEMES,
    FrozenEpoch,
    SlotOnly,
    StepTag,
    check_slot_count,
    counter64,
    make_scheme,
)
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.tags import STEP_TAG

# the shipped tag's widths (K1's), for the schemes made by name
SHIPPED = {
    "tag_slots": STEP_TAG.tag_slots,
    "epoch_bits": STEP_TAG.epoch_bits,
    "bits": STEP_TAG.bits,
}


@st.composite
def small_step_tags(draw: st.DrawFn) -> StepTag:
    bits = draw(st.integers(2, 7))
    eb = draw(st.one_of(st.none(), st.integers(1, bits - 1)))
    return StepTag(bits, eb, draw(st.integers(1, 9)), slot_term=draw(st.booleans()))


def brute_gap(sc: StepTag, s1: int, s2: int, at_least: int) -> int | None:
    mod = 1 << sc.bits
    best = None
    for e1 in sc.epochs():
        for gap in range(at_least, mod + at_least + 1):
            if best is not None and gap >= best:
                break
            if sc.tag(e1, s1) == sc.tag(wrap(e1 + gap, sc.bits), s2):
                best = gap
                break
    return best


@settings(max_examples=examples(150))
@given(small_step_tags(), st.integers(0, 11), st.integers(0, 11), st.integers(1, 3))
def test_shortest_gap_matches_every_epoch(sc: StepTag, s1: int, s2: int, at_least: int) -> None:
    got = sc.across(s1, s2, at_least)
    want = brute_gap(sc, s1, s2, at_least)
    assert (None if got is None else got.gap) == want
    if got is not None:
        assert sc.tag(got.writer_epoch, s1) == sc.tag(got.reader_epoch, s2) == got.tag
        assert wrap(got.writer_epoch + got.gap, sc.bits) == got.reader_epoch


@settings(max_examples=examples(100))
@given(small_step_tags(), st.integers(0, 11), st.integers(0, 11), st.integers(0, 140))
def test_fraction_counts_every_epoch(sc: StepTag, s1: int, s2: int, gap: int) -> None:
    mod = 1 << sc.bits
    hits = sum(sc.tag(wrap(e - gap, sc.bits), s1) == sc.tag(e, s2) for e in sc.epochs())
    assert sc.fraction(s1, s2, gap) == hits / mod


@settings(max_examples=examples(100))
@given(small_step_tags(), st.integers(0, 11))
def test_cleared_and_overflow_match_every_epoch(sc: StepTag, s: int) -> None:
    zero = [e for e in sc.epochs() if sc.tag(e, s) == 0]
    e = sc.cleared(s)
    assert (e is None) == (not zero)
    if e is not None:
        assert sc.tag(e, s) == 0
    if sc.epoch_bits is not None:
        out = [e for e in sc.epochs() if not in_range(sc.intended(e, s), sc.bits)]
        o = sc.overflow(s)
        assert (o is None) == (not out)
        if o is not None:
            assert not in_range(sc.intended(o, s), sc.bits)


def test_step_tag_repeats_after_2_to_the_22_steps_for_one_slot_only() -> None:
    sc = STEP_TAG
    assert sc.tag(5, 3) == 5 * 256 + 4
    assert sc.tag(-1, 0) == -255  # remsi: the key of a negative epoch is negative
    same = sc.across(3, 3)
    assert same is not None and same.gap == 1 << 22
    assert sc.across(3, 4) is None and sc.across(0, 255) is None
    assert sc.same_step(0, 1) is None
    assert sc.overflow(255) is None


def test_step_tag_hits_the_cleared_value_at_slot_255_of_negative_epochs() -> None:
    sc = STEP_TAG
    assert sc.cleared(255) == -1 and sc.tag(-1, 255) == 0
    assert sc.cleared(254) is None
    # epochs e < 0 with e = -1 mod 2^22: 2^31 / 2^22 of them
    assert sc.fraction(255, 255, 1 << 22) > 0.99
    from kda_sim.checks.tags.analysis import _cleared_fraction

    assert _cleared_fraction(sc, 255) == (1 << 9) / (1 << 32)


def test_faults_slot_past_tag_slots_and_too_many_tag_slots() -> None:
    sc = STEP_TAG
    nxt = sc.across(256, 0)
    assert nxt is not None and nxt.gap == 1  # slot 256 is the next epoch's slot 0
    wide = replace(STEP_TAG, tag_slots=1024)
    e = wide.overflow(0)
    assert e is not None and wide.intended(e, 0) >= 2**31


def test_frozen_epoch_collides_every_step_and_layer_plus_one_needs_zeroing() -> None:
    fz = FrozenEpoch(STEP_TAG)
    got = fz.across(2, 2)
    assert got is not None and got.gap == 1 and fz.across(1, 2) is None
    assert fz.next_epoch(7) == 7
    lp = SlotOnly(STEP_TAG.bits, launch_slots=STEP_TAG.tag_slots)
    assert lp.across(3, 3) is not None and lp.same_step(3, 4) is None


def test_counter64_collides_only_after_2_to_the_56_steps() -> None:
    c = counter64(STEP_TAG.tag_slots)
    got = c.across(1, 1)
    assert got is not None and got.gap == 1 << 56
    assert c.overflow(0) == 1 << 55
    assert make_scheme("counter64", **SHIPPED).bits == 64


@st.composite
def small_bases(draw: st.DrawFn) -> StepTag | SlotOnly:
    if draw(st.integers(0, 4)) == 0:
        return SlotOnly(draw(st.integers(2, 7)), slot_term=draw(st.booleans()))
    return draw(small_step_tags())


@settings(max_examples=examples(150))
@given(small_bases(), st.integers(0, 11), st.integers(0, 11), st.integers(1, 3))
def test_an_epoch_frozen_at_any_value_answers_for_some_value(
    base: StepTag | SlotOnly, s1: int, s2: int, at_least: int
) -> None:
    """Frozen at any value: each answer is "at some epoch the run can be frozen at",
    checked against every epoch the base counter takes."""
    fz = FrozenEpoch(base)
    epochs = list(base.epochs())
    both = [e for e in epochs if base.tag(e, s1) == base.tag(e, s2)]
    got = fz.across(s1, s2, at_least)
    assert (got is None) == (not both)
    if got is not None:
        assert got.gap == at_least and got.writer_epoch == got.reader_epoch
        assert base.tag(got.writer_epoch, s1) == base.tag(got.writer_epoch, s2) == got.tag
    assert fz.fraction(s1, s2, 5) == len(both) / len(epochs)
    zero = [e for e in epochs if base.tag(e, s1) == 0]
    e = fz.cleared(s1)
    assert (e is None) == (not zero) and (e is None or base.tag(e, s1) == 0)
    assert fz.first_cleared(s1, 0) == e  # the first step runs at the frozen epoch
    out = [e for e in epochs if not in_range(base.intended(e, s1), base.bits)]
    o = fz.overflow(s1)
    if isinstance(base, SlotOnly) or base.epoch_bits is not None:
        assert (o is None) == (not out)


def test_an_epoch_frozen_at_a_given_value_is_analysed_there() -> None:
    # tag_slots 1: the tag of slot 0 is 0 at epoch -1 only (epoch % 2^22 = -1 by remsi)
    base = replace(STEP_TAG, tag_slots=1)
    assert FrozenEpoch(base, -1).cleared(0) == -1
    assert FrozenEpoch(base, 0).cleared(0) is None and FrozenEpoch(base, 7).cleared(0) is None
    assert FrozenEpoch(base).cleared(0) == -1  # any value: the one that reaches 0
    assert FrozenEpoch(base, 3).tag(99, 0) == base.tag(3, 0)  # the epoch never moves
    # 1024 slots overflow int32 only at large keys: not at 0, at 2^22 - 1
    wide = replace(STEP_TAG, tag_slots=1024)
    assert FrozenEpoch(wide, 0).overflow(0) is None
    assert FrozenEpoch(wide, (1 << 22) - 1).overflow(0) == (1 << 22) - 1
    assert FrozenEpoch(wide).overflow(0) == wide.overflow(0)
    assert "frozen at 5" in FrozenEpoch(wide, 5).formula()
    assert "epoch 5 only" in FrozenEpoch(wide, 5).coverage()
    assert "every epoch it can be frozen at" in FrozenEpoch(wide).coverage()
    # the horizon: frozen at any value, the live counter first had to get there
    assert FrozenEpoch(counter64(STEP_TAG.tag_slots)).steps_to(0, 1 << 55) == 1 << 55
    assert FrozenEpoch(counter64(STEP_TAG.tag_slots), 1 << 55).steps_to(0, 1 << 55) == 0


@pytest.mark.parametrize("name", SCHEMES)
def test_drop_slot_applies_to_every_scheme(name: str) -> None:
    healthy = make_scheme(name, **SHIPPED)
    faulty = make_scheme(name, **SHIPPED, drop_slot=True)
    assert healthy.same_step(0, 1) is None
    assert faulty.same_step(0, 1) is not None and faulty.tag(0, 0) == faulty.tag(0, 7)


@pytest.mark.parametrize("name", SCHEMES)
def test_frozen_epoch_applies_or_is_refused_by_name(name: str) -> None:
    if ("frozen-epoch", name) in NOT_APPLICABLE:
        with pytest.raises(InvalidInput, match=rf"frozen-epoch.*{re.escape(name)}"):
            make_scheme(name, **SHIPPED, frozen=True)
        return
    fz = make_scheme(name, **SHIPPED, frozen=True)
    assert isinstance(fz, FrozenEpoch) and fz.next_epoch(4) == 4
    assert fz.across(3, 3) is not None and fz.across(3, 3).gap == 1  # type: ignore[union-attr]
    assert make_scheme(name, **SHIPPED).across(3, 3).gap > 1  # type: ignore[union-attr]


@pytest.mark.parametrize("name", SCHEMES)
def test_more_slots_than_the_tag_has_are_refused_naming_option_value_and_limit(
    name: str,
) -> None:
    sc = make_scheme(name, **{**SHIPPED, "tag_slots": 4})
    check_slot_count(4, sc, given="--slots 4")
    with pytest.raises(InvalidInput, match=r"--slots 5: .*TAG_SLOTS = 4"):
        check_slot_count(5, sc, given="--slots 5")
