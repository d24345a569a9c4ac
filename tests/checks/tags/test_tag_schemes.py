"""The schemes' analytic answers against brute force over every epoch of small schemes,
and the facts of the real step_tag."""

from __future__ import annotations

from checks_scale import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.checks.tags.device import in_range, wrap
from kda_sim.checks.tags.schemes import FrozenEpoch, SlotOnly, StepTag, counter64, make_scheme


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
    sc = StepTag()
    assert sc.tag(5, 3) == 5 * 256 + 4
    assert sc.tag(-1, 0) == -255  # remsi: the key of a negative epoch is negative
    same = sc.across(3, 3)
    assert same is not None and same.gap == 1 << 22
    assert sc.across(3, 4) is None and sc.across(0, 255) is None
    assert sc.same_step(0, 1) is None
    assert sc.overflow(255) is None


def test_step_tag_hits_the_cleared_value_at_slot_255_of_negative_epochs() -> None:
    sc = StepTag()
    assert sc.cleared(255) == -1 and sc.tag(-1, 255) == 0
    assert sc.cleared(254) is None
    # epochs e < 0 with e = -1 mod 2^22: 2^31 / 2^22 of them
    assert sc.fraction(255, 255, 1 << 22) > 0.99
    from kda_sim.checks.tags.analysis import _cleared_fraction

    assert _cleared_fraction(sc, 255) == (1 << 9) / (1 << 32)


def test_faults_slot_past_tag_slots_and_too_many_tag_slots() -> None:
    sc = StepTag()
    nxt = sc.across(256, 0)
    assert nxt is not None and nxt.gap == 1  # slot 256 is the next epoch's slot 0
    wide = StepTag(tag_slots=1024)
    e = wide.overflow(0)
    assert e is not None and wide.intended(e, 0) >= 2**31


def test_frozen_epoch_collides_every_step_and_layer_plus_one_needs_zeroing() -> None:
    fz = FrozenEpoch(StepTag())
    got = fz.across(2, 2)
    assert got is not None and got.gap == 1 and fz.across(1, 2) is None
    assert fz.next_epoch(7) == 7
    lp = SlotOnly()
    assert lp.across(3, 3) is not None and lp.same_step(3, 4) is None


def test_counter64_collides_only_after_2_to_the_56_steps() -> None:
    c = counter64()
    got = c.across(1, 1)
    assert got is not None and got.gap == 1 << 56
    assert c.overflow(0) == 1 << 55
    assert make_scheme("counter64").bits == 64
