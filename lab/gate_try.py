"""gate's PART poll in traced K1 launches, build by build: what one try costs at each S,
apart from the hand-off (docs/calibration.md, "gate's PART poll: its retries, and a
back-off tried in the K1"; the traces: ``scripts/device_gate_delay.sh``).

Each DIR holds one build's launches as ``lab.trace_spread record`` names them
(``k1_R{R}_L{L}_{i}.json``, every one of the build its first names in meta.extra["build"]).
Per build and shape, medians over every gate poll of its launches: the retries, a try that
passed at once (first issue to satisfied), the first issue and the satisfied time against
the launch's last slice end, the other gate polls in flight beside each (0 where the
build staggers them), and the first poll issued in each launch (alone while the puts land
where the build staggers the others: ``--build gate_stagger_ns=5000``).

    python -m lab.gate_try DIR [DIR ...] [--json OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import Timeline
from lab.build_dir import (
    POLL_COLUMNS,
    build_table,
    builds_main,
    median,
    ns,
    poll_cells,
    poll_medians,
    read_build,
)


def gate_rows(tl: Timeline) -> list[dict[str, float]]:
    """One launch's gate polls: retries, first issue and satisfied against the last slice's
    end, whether it was the first issued, and how many other gate polls were in flight
    during each."""
    ends = [sp.end for c in tl.ctas for sp in c.stages if sp.name == "slice"]
    if not ends:
        raise InvalidInput("no slice stage: not a K1 launch", what="trace")
    last = max(ends)
    polls = [p for c in tl.ctas for p in c.polls if p.stage == "gate"]
    return [
        {
            "retries": p.retries,
            "try": p.satisfied - p.first_issue,
            "issue": p.first_issue - last,
            "seen": p.satisfied - last,
            "first": p is min(polls, key=lambda q: q.first_issue),
            "beside": sum(
                q is not p and q.first_issue < p.satisfied and p.first_issue < q.satisfied
                for q in polls
            ),
        }
        for p in polls
    ]


def shape_medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    """One shape's gate polls, every launch's: the medians of the module's list."""
    return {
        **poll_medians(rs, "try"),
        "issue": median([r["issue"] for r in rs]),
        "seen": median([r["seen"] for r in rs]),
        "beside": median([r["beside"] for r in rs]),
        # the first poll issued in each launch: where a build staggers the others by
        # more than a hand-off, the one that polls while the puts land alone
        "first_seen": median([r["seen"] for r in rs if r["first"]]),
    }


def read_dir(d: Path) -> dict[str, Any]:
    """One build's launches: its build options and, by shape, the medians above."""
    return read_build(d, gate_rows, shape_medians)


COLUMNS = [
    *POLL_COLUMNS,
    "first issue - last slice end",
    "satisfied - last slice end",
    "gate polls beside",
    "the first issued: satisfied - last slice end",
]


def _cells(s: dict[str, Any]) -> list[str]:
    return [
        *poll_cells(s),
        ns(s["issue"]),
        ns(s["seen"]),
        ns(s["beside"]),
        ns(s["first_seen"]),
    ]


def show(rep: dict[str, Any]) -> str:
    return build_table(rep, COLUMNS, _cells)


def main(argv: list[str] | None = None) -> int:
    return builds_main("gate_try", __doc__, read_dir, show, argv)


if __name__ == "__main__":
    sys.exit(main())
