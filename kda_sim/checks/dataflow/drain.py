"""Flags raised after their data drained: a Publish with ``drain=False`` that flags
stores of flagged data (the flag can land before the data: a reader that sees it reads
old data), and flagged data stored after its program's last publish (no flag covers it).
Static: the program's order says it, whatever the timing (the engine's visibility check
looks for the same fault with stores acked late)."""

from __future__ import annotations

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.protocol.access import Accesses, Kind
from kda_sim.protocol.ops import Publish

DRAIN_FIX = (
    "drain the CTA's stores before the flag (s_waitcnt vmcnt(0), barrier, then the flag's "
    "put: Publish(drain=True))"
)
AFTER_FIX = "store the flagged data before the publish that flags it"


def check_drain(acc: Accesses, namer: Namer) -> list[Finding]:
    fs: list[Finding] = []
    total = acc.total
    guarded = acc.guard[acc.guard >= 0]
    for row in np.unique(guarded).tolist():
        op = acc.ops[row]
        if not isinstance(op, Publish) or op.drain:
            continue
        data = np.flatnonzero(acc.guard == row)
        gid = int(data[0])
        flag = namer.cell(int(op.cells[0])) if len(op.cells) else "its flag"
        fs.append(
            Finding(
                Category.VISIBILITY,
                Severity.FAIL,
                f"{namer.site(row)} raises {flag} without draining its stores of "
                f"{namer.cell(gid)}"
                + (f" and {data.size - 1} more flagged cells" if data.size > 1 else "")
                + ": the flag can land before the data, and a reader that sees it reads "
                "old data",
                DRAIN_FIX,
                {**namer.cell_details(gid), "writer": namer.site_details(row), "flag": flag},
            )
        )
    stores = (acc.w_kind == Kind.STORE) & (acc.w_cell >= 0) & (acc.w_cell < total)
    cells, rows = acc.w_cell[stores], acc.w_op[stores]
    loose = acc.guard[cells] < 0
    _, first = np.unique(rows[loose], return_index=True)
    for k in sorted(first.tolist()):
        row, gid = int(rows[loose][k]), int(cells[loose][k])
        fs.append(
            Finding(
                Category.VISIBILITY,
                Severity.FAIL,
                f"{namer.site(row)} stores {namer.cell(gid)} after the last flag it "
                "publishes: no flag covers the data, and a reader that sees the flag may "
                "read it before it lands",
                AFTER_FIX,
                {**namer.cell_details(gid), "writer": namer.site_details(row)},
            )
        )
    return capped(fs, lambda m: rest(Category.VISIBILITY, Severity.FAIL, m, "flags"))
