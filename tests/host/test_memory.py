"""Memory between launches: what a launch leaves, what the host zeroes, what the next
launch finds."""

from __future__ import annotations

import copy
from collections.abc import Callable

import numpy as np
import pytest

from kda_sim.engine.initial import Final
from kda_sim.host.memory import HOST, Memory
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile
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


def _absorb_cell_by_cell(
    mem: Memory,
    space: CellSpace,
    final: Final,
    put_cells: dict,
    epoch: int,
    writer: Callable[[int], str],
) -> None:
    """``Memory.absorb`` as it was: every cell through ``CellSpace.split`` on its own
    (the reference the array version must equal)."""
    for cell, value in final.words.items():
        region, index = space.split(cell)
        mem.words[(region.name, index)] = value
        if cell in final.word_writer:
            mem.word_from[(region.name, index)] = writer(final.word_writer[cell])
    put_at: dict[int, float] = {}
    for ref, (t, cta) in final.put_done.items():
        for cell in put_cells.get(ref, ()):
            region, index = space.split(int(cell))
            mem.tags[(region.name, index)] = epoch
            mem.tag_from[(region.name, index)] = writer(cta)
            put_at[int(cell)] = max(t, put_at.get(int(cell), t))
    for cell, (t, cta) in final.pair_resets.items():
        if t >= put_at.get(cell, -1.0):
            region, index = space.split(cell)
            mem.tags[(region.name, index)] = 0
            mem.tag_from[(region.name, index)] = writer(cta)


def _state(mem: Memory) -> tuple[dict, ...]:
    return mem.words, mem.word_from, mem.tags, mem.tag_from


@pytest.mark.parametrize(
    ("kernel", "text", "cfg"),
    [
        ("k1", "launch; launch; zero=ONRM; launch", {"R": 1, "L": 1}),
        ("k1", "launch; replay*2", {"R": 1, "L": 1}),
        ("splitk", "launch zero=SEM; replay*2; launch; replay update", {}),
        ("splitk", "zero=SEM; launch; replay", {"reset": False, "wait": "ge"}),
        ("schedworker", "launch grid=scheduler & launch grid=worker; replay", {"workers": 3}),
        ("pingpong", "launch; replay*2 update; launch", {}),
        ("deepgemm_gridid", "launch; replay*2", {"fix": True}),  # pair resets
        ("deepgemm_gridid", "launch; replay", {}),
    ],
)
def test_absorbing_by_array_leaves_what_cell_by_cell_did(
    monkeypatch: pytest.MonkeyPatch, kernel: str, text: str, cfg: dict
) -> None:
    """A sequence's memory after every launch, and what each launch found, are those the
    cell-by-cell absorb gives: K1 (its puts and resets), and examples' counters, replays,
    zeroing and grids launched together."""
    spec = get(kernel)
    prof = load_profile("h200", kernel=kernel)
    seen: list[list[tuple[dict, ...]]] = [[], []]

    def run(absorb: Callable[..., None], out: list) -> list:
        def record(mem: Memory, *args: object) -> None:
            absorb(mem, *args)
            out.append(copy.deepcopy(_state(mem)))

        with monkeypatch.context() as m:
            m.setattr(Memory, "absorb", record)
            seq = run_sequence(spec, spec.config_type(**cfg), prof, parse(text))
        return [(r.initial, r.word_from, r.tag_from) for r in seq.runs]

    new = run(Memory.absorb, seen[0])
    old = run(_absorb_cell_by_cell, seen[1])
    assert seen[0] == seen[1]
    assert new == old
    assert any(state[0] or state[2] for state in seen[0])  # words or tags were left
