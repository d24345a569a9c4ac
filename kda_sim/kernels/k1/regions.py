"""K1's mailbox regions and their extents (the cells live in a
:class:`~kda_sim.protocol.space.CellSpace`).

A cell is one (value, tag) pair. Every region's extent follows the seed's index
arithmetic for the shape; ``X`` is not a mailbox but the flagged x rows (one cell a
slice), tracked so that visibility can be checked.
"""

from __future__ import annotations

from enum import IntEnum

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import HD, NA, NH, NPROJ, NVCH


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


def regions(cfg: LaunchConfig) -> dict[str, int]:
    """Every region's cells, by name, in the order of :class:`Region` (its ids); a ticket
    launch adds its counter's word after them (kda_sim/kernels/k1/tickets.py)."""
    ext = extents(cfg)
    out = {r.name: ext[r] for r in Region}
    if cfg.tickets:
        out["TICKET"] = 1  # tickets.TICKET_NAME, at id len(Region)
    return out
