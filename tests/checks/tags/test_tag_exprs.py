"""Tag expressions evaluated as the device does, and read under another scheme."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kda_sim.checks.tags.exprs import differences, repair, under, value
from kda_sim.checks.tags.schemes import SlotOnly, StepTag, counter64
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.constants import TAG_EXPR
from kda_sim.protocol.tagexpr import EpochWord


@given(st.integers(-(1 << 31), (1 << 31) - 1), st.integers(0, 255))
def test_a_schemes_expression_computes_its_tag(epoch: int, slot: int) -> None:
    for scheme in (StepTag(32, 22, 256), StepTag(32, 22, 256, slot_term=False), SlotOnly(32)):
        assert value(scheme.expr, epoch, slot, captured=0) == scheme.tag(epoch, slot)
    c64 = counter64(256)
    assert value(c64.expr, epoch, slot, captured=0) == c64.tag(epoch, slot)


def test_lag_and_captured_word_read_other_epochs() -> None:
    stale = replace(TAG_EXPR, lag=1)
    assert value(stale, 5, 3, captured=0) == value(TAG_EXPR, 4, 3, captured=0)
    # the int32 counter read one step late at its smallest value wraps to its largest
    assert value(stale, -(1 << 31), 0, 0) == value(TAG_EXPR, (1 << 31) - 1, 0, 0)
    frozen = replace(TAG_EXPR, word=EpochWord.CAPTURED)
    assert value(frozen, 9, 1, captured=7) == value(TAG_EXPR, 7, 1, captured=0)


def test_a_programs_difference_is_kept_under_another_scheme() -> None:
    c64 = counter64(256).expr
    assert under(TAG_EXPR, TAG_EXPR, c64, "counter64") == c64
    assert under(None, TAG_EXPR, c64, "counter64") == c64
    got = under(replace(TAG_EXPR, lag=1), TAG_EXPR, c64, "counter64")
    assert got == replace(c64, lag=1)
    parity = under(replace(TAG_EXPR, epoch_bits=1), TAG_EXPR, c64, "counter64")
    assert parity.epoch_bits == 1 and parity.bits == 64
    slot_only = SlotOnly(32).expr
    assert under(replace(TAG_EXPR, offset=0), TAG_EXPR, slot_only, "layer+1").offset == 0


@pytest.mark.parametrize("change", [{"lag": 1}, {"epoch_bits": 1}, {"word": EpochWord.CAPTURED}])
def test_an_epoch_difference_is_refused_by_name_under_a_tag_without_epoch(change: dict) -> None:
    with pytest.raises(InvalidInput, match="--scheme layer\\+1 has no epoch"):
        under(replace(TAG_EXPR, **change), TAG_EXPR, SlotOnly(32).expr, "layer+1")


def test_repair_says_what_to_change() -> None:
    assert differences(replace(TAG_EXPR, lag=1), TAG_EXPR) == {"lag": 1}
    assert "this step's epoch" in repair(replace(TAG_EXPR, lag=1), TAG_EXPR)
    assert repair(replace(TAG_EXPR, offset=0), TAG_EXPR) == "add 1, not 0"
    assert "not as a parity (epoch % 2)" in repair(replace(TAG_EXPR, epoch_bits=1), TAG_EXPR)
    assert "not the value captured" in repair(replace(TAG_EXPR, word=EpochWord.CAPTURED), TAG_EXPR)
