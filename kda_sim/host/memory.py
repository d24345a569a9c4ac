"""What the GPU's memory holds between the launches of a host sequence: each counter or
flag word's value and each (value, tag) pair's tag, with who wrote it last. Keyed by
(region name, index) so that launches whose configurations lay regions out differently
still meet in the same words."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

import numpy as np

from kda_sim.engine.initial import Final, Initial
from kda_sim.protocol.handoffs import OpRef
from kda_sim.protocol.space import CellSpace

Key = tuple[str, int]  # (region, index)
HOST = "the host's zeroing"


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

        def gid(key: Key) -> int:
            return int(space.gid(space.names.index(key[0]), key[1]))

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
        ``writer(cta)`` says who wrote (the launch and the CTA)."""
        for cell, value in final.words.items():
            region, index = space.split(cell)
            key = (region.name, index)
            self.words[key] = value
            if cell in final.word_writer:
                self.word_from[key] = writer(final.word_writer[cell])
        put_at: dict[int, float] = {}
        for ref, (t, cta) in final.put_done.items():
            for cell in put_cells.get(ref, ()):
                region, index = space.split(int(cell))
                self.tags[(region.name, index)] = epoch
                self.tag_from[(region.name, index)] = writer(cta)
                put_at[int(cell)] = max(t, put_at.get(int(cell), t))
        for cell, (t, cta) in final.pair_resets.items():  # cleared after its last put
            if t >= put_at.get(cell, -1.0):
                region, index = space.split(cell)
                self.tags[(region.name, index)] = 0
                self.tag_from[(region.name, index)] = writer(cta)
