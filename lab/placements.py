"""Where the GPU put each CTA: the distinct placements over many launches.

(No GPU.) Each trace records every CTA's SM; launches that put every CTA on the same SM
share a placement. For each distinct placement: how many traces have it (and which), the
SMs holding one CTA (and which CTAs those are), and the first SMs in block order, against
the model's dispatcher (block b on the emptiest SM, the lowest first: at two CTAs an SM
the pairs (b, b + units)). ``kda-sim compare`` and ``calibrate`` simulate a trace with its
own placement (``simulate(placement=...)``).

Usage: ``python -m lab.placements TRACE.json ... [--json OUT]``.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.importers import load_trace
from kda_sim.timeline.model import Timeline
from lab.gpu_jobs import report_main

HEAD = 24  # the first SMs in block order shown


def placement(tl: Timeline) -> tuple[int, ...]:
    """Each CTA's SM, in block order; refused where a CTA's SM was not recorded."""
    units = tuple(c.unit for c in tl.ctas)
    if any(u is None for u in units):
        raise InvalidInput("a CTA whose SM the trace did not record", what="trace")
    return units  # type: ignore[return-value]


def alone(units: tuple[int, ...]) -> dict[int, int]:
    """SM -> the CTA it holds, for the SMs holding one CTA."""
    n = Counter(units)
    return {u: b for b, u in enumerate(units) if n[u] == 1}


def summary(named: dict[str, tuple[int, ...]]) -> dict[str, Any]:
    """The distinct placements of ``named`` (trace name -> placement), most traces first."""
    groups: dict[tuple[int, ...], list[str]] = {}
    for name, units in named.items():
        groups.setdefault(units, []).append(name)
    rows = []
    for units, names in sorted(groups.items(), key=lambda kv: -len(kv[1])):
        one = alone(units)
        rows.append(
            {
                "traces": len(names),
                "names": sorted(names),
                "alone": {str(u): b for u, b in sorted(one.items())},
                "head": list(units[:HEAD]),
            }
        )
    return {"traces": len(named), "placements": rows}


def report(d: dict[str, Any]) -> str:
    lines = [f"{d['traces']} traces, {len(d['placements'])} distinct placements"]
    for i, p in enumerate(d["placements"]):
        ctas = sorted(p["alone"].values())
        lines.append(
            f"{i + 1}. {p['traces']} traces (e.g. {', '.join(p['names'][:3])}); "
            f"CTAs alone on their SM: {ctas}; SMs of CTAs 0..{HEAD - 1}: {p['head']}"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--json", type=Path, default=None, help="also write the summary here")
    a = ap.parse_args(argv)

    def run() -> dict[str, Any]:
        return summary({str(p): placement(load_trace(p)) for p in a.traces})

    return report_main("placements", run, report, a.json)


if __name__ == "__main__":
    sys.exit(main())
