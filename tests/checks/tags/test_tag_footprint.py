"""The step model from any kernel's footprints: classes of addresses every launch treats
alike, and the kernel's words for them (or none)."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.checks.tags.footprint import Intervals, StepModel, merge, runs, step_model, tag_model
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import get

# two shapes of a toy kernel: shape 0 puts 0..10 and polls 0..4; shape 1 puts 0..4 only;
# nb 2 also puts and polls 10..12
TOY: dict[tuple[int, int], tuple[Intervals, Intervals]] = {
    (0, 1): ([(0, 10)], [(0, 4)]),
    (0, 2): ([(0, 12)], [(0, 4), (10, 12)]),
    (1, 1): ([(0, 4)], []),
    (1, 2): ([(0, 4), (10, 12)], [(10, 12)]),
}


class Names:
    def pair(self, addr: int, shape: int, slot: int) -> str:
        return f"W[{addr}]"

    def reader(self, addr: int, shape: int, slot: int) -> str:
        return f"CTA {slot}"


def test_classes_are_addresses_every_launch_treats_alike() -> None:
    asked: list[tuple[int, int]] = []

    def fp(a: int, nb: int) -> tuple[Intervals, Intervals]:
        asked.append((a, nb))
        return TOY[(a, nb)]

    m = step_model(("big", "small"), (2, 1, 2), fp)
    assert asked == [(0, 1), (0, 2), (1, 1), (1, 2)]  # each launch once, in that order
    # 0..4 (put and polled by shape 0), 4..10 (put by shape 0), 10..12 (nb 2 only)
    assert m.classes == 3 and sorted(m.sizes.tolist()) == [2, 4, 6]
    assert m.writes.shape == (2, 3, 3) and m.nb == (2, 1, 2)
    c_tail = int(np.flatnonzero(m.rep == 10)[0])
    assert m.writes[:, :, c_tail].tolist() == [[True, False, True], [True, False, True]]
    assert m.polls[1, :, c_tail].tolist() == [True, False, True]
    assert m.pair(c_tail, 0, 0) == f"cell {c_tail}" and m.reader(c_tail, 0, 0) == ""
    named = step_model(("big", "small"), (1,), lambda a, nb: TOY[(a, nb)], Names())
    c0 = int(np.flatnonzero(named.rep == 0)[0])
    assert named.pair(c0, 1, 0) == "W[0]" and named.reader(c0, 0, 0) == "CTA 0"


def test_a_step_needs_a_slot() -> None:
    with pytest.raises(InvalidInput, match="at least one launch slot"):
        step_model(("a",), (), lambda a, nb: ([], []))


def test_merge_and_runs() -> None:
    assert merge([(5, 7), (0, 2), (2, 3), (6, 9), (4, 4)]) == [(0, 3), (5, 9)]
    assert runs(np.array([1, 2, 3, 7, 8, 10])) == [(1, 4), (7, 9), (10, 11)]
    assert runs(np.array([], dtype=np.int64)) == []


def test_a_kernel_without_a_tag_model_is_refused_by_name() -> None:
    with pytest.raises(InvalidInput, match="pingpong defines no tag_model"):
        tag_model(get("pingpong"))
    assert isinstance(
        tag_model(get("k1")).step_model(((1, 1),), (1,), "fixed", get("k1").default_config()),
        StepModel,
    )
