"""Memory between launches: what a launch leaves, what the host zeroes, what the next
launch finds."""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine.initial import Final, Initial
from kda_sim.host import run as host_run
from kda_sim.host.memory import HOST, Memory, PutCells
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile
from kda_sim.protocol.space import CellSpace

SPACE = CellSpace.from_sizes({"SEM": 2, "VAL": 3})


def _left(mem: Memory, epoch: int) -> None:
    final = Final({(0, 4): (10.0, 1)}, {1: 2}, {1: 0}, [], [])
    puts = PutCells.split(SPACE, {(0, 4): np.array([3, 4])})
    mem.absorb(SPACE, final, puts, epoch, lambda c: f"launch 0 (CTA {c})")


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
    puts = PutCells.split(SPACE, {(0, 4): np.array([3, 4])})
    mem.absorb(SPACE, final, puts, 5, lambda c: f"launch 0 (CTA {c})")
    assert mem.tags == {("VAL", 1): 0, ("VAL", 2): 5}
    assert mem.tag_from[("VAL", 1)] == "launch 0 (CTA 2)"
    assert mem.initial(SPACE, 5).tagged == frozenset({4})


@dataclass
class DictMemory:
    """``Memory`` as it was: every word and pair its own (region, index) key, each cell
    through ``CellSpace.split`` on its own (the reference the arrays must equal)."""

    words: dict = field(default_factory=dict)
    word_from: dict = field(default_factory=dict)
    tags: dict = field(default_factory=dict)
    tag_from: dict = field(default_factory=dict)

    def zero(self, regions: Iterable[str]) -> None:
        names = set(regions)
        for values, origin in ((self.words, self.word_from), (self.tags, self.tag_from)):
            for key in [k for k in values if k[0] in names]:
                values[key] = 0
                origin[key] = HOST

    def initial(self, space: CellSpace, epoch: int) -> Initial:
        known = set(space.names)

        def gid(key: tuple[str, int]) -> int:
            return int(space.gid(space.names.index(key[0]), key[1]))

        words = {gid(k): v for k, v in self.words.items() if v and k[0] in known}
        tagged = frozenset(gid(k) for k, t in self.tags.items() if t == epoch and k[0] in known)
        return Initial(words, tagged)

    def pair_writers(self, space: CellSpace, cells: Iterable[int]) -> list[str]:
        out = []
        for c in cells:
            region, index = space.split(c)
            out.append(self.tag_from.get((region.name, index), "?"))
        return out

    def absorb(
        self,
        space: CellSpace,
        final: Final,
        puts: PutCells,
        epoch: int,
        writer: Callable[[int], str],
    ) -> None:
        # each put's cells, as the launch's put ops give them (the split read back)
        put_cells = {ref: puts.cells[puts.put_of == k] for k, ref in enumerate(puts.refs)}
        for cell, value in final.words.items():
            region, index = space.split(cell)
            self.words[(region.name, index)] = value
            if cell in final.word_writer:
                self.word_from[(region.name, index)] = writer(final.word_writer[cell])
        put_at: dict[int, float] = {}
        for ref, (t, cta) in final.put_done.items():
            for cell in put_cells.get(ref, ()):
                region, index = space.split(int(cell))
                self.tags[(region.name, index)] = epoch
                self.tag_from[(region.name, index)] = writer(cta)
                put_at[int(cell)] = max(t, put_at.get(int(cell), t))
        for cell, (t, cta) in final.pair_resets.items():
            if t >= put_at.get(cell, -1.0):
                region, index = space.split(cell)
                self.tags[(region.name, index)] = 0
                self.tag_from[(region.name, index)] = writer(cta)


def _state(mem: Memory | DictMemory) -> tuple[dict, ...]:
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

    def run(memory: type) -> tuple[list, list]:
        states: list[tuple[dict, ...]] = []
        absorb = memory.absorb

        def record(mem: Memory | DictMemory, *args: object) -> None:
            absorb(mem, *args)
            states.append(copy.deepcopy(_state(mem)))

        with monkeypatch.context() as m:
            m.setattr(memory, "absorb", record)
            m.setattr(host_run, "Memory", memory)
            seq = run_sequence(spec, spec.config_type(**cfg), prof, parse(text))
        return states, [(r.initial, r.word_from, r.tag_from) for r in seq.runs]

    new, old = run(Memory), run(DictMemory)
    assert new == old
    assert any(state[0] or state[2] for state in new[0])  # words or tags were left


PUTS = st.lists(st.lists(st.integers(0, SPACE.total - 1), min_size=1, max_size=4), max_size=5)


@settings(max_examples=200, deadline=None)
@given(
    launches=st.lists(
        st.tuples(
            PUTS,
            st.randoms(use_true_random=False),
            st.dictionaries(st.integers(0, SPACE.total - 1), st.integers(0, 3), max_size=3),
            st.booleans(),
        ),
        min_size=1,
        max_size=3,
    )
)
def test_random_launches_leave_what_cell_by_cell_did(launches: list) -> None:
    """Puts that share cells, made in any order or not at all, resets before and after
    them, words, and the host's zeroing between launches: the arrays hold what the keys
    did, after every launch and as the next launch finds it."""
    new, old = Memory(), DictMemory()
    for epoch, (puts, rnd, words, zero) in enumerate(launches, 1):
        put_cells = {(0, k): np.array(cells) for k, cells in enumerate(puts)}
        made = [ref for ref in put_cells if rnd.random() < 0.8]
        rnd.shuffle(made)
        done = {ref: (float(rnd.randint(0, 5)), rnd.randint(0, 3)) for ref in made}
        resets = {c: (float(rnd.randint(0, 5)), rnd.randint(0, 3)) for c in rnd.sample(range(5), 2)}
        final = Final(done, words, {c: 1 for c in words}, [], [], pair_resets=resets)
        split = PutCells.split(SPACE, put_cells)
        for mem in (new, old):
            mem.absorb(SPACE, final, split, epoch, lambda c, e=epoch: f"launch {e} (CTA {c})")
            if zero:
                mem.zero(["VAL"])
        assert _state(new) == _state(old)
        for e in (epoch, epoch + 1):
            assert new.initial(SPACE, e) == old.initial(SPACE, e)
        cells = range(SPACE.total)
        assert new.pair_writers(SPACE, cells) == old.pair_writers(SPACE, cells)
