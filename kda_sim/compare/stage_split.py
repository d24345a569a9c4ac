"""What a stage's duration is made of: poll waits, exposed load latency, the rest.

Every stage span of a timeline is split three ways:

- **wait**: the time inside the span covered by the stage's own polls (first issue to
  satisfied; overlapping polls counted once). A measured trace records these exactly.
- **load**: the time outside those waits during which a load the stage *uses* (a
  ``Use`` of the CTA's program inside the stage) was still in flight -- known only
  where the timeline records loads (the simulator's; a measured K1 trace records none,
  so its load share is ``None`` and sits in the rest).
- **compute**: what is left -- the stage's own work, its barriers and stores, and on a
  real GPU the contention with what shares the SM (``kda-sim compare``'s table by
  unit partner tells those apart).

Per stage kind the medians of the three over the kind's spans are reported; the
medians of parts need not add up to the median duration.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from kda_sim.compare.model import config_of
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Begin, End, Use
from kda_sim.timeline.model import CtaTrack, StageSpan, Timeline


@dataclass(frozen=True, slots=True)
class SpanSplit:
    """One stage span's duration in parts (ns)."""

    cta: int
    stage: str
    task: int
    dur: float
    wait: float
    load: float | None  # None: the timeline records no loads

    @property
    def compute(self) -> float:
        return self.dur - self.wait - (self.load or 0.0)


def union_length(intervals: list[tuple[float, float]], lo: float, hi: float) -> float:
    """Length of the union of ``intervals`` clipped to [lo, hi]."""
    clipped = sorted((max(a, lo), min(b, hi)) for a, b in intervals if min(b, hi) > max(a, lo))
    total, cur_a, cur_b = 0.0, None, None
    for a, b in clipped:
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                total += cur_b - cur_a  # type: ignore[operator]
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        total += cur_b - cur_a  # type: ignore[operator]
    return total


def _minus(
    intervals: list[tuple[float, float]], holes: list[tuple[float, float]]
) -> list[tuple[float, float]]:
    """``intervals`` with ``holes`` cut out."""
    out = list(intervals)
    for h0, h1 in holes:
        nxt: list[tuple[float, float]] = []
        for a, b in out:
            if h1 <= a or h0 >= b:
                nxt.append((a, b))
                continue
            if a < h0:
                nxt.append((a, h0))
            if h1 < b:
                nxt.append((h1, b))
        out = nxt
    return out


def used_loads(tl: Timeline) -> dict[tuple[int, str, int], set[str]]:
    """(CTA, stage, task) -> the load names the stage's ``Use`` ops wait for, from the
    configuration's programs."""
    progs = handoffs_of(config_of(tl)).launch.programs
    out: dict[tuple[int, str, int], set[str]] = defaultdict(set)
    for b, prog in enumerate(progs):
        key: tuple[int, str, int] | None = None
        for op in prog.ops:
            if isinstance(op, Begin):
                key = (b, op.stage, op.task)
            elif isinstance(op, End):
                key = None
            elif isinstance(op, Use) and key is not None:
                out[key].update(op.names)
    return out


def _span_split(c: CtaTrack, s: StageSpan, uses: set[str] | None, has_loads: bool) -> SpanSplit:
    waits = [
        (p.first_issue, p.satisfied)
        for p in c.polls
        if p.satisfied is not None and p.stage == s.name and p.task == s.task
    ]
    wait = union_length(waits, s.start, s.end)
    load: float | None = None
    if has_loads:
        flight = [
            (max(ld.issue, s.start), ld.done)
            for ld in c.loads
            if uses and ld.name in uses and ld.done is not None
        ]
        load = union_length(_minus(flight, waits), s.start, s.end)
    return SpanSplit(c.cta, s.name, s.task, s.dur, wait, load)


def split_spans(tl: Timeline) -> list[SpanSplit]:
    """Every stage span of ``tl`` split (see the module)."""
    has_loads = any(c.loads for c in tl.ctas)
    uses = used_loads(tl) if has_loads else {}
    return [
        _span_split(c, s, uses.get((c.cta, s.name, s.task)), has_loads)
        for c in tl.ctas
        for s in c.stages
    ]


def _med(v: list[float]) -> float | None:
    return float(np.median(v)) if v else None


def split_by_kind(spans: list[SpanSplit]) -> dict[str, dict[str, float | int | None]]:
    """Per stage kind: n and the medians of dur, wait, load (None: unrecorded), compute."""
    by: dict[str, list[SpanSplit]] = defaultdict(list)
    for sp in spans:
        by[sp.stage].append(sp)
    out: dict[str, dict[str, float | int | None]] = {}
    for name, xs in by.items():
        loads = [x.load for x in xs if x.load is not None]
        out[name] = {
            "n": len(xs),
            "dur_ns": _med([x.dur for x in xs]),
            "wait_ns": _med([x.wait for x in xs]),
            "load_ns": _med(loads) if len(loads) == len(xs) else None,
            "compute_ns": _med([x.compute for x in xs]),
        }
    return out


def split_side_by_side(real: Timeline, sim: Timeline) -> dict[str, dict[str, float | None]]:
    """Per stage kind, real and simulated medians and the duration error (sim - real) /
    real; the kinds in the real timeline's order of first appearance."""
    r, s = split_by_kind(split_spans(real)), split_by_kind(split_spans(sim))
    out: dict[str, dict[str, float | None]] = {}
    for name in [*r, *(k for k in s if k not in r)]:
        a, b = r.get(name, {}), s.get(name, {})
        row: dict[str, float | None] = {}
        for part in ("n", "dur_ns", "wait_ns", "load_ns", "compute_ns"):
            row[f"real_{part}"] = a.get(part)  # type: ignore[assignment]
            row[f"sim_{part}"] = b.get(part)  # type: ignore[assignment]
        rd, sd = a.get("dur_ns"), b.get("dur_ns")
        row["dur_err"] = (sd - rd) / rd if rd and sd is not None else None  # type: ignore[operator]
        out[name] = row
    return out
