"""k.norm's ONRM+PROJ poll in traced K1 launches, build by build: what one try costs apart
from the hand-off, and whether the hand-off is slower for the other chunk tasks of its
head polling the same flags (docs/calibration.md, "k.norm's ONRM+PROJ poll"; the traces:
``scripts/device_gate_delay.sh`` with the k.norm builds).

Each DIR holds one build's launches as ``lab.trace_spread record`` names them. Per build
and shape, medians over every k.norm poll of its launches: the retries; a try that passed
at once (first issue to satisfied); put to seen of the polls that waited (the releasing
put as ``kda_sim.compare.diff.annotate_producers`` places it: the producer's next record
after the put, so at most the true put to seen); the same for the polls of chunk 0 alone
(which poll while the puts land by themselves where the build staggers the chunks:
``--build norm_stagger_ns=...``); and how many other polls of the same head were waiting
when the releasing put was made.

    python -m lab.norm_try DIR [DIR ...] [--json OUT]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from kda_sim.compare.diff import annotate_producers
from kda_sim.compare.model import model_view
from kda_sim.kernels.k1.kda import task_coords
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


def norm_rows(tl: Timeline) -> list[dict[str, Any]]:
    """One launch's k.norm polls: retries, chunk, the try's span, put to seen and first
    issue against the releasing put, and the same head's other polls waiting at that put."""
    ann = annotate_producers(tl, model_view(tl))
    polls = [p for c in ann.ctas for p in c.polls if p.stage == "k.norm" and p.satisfied]
    head = {id(p): task_coords(p.task)[:2] for p in polls}
    rows = []
    for p in polls:
        put = p.put_time
        assert p.satisfied is not None  # filtered above
        rows.append(
            {
                "retries": int(p.retries or 0),
                "chunk": task_coords(p.task)[2],
                "span": p.satisfied - p.first_issue,
                "seen": None if put is None else p.satisfied - put,
                "issue": None if put is None else p.first_issue - put,
                "waiting": None
                if put is None
                else sum(
                    q is not p
                    and head[id(q)] == head[id(p)]
                    and q.first_issue <= put < (q.satisfied or put)
                    for q in polls
                ),
            }
        )
    return rows


def shape_medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    waited = [r for r in rs if r["retries"] >= 1 and r["seen"] is not None]
    return {
        **poll_medians(rs, "span"),
        "waited": len(waited),
        "seen": median([r["seen"] for r in waited]),
        "issue": median([r["issue"] for r in waited]),
        "waiting": median([r["waiting"] for r in waited]),
        "chunk0_seen": median([r["seen"] for r in waited if r["chunk"] == 0]),
        "chunk0_waited": sum(r["chunk"] == 0 for r in waited),
    }


def read_dir(d: Path) -> dict[str, Any]:
    """One build's launches: its build options and, by shape, the medians above."""
    return read_build(d, norm_rows, shape_medians)


COLUMNS = [
    *POLL_COLUMNS,
    "put to seen, polls that waited (polls)",
    "their first issue - put",
    "the head's others waiting at the put",
    "chunk 0's put to seen (polls)",
]


def _cells(s: dict[str, Any]) -> list[str]:
    return [
        *poll_cells(s),
        f"{ns(s['seen'])} ({s['waited']})",
        ns(s["issue"]),
        ns(s["waiting"]),
        f"{ns(s['chunk0_seen'])} ({s['chunk0_waited']})",
    ]


def show(rep: dict[str, Any]) -> str:
    return build_table(rep, COLUMNS, _cells)


def main(argv: list[str] | None = None) -> int:
    return builds_main("norm_try", __doc__, read_dir, show, argv)


if __name__ == "__main__":
    sys.exit(main())
