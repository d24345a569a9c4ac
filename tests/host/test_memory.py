"""Memory between launches: what a launch leaves, what the host zeroes, what the next
launch finds."""

from __future__ import annotations

import numpy as np

from kda_sim.engine.initial import Final
from kda_sim.host.memory import HOST, Memory
from kda_sim.protocol.space import CellSpace

SPACE = CellSpace.from_sizes({"SEM": 2, "VAL": 3})


def _left(mem: Memory, epoch: int) -> None:
    final = Final({(0, 4): (10.0, 1)}, {1: 2}, {1: 0}, [], [])
    mem.absorb(SPACE, final, {(0, 4): np.array([3, 4])}, epoch, lambda c: f"launch 0 (CTA {c})")


def test_a_launch_leaves_its_words_and_tags() -> None:
    mem = Memory()
    _left(mem, 5)
    assert mem.words == {("SEM", 1): 2}
    assert mem.word_from[("SEM", 1)] == "launch 0 (CTA 0)"
    assert mem.tags == {("VAL", 1): 5, ("VAL", 2): 5}
    init = mem.initial(SPACE, 5)
    assert init.words == {1: 2}
    assert init.tagged == frozenset({3, 4})
    assert mem.initial(SPACE, 6).tagged == frozenset()  # another epoch: nothing tagged


def test_the_host_zeroes_words_and_tags() -> None:
    mem = Memory()
    _left(mem, 5)
    mem.zero(["SEM", "VAL"])
    init = mem.initial(SPACE, 5)
    assert init.words == {} and init.tagged == frozenset()
    assert mem.word_from[("SEM", 1)] == HOST


def test_regions_the_next_layout_lacks_are_ignored() -> None:
    mem = Memory()
    _left(mem, 1)
    other = CellSpace.from_sizes({"VAL": 3})
    assert mem.initial(other, 1).tagged == frozenset({1, 2})


def test_a_pair_reset_after_its_put_leaves_no_tag() -> None:
    """VAL[1] (cell 3) is put at 10 ns and reset at 20 ns: it is left without a tag; VAL[2]
    (cell 4) was reset at 5 ns, before the put: the put's tag stays."""
    mem = Memory()
    final = Final({(0, 4): (10.0, 1)}, {}, {}, [], [], pair_resets={3: (20.0, 2), 4: (5.0, 2)})
    mem.absorb(SPACE, final, {(0, 4): np.array([3, 4])}, 5, lambda c: f"launch 0 (CTA {c})")
    assert mem.tags == {("VAL", 1): 0, ("VAL", 2): 5}
    assert mem.tag_from[("VAL", 1)] == "launch 0 (CTA 2)"
    assert mem.initial(SPACE, 5).tagged == frozenset({4})
