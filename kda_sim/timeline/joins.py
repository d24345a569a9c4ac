"""The critical path's joins: where it chose one predecessor over others, and by how much.

:func:`kda_sim.timeline.critical.critical_path` follows, at every step, the predecessor
that was ready last: the CTA that ended last, the put that released a poll (of several
producers, the last), the hand-off into a CTA rather than its own program order (the
poll began before the put), the CTA whose end freed a slot. Where the runner-up was
ready only a little earlier, the path could as well have run through it: a launch of
the same shape, or a small change to either, moves the path there, and the makespan
moves with either. Each such choice is a :class:`Join`; its slack is how much earlier
the runner-up was ready than the predecessor taken.

When a predecessor is ready: a put, at its time; a CTA's own program order at a poll, at
the poll's first issue (the CTA itself reached the poll then); a CTA's end, at its end.
So the slack at a poll compares a put's time with another put's or with the poll's
first issue, leaving out the hand-off's latency, which the rival would pay as well.

A :class:`Rival` is the path with one join swapped for its runner-up: the walk back from
the runner-up, joined to the path's steps after the join. Swapping a join of slack s
gives a chain that ends s earlier than the critical one would with the runner-up in its
place, so no rival is longer than the path where both begin at the launch's start.

It reads only the :class:`Timeline` (and, for every producer of a poll, ``sources``),
so it works alike for simulated and measured runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from kda_sim.timeline.critical import (
    EPS_NS,
    CriticalPath,
    PathStep,
    WalkIndex,
    kind_sequence,
    path_of,
    poll_sources,
    stage_kinds,
    walk_back,
)
from kda_sim.timeline.model import CtaTrack, PollRecord, Timeline

# A join's slack counts as near under this: the median, over the 787 joins on the paths of
# 72 traced H200 launches (nine shapes, eight each), of how far the gap between the same
# two predecessors moves between two launches of a shape (``python -m lab.loo_spread
# joins``; docs/calibration.md, "Near-critical rivals"). Under it a launch of the shape
# takes the runner-up as readily as the predecessor taken.
NEAR_NS = 224.0

# (CTA, poll index into its track's polls) -> every (producer CTA, put time) it waited on
Sources = Callable[[int, int], list[tuple[int, float]]]


@dataclass(frozen=True, slots=True)
class Ready:
    """A predecessor of a join and when it was ready (see the module)."""

    kind: str  # "end": a CTA's end; "put": a producer's put; "order": the CTA's own program
    cta: int  # the CTA that ended, put, or reached the poll
    time: float


@dataclass(frozen=True, slots=True)
class Join:
    """A step where the path chose the predecessor ready last over others."""

    kind: str  # "end": the CTA that ended last; "poll": a poll's release; "slot": a freed slot
    cta: int  # the CTA at the join (that ended, that waited on the poll or the slot)
    at: float  # when the join resolved: the end, the poll's satisfaction, the CTA's start
    label: str  # the poll's regions; "end"; "slot"
    stage: str  # the polling stage ("" for an end or a slot)
    task: int  # the polling stage's task (-1: a role stage, an end or a slot)
    taken: Ready
    runner_up: Ready | None  # None: no other predecessor
    step: int  # the index, latest first, of the path's step the choice leads into

    @property
    def slack(self) -> float | None:
        """How much earlier the runner-up was ready than the predecessor taken (ns, never
        negative: a runner-up ready later than the one taken counts as a tie)."""
        if self.runner_up is None:
            return None
        return max(0.0, self.taken.time - self.runner_up.time)

    def summary(self) -> dict:
        return {
            "kind": self.kind,
            "cta": self.cta,
            "at_ns": self.at,
            "label": self.label,
            "stage": self.stage,
            "task": self.task,
            "taken": {"kind": self.taken.kind, "cta": self.taken.cta, "ns": self.taken.time},
            "runner_up": None
            if self.runner_up is None
            else {
                "kind": self.runner_up.kind,
                "cta": self.runner_up.cta,
                "ns": self.runner_up.time,
            },
            "slack_ns": self.slack,
        }


@dataclass(frozen=True, slots=True)
class Rival:
    """The path with one join's runner-up swapped in."""

    join: Join
    path: CriticalPath
    kinds: tuple[str, ...]  # its :func:`kind_sequence`

    @property
    def slack(self) -> float:
        return self.join.slack or 0.0

    @property
    def stage_kinds(self) -> tuple[str, ...]:
        return tuple(stage_kinds(list(self.kinds)))


@dataclass(frozen=True, slots=True)
class NearCritical:
    """A path's joins (latest first) and the rivals of those whose slack is under ``near_ns``."""

    near_ns: float
    joins: tuple[Join, ...]
    rivals: tuple[Rival, ...]

    def near_joins(self) -> list[Join]:
        return [j for j in self.joins if j.slack is not None and j.slack < self.near_ns]

    def alternatives(self) -> dict[tuple[str, ...], float]:
        """Each stage-kind sequence a rival takes, with the least slack that reaches it."""
        out: dict[tuple[str, ...], float] = {}
        for r in self.rivals:
            k = r.stage_kinds
            out[k] = min(out.get(k, math.inf), r.slack)
        return dict(sorted(out.items(), key=lambda kv: kv[1]))

    def slack_to(self, kinds: list[str] | tuple[str, ...]) -> float | None:
        """The least slack of a join whose rival takes ``kinds`` (by stage kinds); None
        where no rival within the threshold does."""
        return self.alternatives().get(tuple(stage_kinds(list(kinds))))

    def summary(self, kinds: list[str]) -> dict:
        """The joins under the threshold and the alternative paths, beside ``kinds`` (the
        path's own stage kinds, left out of the alternatives)."""
        own = tuple(stage_kinds(kinds))
        return {
            "near_ns": self.near_ns,
            "joins": len(self.joins),
            "near_joins": [j.summary() for j in self.near_joins()],
            "rivals": [
                {"slack_ns": s, "kinds": list(k)}
                for k, s in self.alternatives().items()
                if k != own
            ],
        }


def timeline_sources(tl: Timeline) -> Sources:
    """Every producer of a poll from the timeline itself: the static hand-off graph's
    puts with their recorded times (:func:`poll_sources`), else the record's own one."""

    def get(cta: int, i: int) -> list[tuple[int, float]]:
        out = []
        for s in poll_sources(tl, cta, i):
            puts = tl.ctas[s.cta].puts
            if s.put_index < len(puts):
                out.append((s.cta, puts[s.put_index].time))
        p = tl.ctas[cta].polls[i]
        if not out and p.producer is not None and p.put_time is not None:
            out = [(p.producer, p.put_time)]
        return out

    return get


def _poll_at(track: CtaTrack, step: PathStep) -> int | None:
    """The index of the poll a hand-off step released."""
    for i, p in enumerate(track.polls):
        if p.satisfied == step.end and p.producer == step.src and p.put_time == step.start:
            return i
    return None


def _poll_rivals(
    cta: int, p: PollRecord, taken: Ready, srcs: list[tuple[int, float]]
) -> Ready | None:
    """The runner-up at poll ``p`` of ``cta``: the latest of its other predecessors (the
    other puts, and the CTA's own program order where a put was taken)."""
    cands = [Ready("put", c, t) for c, t in srcs if (c, t) != (taken.cta, taken.time)]
    if taken.kind == "put":
        cands.append(Ready("order", cta, p.first_issue))
    cands = [c for c in cands if math.isfinite(c.time)]
    return max(cands, key=lambda r: r.time, default=None)


def near_critical(
    tl: Timeline,
    path: CriticalPath,
    near_ns: float,
    sources: Sources | None = None,
) -> NearCritical:
    """The path's joins and, for each one of slack under ``near_ns``, its rival."""
    src = sources or timeline_sources(tl)
    ix = WalkIndex(tl)
    steps = list(reversed(path.steps))  # latest first, as walk_back gives them
    joins: list[Join] = []
    rivals: list[Rival] = []

    def rival(j: Join, head: list[PathStep], track: CtaTrack, t: float, k: int) -> None:
        if j.slack is None or j.slack >= near_ns:
            return
        rp = path_of(tl, steps[:k] + head + walk_back(tl, ix, track, t), ix)
        rivals.append(Rival(j, rp, tuple(kind_sequence(tl, rp))))

    if steps:
        last = tl.ctas[steps[0].cta]
        others = [
            c
            for c in tl.ctas
            if c.cta != last.cta
            and c.end is not None
            and c.start is not None
            and not math.isnan(c.end)
        ]
        runner = max(others, key=lambda c: c.end, default=None)  # type: ignore[arg-type, return-value]
        j = Join(
            "end",
            last.cta,
            last.end,  # type: ignore[arg-type]
            "end",
            "",
            -1,
            Ready("end", last.cta, last.end),  # type: ignore[arg-type]
            None if runner is None else Ready("end", runner.cta, runner.end),  # type: ignore[arg-type]
            0,
        )
        joins.append(j)
        if runner is not None:
            rival(j, [], runner, runner.end, 0)  # type: ignore[arg-type]
    for k, s in enumerate(steps):
        track = tl.ctas[s.cta]
        if s.kind == "handoff":
            i = _poll_at(track, s)
            if i is None:
                continue
            p = track.polls[i]
            taken = Ready("put", s.src, s.start)  # type: ignore[arg-type]
            ru = _poll_rivals(s.cta, p, taken, src(s.cta, i))
            j = Join("poll", s.cta, s.end, p.label, p.stage, p.task, taken, ru, k)
            joins.append(j)
            if ru is None:
                continue
            if ru.kind == "order":  # the CTA runs on from its poll's first issue
                wait = PathStep("run", s.cta, p.first_issue, s.end)
                rival(j, [wait], track, p.first_issue, k)
            else:
                ho = PathStep("handoff", s.cta, ru.time, s.end, ru.cta, s.label, s.polled)
                rival(j, [ho], tl.ctas[ru.cta], ru.time, k)
        elif s.kind == "run":
            # polls released within the step that did not bind: the CTA's own program
            # order was taken over the hand-off into it
            for i, p in enumerate(track.polls):
                if p.satisfied is None or not (s.start < p.satisfied <= s.end + EPS_NS):
                    continue
                srcs = [x for x in src(s.cta, i) if math.isfinite(x[1])]
                if not srcs:
                    continue
                put = max(srcs, key=lambda x: x[1])
                if put[1] > p.first_issue + EPS_NS:
                    continue  # a put after the poll began: the walk would have bound it
                taken = Ready("order", s.cta, p.first_issue)
                ru = Ready("put", put[0], put[1])
                j = Join("poll", s.cta, p.satisfied, p.label, p.stage, p.task, taken, ru, k)
                joins.append(j)
                head = [
                    PathStep("run", s.cta, p.satisfied, s.end, label=s.label),
                    PathStep("handoff", s.cta, put[1], p.satisfied, put[0], p.label, p.label),
                ]
                rival(j, head, tl.ctas[put[0]], put[1], k)
        elif s.kind == "slot":
            ends = [
                c
                for c in tl.ctas
                if c.unit == track.unit
                and c.cta not in (track.cta, s.src)
                and c.end is not None
                and c.end <= s.end + EPS_NS
            ]
            runner = max(ends, key=lambda c: c.end, default=None)  # type: ignore[arg-type, return-value]
            ru = None if runner is None else Ready("end", runner.cta, runner.end)  # type: ignore[arg-type]
            j = Join("slot", s.cta, s.end, "slot", "", -1, Ready("end", s.src, s.start), ru, k)  # type: ignore[arg-type]
            joins.append(j)
            if runner is not None:
                head = [PathStep("slot", s.cta, runner.end, s.end, runner.cta, "slot")]  # type: ignore[arg-type]
                rival(j, head, runner, runner.end, k)  # type: ignore[arg-type]
    return NearCritical(near_ns, tuple(joins), tuple(rivals))


def kinds_within(kinds: list[str], other: NearCritical, other_kinds: list[str]) -> bool:
    """``kinds`` (a path's kind sequence) by stage kinds is the other path's or one of its
    rivals' within its threshold."""
    own = stage_kinds(kinds)
    if not own:
        return False
    return own == stage_kinds(other_kinds) or other.slack_to(own) is not None
