"""Mailbox regions and the one dense address space of a launch's cells.

A cell is one (value, tag) pair. Every region's extent follows the seed's index
arithmetic for the shape; ``X`` is not a mailbox but the flagged x rows (one cell a
slice), tracked so that visibility can be checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

import numpy as np

from kda_sim.config import LaunchConfig
from kda_sim.constants import HD, NA, NH, NPROJ, NVCH


class Region(IntEnum):
    PART = 0
    WGT = 1
    MSQ = 2
    XRDY = 3
    PROJ = 4
    QK = 5
    ONRM = 6
    X = 7  # flagged data, not a mailbox


MAILBOXES: tuple[Region, ...] = tuple(r for r in Region if r is not Region.X)


def extents(cfg: LaunchConfig) -> dict[Region, int]:
    """Cells a launch of this shape addresses in each region."""
    s, ns = cfg.S, cfg.NS
    return {
        Region.PART: NA * s * ns * 2,
        Region.WGT: s * (ns + 1),
        Region.MSQ: NA * s,
        Region.XRDY: NA,
        Region.PROJ: s * NPROJ,
        Region.QK: cfg.R * NH * cfg.L * 2 * HD,
        Region.ONRM: cfg.R * NH * cfg.L * NVCH,
        Region.X: NA,
    }


@dataclass(frozen=True)
class CellSpace:
    """Global ids ``gid = offset[region] + index``, regions in the seed's order.

    ``align`` (cells) starts every region on a multiple of it, the gap before it unused:
    a kernel that lays its scratch out this way keeps each region on cache lines of its
    own (1: dense)."""

    sizes: tuple[int, ...]
    offsets: tuple[int, ...]

    @classmethod
    def of(cls, cfg: LaunchConfig, align: int = 1) -> CellSpace:
        if align < 1:
            raise ValueError(f"align = {align}: at least 1 cell")
        ext = extents(cfg)
        sizes = tuple(ext[r] for r in Region)
        offsets: list[int] = []
        at = 0
        for n in sizes:
            at = -(-at // align) * align
            offsets.append(at)
            at += n
        return cls(sizes, tuple(offsets))

    @property
    def total(self) -> int:
        return self.offsets[-1] + self.sizes[-1]

    def gid(self, region: Region, index: np.ndarray | int) -> np.ndarray:
        idx = np.asarray(index, dtype=np.int64)
        if idx.size and (idx.min() < 0 or idx.max() >= self.sizes[region]):
            raise IndexError(f"{region.name} index outside 0..{self.sizes[region] - 1}")
        return idx + self.offsets[region]

    def region_of(self, gids: np.ndarray) -> np.ndarray:
        return np.searchsorted(np.asarray(self.offsets), gids, side="right") - 1

    def split(self, gid: int) -> tuple[Region, int]:
        r = int(self.region_of(np.asarray([gid]))[0])
        return Region(r), int(gid) - self.offsets[r]
