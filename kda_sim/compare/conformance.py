"""Does a real trace follow the model's happens-before order?

The model's order has two parts: program order within a CTA (its stages in the
sequence its program runs them) and the hand-offs between CTAs (a poll is satisfied
only after every put it waits on). After clock alignment
(:mod:`kda_sim.compare.clocks`) every recorded event that breaks it is a finding,
of one of three classes:

- ``skew``: a hand-off whose consumer is ahead of its producer by no more than the
  clock's resolution (two stamps, each quantised) -- what the clocks cannot resolve;
- ``stage_order``: a CTA's stages in an order (or overlapping, or on a CTA) the
  model's program does not have. This needs no alignment: one CTA, one clock;
- ``handoff``: a poll satisfied before a put the model says it waits on, by more
  than the resolution; or a poll / put the model's program has no place for: the
  real kernel has a hand-off the model does not.

A hand-off difference is visible only where it contradicts the other hand-offs:
causality bounds offsets, it does not fix them, so a consumer that went on early
by less than the slack its clock has is indistinguishable from clock offset.
"""

from __future__ import annotations

import itertools
from dataclasses import asdict, dataclass, field

import numpy as np

from kda_sim.compare.clocks import ClockFit, fit_clocks
from kda_sim.compare.model import ModelView, model_view, op_stage
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.summary import say_missing, unrecorded_ctas

CLASSES = ("skew", "stage_order", "handoff")


@dataclass
class Finding:
    kind: str  # one of CLASSES
    cta: int
    what: str
    detail: str
    by_ns: float = 0.0  # how far the order is broken (after alignment)
    producer: int | None = None


@dataclass
class Conformance:
    findings: list[Finding]
    fit: ClockFit
    tolerance_ns: float
    checked_handoffs: int
    checked_ctas: int
    counts: dict[str, int] = field(default_factory=dict)
    # what the trace lacks: CTAs that recorded nothing, CTAs that never finished
    unrecorded: list[int] = field(default_factory=list)
    unfinished: list[int] = field(default_factory=list)

    @property
    def partial(self) -> bool:
        """Part of the launch is not in the trace: only what is there was checked."""
        return bool(self.unrecorded or self.unfinished)

    @property
    def conforms(self) -> bool:
        """No finding beyond the clock's residual, over the whole launch (a partial
        trace never conforms: what it lacks was not checked)."""
        return not self.partial and not any(f.kind != "skew" for f in self.findings)

    def missing(self) -> str:
        """What the trace lacks, in words ("" when it holds the whole launch)."""
        return say_missing(self.unrecorded, self.unfinished, self.checked_ctas)

    def summary(self, limit: int = 50) -> dict:
        return {
            "conforms": self.conforms,
            "partial": {
                "missing": self.missing(),
                "unrecorded_ctas": self.unrecorded,
                "unfinished_ctas": self.unfinished,
            }
            if self.partial
            else None,
            "counts": self.counts,
            "tolerance_ns": self.tolerance_ns,
            "checked_handoffs": self.checked_handoffs,
            "clock": self.fit.summary(),
            "findings": [asdict(f) for f in self.findings[:limit]],
        }


def _stage_findings(tl: Timeline, mv: ModelView, tol: float) -> list[Finding]:
    out: list[Finding] = []
    for m in mv.mismatches:
        kind = "stage_order" if m.kind == "stage" else "handoff"
        out.append(Finding(kind, m.cta, m.what, m.detail))
    for c in tl.ctas:
        model = [k for k in mv.views[c.cta].stage_order]
        have = {(s.name, s.task): s for s in c.stages}
        expect = [k for k in model if k in have]
        for s in c.stages:
            if s.end < s.start - tol:
                out.append(
                    Finding(
                        "stage_order",
                        c.cta,
                        f"{s.name} (task {s.task})",
                        "ends before it starts",
                        s.start - s.end,
                    )
                )
        seen = sorted(
            (s for s in c.stages if (s.name, s.task) in set(expect)),
            key=lambda s: (s.start, s.end),
        )
        got = [(s.name, s.task) for s in seen]
        if got != expect:
            i = next(i for i, (a, b) in enumerate(zip(got, expect, strict=True)) if a != b)
            out.append(
                Finding(
                    "stage_order",
                    c.cta,
                    f"{got[i][0]} (task {got[i][1]})",
                    f"runs where the model runs {expect[i][0]} (task {expect[i][1]}): "
                    f"order {[g[0] for g in got]} vs the model's {[e[0] for e in expect]}",
                )
            )
            continue
        for a, b in itertools.pairwise(seen):
            if b.start < a.end - tol:
                out.append(
                    Finding(
                        "stage_order",
                        c.cta,
                        f"{b.name} (task {b.task})",
                        f"starts {a.end - b.start:.0f} ns before {a.name} (task {a.task}) ends",
                        a.end - b.start,
                    )
                )
    return out


def _handoff_findings(tl: Timeline, mv: ModelView, fit: ClockFit, tol: float) -> list[Finding]:
    e = mv.edges
    ok = np.isfinite(e.put_lb) & np.isfinite(e.sat_ub)
    gap = (e.sat_ub - fit.cta_offset[e.cons]) - (e.put_lb - fit.cta_offset[e.prod])
    bad = np.nonzero(ok & (gap < 0))[0]
    out: list[Finding] = []
    # one finding per poll: its worst producer
    worst: dict[tuple[int, int], int] = {}
    for i in bad:
        key = (int(e.cons[i]), int(e.cons_op[i]))
        if key not in worst or gap[i] < gap[worst[key]]:
            worst[key] = int(i)
    progs = mv.handoffs.launch.programs
    for (c, k), i in sorted(worst.items()):
        v = float(-gap[i])
        p, kp = int(e.prod[i]), int(e.prod_op[i])
        stage, task = op_stage(progs[c].ops, k)
        pstage, ptask = op_stage(progs[p].ops, kp)
        label = progs[c].ops[k].label
        kind = "skew" if v <= tol else "handoff"
        out.append(
            Finding(
                kind,
                c,
                f"poll {label} in {stage} (task {task})",
                f"satisfied {v:.0f} ns before CTA {p}'s put in {pstage} (task {ptask})"
                + ("" if e.exact[i] else " (bounds: the trace does not record both ends)"),
                v,
                p,
            )
        )
    return out


def check_conformance(
    tl: Timeline,
    fit: ClockFit | None = None,
    tolerance_ns: float | None = None,
    clock_mode: str | None = None,
    clock_group: str | None = None,
) -> Conformance:
    """Every event of ``tl`` that breaks the model's happens-before order, classified."""
    mv = model_view(tl)
    fit = fit or fit_clocks(tl, mv, clock_mode, clock_group)
    tol = tolerance_ns if tolerance_ns is not None else 2.0 * fit.resolution_ns + 1.0
    findings = _stage_findings(tl, mv, tol) + _handoff_findings(tl, mv, fit, tol)
    counts = {k: sum(f.kind == k for f in findings) for k in CLASSES}
    unrecorded, unfinished = unrecorded_ctas(tl)
    return Conformance(
        findings, fit, tol, len(mv.edges), len(tl.ctas), counts, unrecorded, unfinished
    )


def conformance(tl: Timeline) -> Conformance:
    """The check (the name the app looks up)."""
    return check_conformance(tl)
