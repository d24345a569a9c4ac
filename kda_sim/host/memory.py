"""What the GPU's memory holds between the launches of a host sequence: each counter or
flag word's value and each (value, tag) pair's tag, with who wrote it last. Keyed by
(region name, index) so that launches whose configurations lay regions out differently
still meet in the same words."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import chain, repeat

import numpy as np

from kda_sim.engine.initial import Final, Initial
from kda_sim.protocol.handoffs import OpRef
from kda_sim.protocol.space import CellSpace

Key = tuple[str, int]  # (region, index)
HOST = "the host's zeroing"


def keys(space: CellSpace, cells: np.ndarray | Iterable[int]) -> list[Key]:
    """Each global cell's (region name, index), split an array at a time (a K1 launch
    leaves some 84,000 tagged pairs)."""
    arr = cells if isinstance(cells, np.ndarray) else np.fromiter(cells, dtype=np.int64)
    regions, index = space.split_all(arr)
    names = [space.name(r) for r in range(len(space.sizes))]
    return list(zip([names[r] for r in regions.tolist()], index.tolist(), strict=True))


@dataclass
class Memory:
    words: dict[Key, int] = field(default_factory=dict)  # absent: 0
    word_from: dict[Key, str] = field(default_factory=dict)
    tags: dict[Key, int] = field(default_factory=dict)  # absent: 0 (never written)
    tag_from: dict[Key, str] = field(default_factory=dict)

    def zero(self, regions: Iterable[str]) -> None:
        """The host zeroes every word and pair of ``regions`` (tag 0: no launch's)."""
        names = set(regions)
        for values, origin in ((self.words, self.word_from), (self.tags, self.tag_from)):
            for key in [k for k in values if k[0] in names]:
                values[key] = 0
                origin[key] = HOST

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
        tagged = frozenset(gid(k) for k, t in self.tags.items() if t == epoch and k[0] in known)
        return Initial(words, tagged)

    def absorb(
        self,
        space: CellSpace,
        final: Final,
        put_cells: dict[OpRef, np.ndarray],
        epoch: int,
        writer: Callable[[int], str],
    ) -> None:
        """What a launch left: its words' values, and its tag on every pair it put;
        ``writer(cta)`` says who wrote (the launch and the CTA). A put's cells are taken
        an array at a time; where puts share a cell, the later put's writer stays (in
        ``final.put_done``'s order) and the latest put's time decides a reset's."""
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
        puts = [
            (put_cells[ref], t, cta) for ref, (t, cta) in final.put_done.items() if ref in put_cells
        ]
        cells = np.concatenate([np.asarray(c, dtype=np.int64).ravel() for c, _, _ in puts] or [[]])
        cells = cells.astype(np.int64)
        put = keys(space, cells)
        self.tags.update(zip(put, repeat(epoch)))
        sizes = [np.asarray(c).size for c, _, _ in puts]
        writers = chain.from_iterable(
            repeat(who(cta), n) for (_, _, cta), n in zip(puts, sizes, strict=True)
        )
        self.tag_from.update(zip(put, writers, strict=True))
        if not final.pair_resets:
            return
        # the latest put of each reset cell: a reset clears the tag only after it
        times = np.repeat([t for _, t, _ in puts], sizes)
        mask = np.isin(cells, np.fromiter(final.pair_resets, dtype=np.int64))
        put_at: dict[int, float] = {}
        for cell, t in zip(cells[mask].tolist(), times[mask].tolist(), strict=True):
            put_at[cell] = max(t, put_at.get(cell, t))
        reset = keys(space, final.pair_resets)
        for key, (cell, (t, cta)) in zip(reset, final.pair_resets.items(), strict=True):
            if t >= put_at.get(cell, -1.0):
                self.tags[key] = 0
                self.tag_from[key] = who(cta)
