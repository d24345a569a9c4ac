"""Where a traced ticket launch's takes sit against their CTA's role (docs/whatif/
ticket_k1.md, "A take issued ahead?"), and how long a gemv CTA's first task waits for its
PROJ rows, in the traces and in the model.

For each shape of a build's traced launches (``DIR/BUILD/warm/k1_R*_L*_*.json``), medians
over every launch pooled, ns:

* per role (attn: the mix's end; gemv: gemv1's end), each CTA's first take: its stamped
  issue and its return less the role's end, and its stamped round trip (return - issue);
* the round trip of a CTA's later takes (after an item);
* per role, the first kda task's k.conv PROJ poll, first try to satisfied: how long the
  task waits for rows other CTAs put (a take before it hides in that wait); with
  ``--model PROFILE``, the same from the static build simulated on it (the trace's
  resources, two CTAs an SM, nominal latencies).

    python -m lab.take_timing --dir S --build static_take [--model h200-warm.json]
        [--json OUT]
"""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path
from typing import Any

from kda_kernel.triton.defaults import default_config
from kda_sim.compare.launch import resources, with_resources
from kda_sim.compare.spread import launches_by_shape
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.machine import load_profile
from kda_sim.timeline import Timeline
from lab.gpu_jobs import report_main
from lab.ticket_k1_report import median
from lab.ticket_unroll_predict import OCCUPANCY

ROLE_END = {"attn": "mix", "gemv": "gemv1"}  # the stage a role ends on


def takes(tl: Timeline) -> dict[str, list[float]]:
    """The take figures of one launch (ns), by name (see the module docstring)."""
    per: dict[int, list[tuple[float, float]]] = defaultdict(list)
    for cta, issue, ret, _ in tl.meta.extra.get("ticket_takes", ()):
        per[int(cta)].append((float(issue), float(ret)))
    out: dict[str, list[float]] = defaultdict(list)
    for c in tl.ctas:
        ts = sorted(per.get(c.cta, ()))
        if not ts:
            continue
        ends = [s.end for s in c.stages if s.name == ROLE_END.get(c.role, "")]
        if ends:
            (issue, ret), end = ts[0], ends[0]
            out[f"{c.role}_issue_less_end"].append(issue - end)
            out[f"{c.role}_return_less_end"].append(ret - end)
            out[f"{c.role}_round_trip"].append(ret - issue)
        out["later_round_trip"] += [ret - issue for issue, ret in ts[1:]]
    return out


def proj_waits(tl: Timeline) -> dict[str, list[float]]:
    """Each attn and gemv CTA's first kda task's k.conv PROJ poll, first try to
    satisfied (ns), by role."""
    out: dict[str, list[float]] = defaultdict(list)
    for c in tl.ctas:
        if c.role not in ROLE_END:
            continue
        convs = [s for s in c.stages if s.name == "k.conv"]
        if not convs:
            continue
        task = min(convs, key=lambda s: s.start).task
        for p in c.polls:
            if p.stage == "k.conv" and p.task == task:
                out[f"{c.role}_proj_wait"].append(p.satisfied - p.first_issue)
                break
    return out


def report(folder: Path, build: str, model: str | None = None) -> dict[str, Any]:
    shapes = launches_by_shape(folder / build / "warm")
    if not shapes:
        raise InvalidInput(f"no traced launches of {build}", where=str(folder))
    prof = load_profile(model) if model else None
    rows = []
    for (R, L), paths in sorted(shapes.items()):
        pooled: dict[str, list[float]] = defaultdict(list)
        for p in paths:
            tl = read_kernel_trace(p)
            for figures in (takes(tl), proj_waits(tl)):
                for k, v in figures.items():
                    pooled[k] += v
        row: dict[str, Any] = {"R": R, "L": L, "launches": len(paths)}
        row.update({k: median(v) for k, v in sorted(pooled.items())})
        if prof is not None:
            res = resources(read_kernel_trace(paths[0]))
            sim = simulate(default_config(R, L, 8), with_resources(prof, res), occupancy=OCCUPANCY)
            row.update({f"model_{k}": median(v) for k, v in proj_waits(sim.timeline).items()})
        rows.append(row)
    return {"dir": str(folder), "build": build, "model": model, "rows": rows}


def table(rep: dict[str, Any]) -> str:
    cols = [k for k in rep["rows"][0] if k not in ("R", "L", "launches")]
    lines = ["| R x L | " + " | ".join(cols) + " |", "|---|" + "---|" * len(cols)]
    for r in rep["rows"]:
        cells = ["-" if r.get(k) is None else f"{r[k]:.0f}" for k in cols]
        lines.append(f"| {r['R']} x {r['L']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="the run's s/ folder of traces")
    ap.add_argument("--build", required=True, help="the build's folder under it")
    ap.add_argument("--model", help="a profile to simulate the static build on")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    return report_main("take_timing", lambda: report(a.dir, a.build, a.model), table, a.json)


if __name__ == "__main__":
    raise SystemExit(main())
