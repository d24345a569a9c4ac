"""Two gemv CTAs on one SM: the one dispatched first against the later, in traces and model.

(No GPU.) On an SM that holds two gemv CTAs, which of them ends its gemv first, and by
how much: for each such pair (the lower CTA number is the first dispatched) the later
CTA's gemv0 and gemv1 durations and gemv1 end less the first's, and each one's gemv1 end
less the median of the gemv CTAs alone on their SM (beside an attn CTA or none). Traces of
one shape (several launches) are pooled. With ``--profile``, the same of the model run as
``kda-sim compare`` runs each trace (its first launch of a shape: the model does not move
between launches but for the starts it reads). A profile's ``unit_share_skew`` is what
makes the model's later CTA slower.

Usage: ``python -m lab.gemv_order TRACE.json ... [--profile PROFILE] [--json OUT]``.
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
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gpu_jobs import report_main

PARTS = ("gemv0 dur", "gemv1 dur", "gemv1 end")


def _stage(c: CtaTrack, name: str) -> tuple[float, float]:
    s = next(s for s in c.stages if s.name == name)
    return s.start, s.end


def pairs(tl: Timeline) -> dict[str, list[float]]:
    """For each SM with two gemv CTAs: later less first, by part; and each one's gemv1 end
    less the lone gemv CTAs' median (``first end``, ``later end``)."""
    on_unit: dict[int, list[CtaTrack]] = defaultdict(list)
    for c in tl.ctas:
        if c.role == "gemv":
            on_unit[c.unit].append(c)
    lone = [_stage(cs[0], "gemv1")[1] for cs in on_unit.values() if len(cs) == 1]
    base = float(np.median(lone)) if lone else float("nan")
    out: dict[str, list[float]] = {k: [] for k in (*PARTS, "first end", "later end")}
    for cs in on_unit.values():
        if len(cs) != 2:
            continue
        first, later = sorted(cs, key=lambda c: c.cta)
        (a0, b0), (a1, b1) = (_stage(first, n) for n in ("gemv0", "gemv1"))
        (c0, d0), (c1, d1) = (_stage(later, n) for n in ("gemv0", "gemv1"))
        out["gemv0 dur"].append((d0 - c0) - (b0 - a0))
        out["gemv1 dur"].append((d1 - c1) - (b1 - a1))
        out["gemv1 end"].append(d1 - b1)
        out["first end"].append(b1 - base)
        out["later end"].append(d1 - base)
    return out


def _summary(d: dict[str, list[float]]) -> dict[str, Any]:
    ends = d["gemv1 end"]
    out: dict[str, Any] = {k: round(float(np.median(v))) for k, v in d.items() if v}
    if ends:
        p10, p90 = np.percentile(ends, [10, 90])
        out["gemv1 end p10"], out["gemv1 end p90"] = round(p10), round(p90)
        out["later ends later"] = round(float(np.mean([e > 0 for e in ends])), 3)
        out["pairs"] = len(ends)
    return out


def report(traces: list[Path], profile: str | None) -> list[dict[str, Any]]:
    by_shape: dict[str, list[Timeline]] = defaultdict(list)
    for t in traces:
        tl = read_k1_trace(t)
        cfg = model_view(tl).cfg
        by_shape[f"{cfg.R}x{cfg.L}"].append(tl)
    rows = []
    for shape, tls in by_shape.items():
        real: dict[str, list[float]] = defaultdict(list)
        for tl in tls:
            for k, v in pairs(tl).items():
                real[k] += v
        row: dict[str, Any] = {"shape": shape, "launches": len(tls), "real": _summary(real)}
        if profile is not None:
            sim = simulate_like(tls[0], like_profile(tls[0], profile)).timeline
            row["model"] = _summary(pairs(sim))
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    sides = [s for s in ("real", "model") if any(s in r for r in rows)]
    cols = (*PARTS, "first end", "later end")
    head = "| shape | launches | side | pairs | " + " | ".join(cols) + " | later ends later |"
    lines = [head, "|" + "---|" * (len(cols) + 5)]
    for r in rows:
        for side in sides:
            s = r.get(side, {})
            cells = [r["shape"], str(r["launches"]), side, str(s.get("pairs", "-"))]
            for k in cols:
                v = s.get(k)
                if k == "gemv1 end" and v is not None:
                    cells.append(f"{v:+d} ({s['gemv1 end p10']:+d}..{s['gemv1 end p90']:+d})")
                else:
                    cells.append("-" if v is None else f"{v:+d}")
            share = s.get("later ends later")
            cells.append("-" if share is None else f"{share:.0%}")
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--profile", help="a bundled profile's name or a file: the model beside")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    a = ap.parse_args(argv)

    def make() -> list[dict[str, Any]]:
        try:
            return report(a.traces, a.profile)
        except (OSError, ValueError, StopIteration) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    return report_main("gemv_order", make, table, a.json)


if __name__ == "__main__":
    sys.exit(main())
