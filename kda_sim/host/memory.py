"""What the GPU's memory holds between the launches of a host sequence: each counter or
flag word's value and each (value, tag) pair's tag, with who wrote it last. Keyed by
(region name, index) so that launches whose configurations lay regions out differently
still meet in the same words.

The pairs are held a region at a time, as arrays by index (``Pairs``): a K1 launch puts
some 84,000 of them, and set one (region, index) key at a time they cost a launch of a
sequence many times what simulating it does. ``tags`` and ``tag_from`` show them as
mappings."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from kda_sim.engine.initial import Final, Initial
from kda_sim.protocol.handoffs import OpRef
from kda_sim.protocol.space import CellSpace

Key = tuple[str, int]  # (region, index)
HOST = "the host's zeroing"


def keys(space: CellSpace, cells: np.ndarray | Iterable[int]) -> list[Key]:
    """Each global cell's (region name, index), split an array at a time."""
    arr = cells if isinstance(cells, np.ndarray) else np.fromiter(cells, dtype=np.int64)
    regions, index = space.split_all(arr)
    names = [space.name(r) for r in range(len(space.sizes))]
    return list(zip([names[r] for r in regions.tolist()], index.tolist(), strict=True))


@dataclass
class Pairs:
    """One region's pairs by index: the tag each holds, who wrote it, and whether any
    launch or the host ever did (a pair never written holds no entry, as absent from a
    mapping)."""

    tag: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    writer: np.ndarray = field(default_factory=lambda: np.zeros(0, object))
    held: np.ndarray = field(default_factory=lambda: np.zeros(0, bool))

    def fit(self, size: int) -> None:
        """Room for indices below ``size`` (a layout's region may be larger than the
        last's)."""
        have = self.tag.size
        if size > have:
            grow = size - have
            self.tag = np.concatenate([self.tag, np.zeros(grow, np.int64)])
            self.writer = np.concatenate([self.writer, np.full(grow, None, object)])
            self.held = np.concatenate([self.held, np.zeros(grow, bool)])


@dataclass(frozen=True)
class PutCells:
    """A launch's put cells, split once: every put's cells in one array, each cell's
    region and index, and the number of the put it is of (``refs[put_of[i]]``). Made by
    whoever runs the launch (``split``) and kept for a launch that runs again: a sequence
    repeats one launch, and splitting its 84,000 cells (K1) is most of what ``absorb``
    costs."""

    refs: tuple[OpRef, ...]
    cells: np.ndarray
    regions: np.ndarray
    index: np.ndarray
    put_of: np.ndarray

    @classmethod
    def split(cls, space: CellSpace, put_cells: dict[OpRef, np.ndarray]) -> PutCells:
        """``put_cells`` (each put's global cells in ``space``), in their order."""
        arrays = [np.asarray(c, dtype=np.int64).ravel() for c in put_cells.values()]
        cells = np.concatenate(arrays) if arrays else np.zeros(0, np.int64)
        regions, index = space.split_all(cells)
        put_of = np.repeat(np.arange(len(arrays)), [a.size for a in arrays])
        return cls(tuple(put_cells), cells, regions, index, put_of)


@dataclass
class Memory:
    words: dict[Key, int] = field(default_factory=dict)  # absent: 0
    word_from: dict[Key, str] = field(default_factory=dict)
    pairs: dict[str, Pairs] = field(default_factory=dict)  # by region name

    @property
    def tags(self) -> dict[Key, int]:
        """Each pair ever written: its tag (0: none, or the host's zeroing)."""
        return {
            (name, int(i)): int(p.tag[i])
            for name, p in self.pairs.items()
            for i in np.flatnonzero(p.held)
        }

    @property
    def tag_from(self) -> dict[Key, str]:
        """Each pair ever written: who wrote its tag last."""
        return {
            (name, int(i)): p.writer[i]
            for name, p in self.pairs.items()
            for i in np.flatnonzero(p.held)
        }

    def zero(self, regions: Iterable[str]) -> None:
        """The host zeroes every word and pair of ``regions`` (tag 0: no launch's)."""
        names = set(regions)
        for key in [k for k in self.words if k[0] in names]:
            self.words[key] = 0
            self.word_from[key] = HOST
        for name in names:
            p = self.pairs.get(name)
            if p is not None:
                p.tag[p.held] = 0
                p.writer[p.held] = HOST

    def initial(self, space: CellSpace, epoch: int) -> Initial:
        """What a launch with tag ``epoch`` finds: words by value, pairs already tagged."""
        known = set(space.names)
        region = {name: r for r, name in reversed(list(enumerate(space.names)))}

        def gid(key: Key) -> int:
            r = region[key[0]]
            if not 0 <= key[1] < space.sizes[r]:
                space.gid(r, key[1])  # raises: the index is outside this layout's region
            return space.offsets[r] + key[1]

        words = {gid(k): v for k, v in self.words.items() if v and k[0] in known}
        tagged: list[np.ndarray] = []
        for name, p in self.pairs.items():
            if name in known:
                index = np.flatnonzero(p.held & (p.tag == epoch))
                r = region[name]
                if index.size and index[-1] >= space.sizes[r]:
                    space.gid(r, index)  # raises: an index outside this layout's region
                tagged.append(index + space.offsets[r])
        cells = np.concatenate(tagged).tolist() if tagged else []
        return Initial(words, frozenset(cells))

    def pair_writers(self, space: CellSpace, cells: Iterable[int]) -> list[str]:
        """Who wrote the tag of each of ``cells`` (global ids of ``space``), "?" where no
        launch nor the host did."""
        regions, index = space.split_all(np.fromiter(cells, dtype=np.int64))
        out: list[str] = []
        for r, i in zip(regions.tolist(), index.tolist(), strict=True):
            p = self.pairs.get(space.name(r))
            held = p is not None and i < p.held.size and p.held[i]
            out.append(p.writer[i] if held else "?")  # type: ignore[union-attr]
        return out

    def absorb(
        self,
        space: CellSpace,
        final: Final,
        puts: PutCells,
        epoch: int,
        writer: Callable[[int], str],
    ) -> None:
        """What a launch left: its words' values, and its tag on every pair it put
        (``puts``: the launch's put cells, split); ``writer(cta)`` says who wrote (the
        launch and the CTA). The pairs are set an array a region: where puts share a pair,
        the later put (in ``final.put_done``'s order) leaves its writer, and the latest
        put's time decides whether a reset cleared it."""
        named: dict[int, str] = {}

        def who(cta: int) -> str:
            name = named.get(cta)
            if name is None:
                name = named[cta] = writer(cta)
            return name

        for key, (cell, value) in zip(keys(space, final.words), final.words.items(), strict=True):
            self.words[key] = value
            if cell in final.word_writer:
                self.word_from[key] = who(final.word_writer[cell])
        cells, regions, index, put_of = puts.cells, puts.regions, puts.index, puts.put_of
        refs = puts.refs
        # each put's rank in the order the launch made them (-1: not made), and its writer
        rank = np.full(len(refs), -1, np.int64)
        label = np.full(len(refs), None, object)
        slot = {ref: k for k, ref in enumerate(refs)}
        for order, (ref, (_, cta)) in enumerate(final.put_done.items()):
            k = slot.get(ref)
            if k is not None:
                rank[k], label[k] = order, who(cta)
        made = rank[put_of] >= 0
        # the last put made of each pair: stable by rank, then each pair's last entry
        entries = np.flatnonzero(made)
        entries = entries[np.argsort(rank[put_of[entries]], kind="stable")]
        _, last = np.unique(cells[entries][::-1], return_index=True)
        entries = entries[entries.size - 1 - last]
        for r in np.unique(regions[entries]).tolist():
            pick = entries[regions[entries] == r]
            p = self.pairs.setdefault(space.name(r), Pairs())
            at = index[pick]
            p.fit(max(space.sizes[r], int(at.max()) + 1))
            p.tag[at] = epoch
            p.writer[at] = label[put_of[pick]]
            p.held[at] = True
        if not final.pair_resets:
            return
        # the latest put of each reset cell: a reset clears the tag only after it
        times = np.array(
            [final.put_done[ref][0] if rank[k] >= 0 else 0.0 for k, ref in enumerate(refs)]
        )
        resets = np.fromiter(final.pair_resets, dtype=np.int64)
        put_at: dict[int, float] = {}
        hit = made & np.isin(cells, resets)
        for cell, t in zip(cells[hit].tolist(), times[put_of[hit]].tolist(), strict=True):
            put_at[cell] = max(t, put_at.get(cell, t))
        reset_regions, reset_index = space.split_all(resets)
        for r, i, (cell, (t, cta)) in zip(
            reset_regions.tolist(), reset_index.tolist(), final.pair_resets.items(), strict=True
        ):
            if t >= put_at.get(cell, -1.0):
                p = self.pairs.setdefault(space.name(r), Pairs())
                p.fit(max(space.sizes[r], i + 1))
                p.tag[i], p.writer[i], p.held[i] = 0, who(cta), True
