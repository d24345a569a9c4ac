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

import statistics as st
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from kda_sim.compare.diff import annotate_producers
from kda_sim.compare.model import model_view
from kda_sim.kernels.k1.kda import task_coords
from kda_sim.timeline.model import Timeline
from lab.build_dir import build_launches, build_name, builds_main


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


def _median(xs: list[float]) -> float | None:
    return st.median(xs) if xs else None


def shape_medians(rs: list[dict[str, Any]]) -> dict[str, Any]:
    once = [r["span"] for r in rs if r["retries"] == 0]
    waited = [r for r in rs if r["retries"] >= 1 and r["seen"] is not None]
    return {
        "polls": len(rs),
        "retries": dict(sorted(Counter(r["retries"] for r in rs).items())),
        "try_at_once": _median(once),
        "at_once": len(once),
        "waited": len(waited),
        "seen": _median([r["seen"] for r in waited]),
        "issue": _median([r["issue"] for r in waited]),
        "waiting": _median([r["waiting"] for r in waited]),
        "chunk0_seen": _median([r["seen"] for r in waited if r["chunk"] == 0]),
        "chunk0_waited": sum(r["chunk"] == 0 for r in waited),
    }


def read_dir(d: Path) -> dict[str, Any]:
    """One build's launches: its build options and, by shape, the medians above."""
    build, launches = build_launches(d)
    shapes = {
        shape: shape_medians([r for tl in tls for r in norm_rows(tl)])
        for shape, tls in launches.items()
    }
    files = sum(len(tls) for tls in launches.values())
    return {"dir": str(d), "build": build, "launches": files, "shapes": shapes}


def _f(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def show(rep: dict[str, Any]) -> str:
    head = (
        "build | shape | polls | retries | a try passed at once (polls) | put to seen, polls "
        "that waited (polls) | their first issue - put | the head's others waiting at the put "
        "| chunk 0's put to seen (polls)"
    )
    lines = [head, "|".join(["---"] * 9)]
    for b in rep["builds"]:
        name = build_name(b["build"])
        for shape, s in b["shapes"].items():
            lines.append(
                f"{name} | {shape} | {s['polls']} | {s['retries']} | {_f(s['try_at_once'])} "
                f"({s['at_once']}) | {_f(s['seen'])} ({s['waited']}) | {_f(s['issue'])} | "
                f"{_f(s['waiting'])} | {_f(s['chunk0_seen'])} ({s['chunk0_waited']})"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return builds_main("norm_try", __doc__, read_dir, show, argv)


if __name__ == "__main__":
    sys.exit(main())
