"""Where the gemv CTAs end, by what shares their SM: the traces against a profile's model.

(No GPU.) Two gemv CTAs on one SM run their gemv slower than one beside an attn CTA, by
how much depending on S; the model slows a CTA whose SM-mate computes the same stage by
one factor at every S (``unit_share``). The ends of gemv1 by class (the SM-mate a gemv
CTA, or anything else) tell whether the factor holds at a shape, and how far the classes
spread in the traces and in the model, which is when the kda tasks' PROJ rows land.

Usage: ``python -m lab.gemv_ends --profile PROFILE [TRACE.json ...] [--json OUT]``
(default: the nine bundled H200 traces).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.counterpart import like_profile, read_k1_trace, simulate_like
from kda_sim.compare.model import model_view
from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import Timeline
from lab.gpu_jobs import report_main

TRACES = sorted(Path("traces").glob("k1_h200_R?_L?.json.gz"))
CLASSES = ("gemv-mate", "other")


def ends(tl: Timeline, stage: str = "gemv1") -> dict[str, list[float]]:
    """The end of ``stage`` of each gemv CTA, by class: its SM-mate a gemv CTA, or not."""
    by_unit: dict[int, list[str]] = defaultdict(list)
    for c in tl.ctas:
        by_unit[c.unit].append(c.role)
    out: dict[str, list[float]] = {k: [] for k in CLASSES}
    for c in tl.ctas:
        if c.role != "gemv":
            continue
        mates = list(by_unit[c.unit])
        mates.remove("gemv")
        cls = CLASSES[0] if "gemv" in mates else CLASSES[1]
        out[cls] += [s.end for s in c.stages if s.name == stage]
    return out


def summary(xs: list[float]) -> dict[str, float] | None:
    if not xs:
        return None
    p10, p50, p90 = np.percentile(xs, [10, 50, 90])
    return {"p10": round(p10), "median": round(p50), "p90": round(p90), "max": round(max(xs))}


def row(trace: Path, profile: str) -> dict[str, Any]:
    real = read_k1_trace(trace)
    cfg = model_view(real).cfg  # the launch the trace claims, its variants with it
    # as kda-sim compare runs it: the measured build's resources, the trace's occupancy
    sim = simulate_like(real, like_profile(real, profile)).timeline
    out: dict[str, Any] = {"shape": f"{cfg.R}x{cfg.L}"}
    for name, tl in (("real", real), ("model", sim)):
        out[name] = {k: summary(v) for k, v in ends(tl).items()}
    return out


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| shape | gemv-mate: real median (p10..p90) | model | other: real | model | "
        "mate less other: real | model |\n|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in rows:
        cells = [r["shape"]]
        for cls in CLASSES:
            a, b = r["real"][cls], r["model"][cls]
            cells.append(f"{a['median']} ({a['p10']}..{a['p90']})" if a else "-")
            cells.append(f"{b['median']} ({b['p10']}..{b['p90']})" if b else "-")
        for side in ("real", "model"):
            a, b = r[side][CLASSES[0]], r[side][CLASSES[1]]
            cells.append(f"{a['median'] - b['median']:+d}" if a and b else "-")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="*", type=Path, default=TRACES)
    ap.add_argument("--profile", required=True, help="a bundled profile's name or a file")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    a = ap.parse_args(argv)

    def make() -> list[dict[str, Any]]:
        try:
            return [row(t, a.profile) for t in a.traces]
        except (OSError, ValueError) as e:
            raise InvalidInput(str(e)) from e

    return report_main("gemv_ends", make, table, a.json)


if __name__ == "__main__":
    sys.exit(main())
