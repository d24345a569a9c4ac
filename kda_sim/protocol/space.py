"""The one dense address space of a launch's cells: every region of its kernel, in the
kernel's order.

A cell is one (value, tag) pair (or, in a region of flagged data, one flagged unit). A
region is named by its id, its index in the kernel's order; ``names`` says what each is.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kda_sim.errors import InvalidInput

_LOWEST, _HIGHEST = np.minimum.reduce, np.maximum.reduce


class RegionRef(int):
    """A region's id that knows its name (compares as the id)."""

    name: str

    def __new__(cls, value: int, name: str) -> RegionRef:
        obj = super().__new__(cls, value)
        obj.name = name
        return obj

    def __repr__(self) -> str:
        return self.name


@dataclass(frozen=True)
class CellSpace:
    """Global ids ``gid = offset[region] + index``, regions in the kernel's order.

    ``align`` (cells) starts every region on a multiple of it, the gap before it unused:
    a kernel that lays its scratch out this way keeps each region on cache lines of its
    own (1: dense)."""

    sizes: tuple[int, ...]
    offsets: tuple[int, ...]
    names: tuple[str, ...] = ()

    @classmethod
    def from_sizes(cls, sizes: Mapping[str, int], align: int = 1) -> CellSpace:
        """The space of regions ``{name: cells}``, in the mapping's order."""
        if align < 1:
            raise ValueError(f"align = {align}: at least 1 cell")
        for name, n in sizes.items():
            if not isinstance(n, int | np.integer) or isinstance(n, bool) or n < 0:
                raise InvalidInput(f"region {name}: {n!r} cells (a size is an integer >= 0)")
        offsets: list[int] = []
        at = 0
        for n in sizes.values():
            at = -(-at // align) * align
            offsets.append(at)
            at += n
        return cls(tuple(sizes.values()), tuple(offsets), tuple(sizes))

    @classmethod
    def of(cls, cfg: Any, align: int = 1) -> CellSpace:
        """The space of a launch configuration, from its kernel's regions."""
        from kda_sim.kernels.registry import spec_for

        if align < 1:
            raise ValueError(f"align = {align}: at least 1 cell")
        return cls.from_sizes(spec_for(cfg).regions(cfg), align)

    @property
    def total(self) -> int:
        return self.offsets[-1] + self.sizes[-1] if self.sizes else 0

    def name(self, region: int) -> str:
        return self.names[region] if region < len(self.names) else str(region)

    def gid(self, region: int, index: np.ndarray | int) -> np.ndarray:
        if not 0 <= region < len(self.sizes):
            raise IndexError(f"region {region}: the launch has regions 0..{len(self.sizes) - 1}")
        idx = np.asarray(index, dtype=np.int64)
        # the ufuncs' reduce itself, not ndarray.min's Python wrapper: the builders call
        # this on small arrays, where the wrapper's call is much of the cost
        if idx.size and (_LOWEST(idx, None) < 0 or _HIGHEST(idx, None) >= self.sizes[region]):
            raise IndexError(f"{self.name(region)} index outside 0..{self.sizes[region] - 1}")
        return idx + self.offsets[region]

    def region_of(self, gids: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(self.offsets), gids, side="right") - 1

    def split_all(self, gids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``split`` over an array: each global id's region and index in it (int64)."""
        gids = np.asarray(gids, dtype=np.int64).ravel()
        if not gids.size:
            return gids, gids
        regions = self.region_of(gids)
        return regions, gids - np.asarray(self.offsets, dtype=np.int64)[regions]

    def split(self, gid: int) -> tuple[RegionRef, int]:
        """(region, index in it) of a global id."""
        r = int(self.region_of(np.asarray([gid]))[0])
        return RegionRef(r, self.name(r)), int(gid) - self.offsets[r]
