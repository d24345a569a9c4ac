"""One writer a cell a launch: no cell written twice, none written by a unit the kernel's
layout does not give it to (an index permutation that writes every pair once, but the
wrong ones), and none that is polled or read but written by nobody (a missing put, named
with the unit that should have made it)."""

from __future__ import annotations

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.protocol.access import NO_UNIT, Accesses, Kind

TWICE_FIX = (
    "give each cell one writer a launch: correct the index arithmetic of one of the two "
    "puts (a second write races the first, and a reader sees either)"
)
LAYOUT_FIX = (
    "compute the put's indices from its own unit's coordinates (the kernel's layout): "
    "the unit that owns these cells must put them, and this one its own"
)
MISSING_FIX = "put every cell a reader waits for: restore the missing put (or stop reading it)"


def _more(n: int, what: str) -> str:
    """`` and 4 more cells`` of ``n`` in all (the first named)."""
    if n <= 1:
        return ""
    return f" and 1 more {what.rstrip('s')}" if n == 2 else f" and {n - 1} more {what}"


def _so(n: int) -> str:
    if n <= 1:
        return ""
    return "; so is 1 more cell" if n == 2 else f"; so are {n - 1} more cells"


def check_writers(acc: Accesses, namer: Namer) -> list[Finding]:
    cell, op = acc.writes
    count = acc.write_count
    out = _twice(acc, namer, cell, op, count)
    expected = namer.expected()
    if expected is not None:
        out += _off_layout(acc, namer, cell, op, count, expected)
    out += _missing(acc, namer, count, expected)
    return out


def _twice(
    acc: Accesses, namer: Namer, cell: np.ndarray, op: np.ndarray, count: np.ndarray
) -> list[Finding]:
    multi = count[cell] > 1
    if not multi.any():
        return []
    c, o = cell[multi], op[multi]
    order = np.lexsort((o, c))
    c, o = c[order], o[order]
    first = np.flatnonzero(np.r_[True, c[1:] != c[:-1]])
    a, b, cells = o[first], o[first + 1], c[first]
    _, at, n = np.unique(a * len(acc.ops) + b, return_index=True, return_counts=True)
    found = []
    for k in np.argsort(at, kind="stable"):
        ra, rb, gid = int(a[at[k]]), int(b[at[k]]), int(cells[at[k]])
        found.append(
            Finding(
                Category.WRITERS,
                Severity.FAIL,
                f"{namer.cell(gid)} is written twice in one launch: by {namer.site(ra)} "
                f"and by {namer.site(rb)}{_so(int(n[k]))}",
                TWICE_FIX,
                {
                    **namer.cell_details(gid),
                    "writers": [namer.site_details(ra), namer.site_details(rb)],
                    "cells": int(n[k]),
                },
            )
        )
    return capped(found, lambda m: _rest(Category.WRITERS, m, "cells written twice"))


def _off_layout(
    acc: Accesses,
    namer: Namer,
    cell: np.ndarray,
    op: np.ndarray,
    count: np.ndarray,
    expected: np.ndarray,
) -> list[Finding]:
    unit = acc.unit_of_op()[op]
    want = expected[cell]
    bad = (count[cell] == 1) & (want != NO_UNIT) & (unit != want)
    if not bad.any():
        return []
    o, w, c = op[bad], want[bad], cell[bad]
    _, at, n = np.unique(np.stack([o, w], 1), axis=0, return_index=True, return_counts=True)
    found = []
    for k in np.argsort(at, kind="stable"):
        row, gid, owner = int(o[at[k]]), int(c[at[k]]), int(w[at[k]])
        found.append(
            Finding(
                Category.WRITERS,
                Severity.FAIL,
                f"{namer.site(row)} writes {namer.cell(gid)}{_more(int(n[k]), 'cells')}, "
                f"which the kernel's layout gives to {namer.unit(owner)}: its indices land "
                "on another unit's cells, or the work runs where the layout does not place "
                "it (each cell is still written once, so no poll hangs: a reader takes "
                "what the wrong unit wrote)",
                LAYOUT_FIX,
                {
                    **namer.cell_details(gid),
                    "writer": namer.site_details(row),
                    "expected": namer.unit(owner),
                    "cells": int(n[k]),
                },
            )
        )
    return capped(found, lambda m: _rest(Category.WRITERS, m, "puts on another unit's cells"))


def _missing(
    acc: Accesses, namer: Namer, count: np.ndarray, expected: np.ndarray | None
) -> list[Finding]:
    total = acc.total
    ok = (acc.r_cell >= 0) & (acc.r_cell < total)
    rc, ro, rk = acc.r_cell[ok], acc.r_op[ok], acc.r_kind[ok]
    space = acc.launch.space
    written_regions = np.array(
        [count[o : o + n].any() for o, n in zip(space.offsets, space.sizes, strict=True)],
        dtype=bool,
    )
    # a poll of a pair nobody puts is a missing put; a read of an unwritten cell is one
    # where its region is written in this launch (else the host fills it)
    unwritten = np.flatnonzero(count[rc] == 0)
    rc, ro, rk = rc[unwritten], ro[unwritten], rk[unwritten]
    gone = (rk == Kind.POLL) | written_regions[space.region_of(rc)]
    if not gone.any():
        return []
    rc, ro, rk = rc[gone], ro[gone], rk[gone]
    owner = expected[rc] if expected is not None else np.full(rc.shape, NO_UNIT)
    found = []
    for u in sorted(np.unique(owner).tolist(), key=lambda u: int(np.argmax(owner == u))):
        mine = owner == u
        cells = np.unique(rc[mine])
        first = int(np.argmax(mine))
        gid, row = int(rc[first]), int(ro[first])
        verb = "polls" if rk[first] == Kind.POLL else "reads"
        hint = "" if u == NO_UNIT else f"; it should be put by {namer.unit(int(u))}"
        found.append(
            Finding(
                Category.WRITERS,
                Severity.FAIL,
                f"no op of this launch writes {namer.cell(gid)}"
                f"{_more(cells.size, 'such cells')}, which {namer.site(row)} {verb}{hint}",
                MISSING_FIX,
                {
                    **namer.cell_details(gid),
                    "reader": namer.site_details(row),
                    "expected": None if u == NO_UNIT else namer.unit(int(u)),
                    "cells": int(cells.size),
                },
            )
        )
    return capped(found, lambda m: _rest(Category.WRITERS, m, "units' missing puts"))


def _rest(category: Category, n: int, what: str) -> Finding:
    return rest(category, Severity.FAIL, n, what)
