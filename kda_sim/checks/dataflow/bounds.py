"""Every write inside its region: a put or publish whose cells fall in another region
(past the end of its own, into the next) or outside the launch's cells; regions that
overlap in the launch's cell space."""

from __future__ import annotations

from itertools import pairwise

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.protocol.access import Accesses

BOUNDS_FIX = (
    "keep the put's indices below its region's extent: the region is too small for the "
    "shape, or the index arithmetic runs past it into the next region's cells"
)
OVERLAP_FIX = "lay the regions out back to back: each starts where the one before ends"


def check_bounds(acc: Accesses, namer: Namer) -> list[Finding]:
    out = _overlaps(acc)
    space = acc.launch.space
    total = acc.total
    inside = (acc.w_cell >= 0) & (acc.w_cell < total)
    region = np.full(acc.w_cell.shape, -1, dtype=np.int64)
    region[inside] = space.region_of(acc.w_cell[inside])
    named = acc.w_region >= 0  # a Store names no region: only inside the space
    bad = ~inside | (named & (region != acc.w_region))
    if not bad.any():
        return out
    rows = acc.w_op[bad]
    _, first, n = np.unique(rows, return_index=True, return_counts=True)
    fs = []
    for k in np.argsort(first, kind="stable"):
        i = int(np.flatnonzero(bad)[first[k]])
        row, gid = int(acc.w_op[i]), int(acc.w_cell[i])
        own = int(acc.w_region[i])
        what = space.name(own) if own >= 0 else "flagged data"
        lands = (
            f"in {space.name(int(region[i]))}: {namer.cell(gid)}"
            if region[i] >= 0
            else f"outside the launch's cells ({namer.cell(gid)})"
        )
        more = f" ({int(n[k])} cells, the first)" if n[k] > 1 else ""
        fs.append(
            Finding(
                Category.BOUNDS,
                Severity.FAIL,
                f"{namer.site(row)} writes {what}, but a cell it names lies {lands}{more}",
                BOUNDS_FIX,
                {
                    **namer.cell_details(gid),
                    "writer": namer.site_details(row),
                    "declared_region": what,
                    "cells": int(n[k]),
                },
            )
        )
    return out + capped(fs, lambda m: rest(Category.BOUNDS, Severity.FAIL, m, "writes"))


def _overlaps(acc: Accesses) -> list[Finding]:
    space = acc.launch.space
    out = []
    spans = sorted(zip(space.offsets, space.sizes, range(len(space.sizes)), strict=True))
    for (o1, n1, r1), (o2, _n2, r2) in pairwise(spans):
        if n1 and o1 + n1 > o2:
            out.append(
                Finding(
                    Category.BOUNDS,
                    Severity.FAIL,
                    f"regions {space.name(r1)} (cells {o1}..{o1 + n1 - 1}) and "
                    f"{space.name(r2)} (from cell {o2}) overlap: a put into one writes the "
                    f"other's [{o2 - o1}..]",
                    OVERLAP_FIX,
                    {"regions": [space.name(r1), space.name(r2)]},
                )
            )
    return out
