"""A host sequence's check, as text and as JSON (``kda-sim check --sequence``)."""

from __future__ import annotations

from typing import Any

from kda_sim.checks.findings import Finding, failing
from kda_sim.host.run import LaunchRun, SequenceRun
from kda_sim.host.shortest import Shortest


def _outcome(run: LaunchRun) -> str:
    tl = run.result.timeline
    if run.result.deadlock:
        return f"hangs ({len(tl.stuck)} CTAs stuck)"
    ends = [t.end for t in tl.ctas if t.end is not None]
    return f"finishes in {max(ends, default=0.0) / 1e3:.2f} us"


def _grids(run: LaunchRun, spec: Any) -> str:
    if len(run.grids) == 1:
        return ""
    return " grids " + " & ".join(f"[{spec.label(g.cfg)}]" for g in run.grids)


def _finding_text(f: Finding, with_shortest: bool) -> str:
    """A finding as every check prints it; the first failing one with the shortest
    failing sequence under it (every failing finding holds it, said once)."""
    if not with_shortest:
        return f.text()
    return f.text() + f"\n    shortest: {Shortest(**f.details['shortest']).line()}"


def sequence_text(seq: SequenceRun, findings: list[Finding], gpu: str) -> str:
    spec = seq.kernel
    lines = [f"{gpu}  {spec.name}  sequence {seq.sequence.text!r}"]
    said = costs_of(seq)
    if said:
        lines.append(f"  costs: {said}")
    for run in seq.runs:
        lines.append(f"  {run.label} (epoch {run.epoch}){_grids(run, spec)}: {_outcome(run)}")
    if seq.not_run:
        lines.append(f"  {seq.not_run} launches after the hang never ran")
    if findings:
        first = next((f for f in findings if "shortest" in f.details), None)
        lines += ["", *[_finding_text(f, f is first) for f in findings], ""]
    lines.append(
        "SAFE: every launch finished and no wait passed on what an earlier launch left"
        if not failing(findings)
        else "UNSAFE"
    )
    return "\n".join(lines)


def costs_of(seq: SequenceRun) -> str:
    """Which kernel costs the sequence's launches ran (their timelines' meta says)."""
    for run in seq.runs:
        extra = run.result.timeline.meta.extra
        if isinstance(extra, dict) and extra.get("costs"):
            return str(extra["costs"])
    return ""


def sequence_json(seq: SequenceRun, findings: list[Finding], gpu: str) -> dict[str, Any]:
    return {
        "gpu": gpu,
        "costs": costs_of(seq),
        "kernel": seq.kernel.name,
        "sequence": seq.sequence.text,
        "safe": not failing(findings),
        "launches": [
            {
                "index": r.index,
                "label": r.label,
                "epoch": r.epoch,
                "grids": [seq.kernel.config_to_dict(g.cfg) for g in r.grids],
                "deadlock": r.result.deadlock,
            }
            for r in seq.runs
        ],
        "not_run": seq.not_run,
        "findings": [f.to_dict() for f in findings],
    }
