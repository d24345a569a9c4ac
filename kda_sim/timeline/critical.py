"""Why a launch took as long as it did, and why a stuck one cannot go on.

``critical_path`` walks back from the CTA that ended last: through a CTA's program
order to the latest poll that waited for a put issued after the poll began, across
that hand-off to the producer's put, and on; a CTA that started late because its unit
was full continues on the CTA whose end freed the slot. It reads only the
:class:`Timeline`, so it works alike for simulated and measured runs.

``poll_sources`` lists every put a poll waited on (the record keeps only the last one)
from the static hand-off graph; ``wait_for_chain`` follows ``Timeline.stuck``.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from dataclasses import dataclass, field
from itertools import pairwise

from kda_sim.errors import KdaSimError
from kda_sim.timeline.model import CtaTrack, PollRecord, StageSpan, StuckWait, Timeline

# a put counts as what a poll waited for only when it came after the poll began;
# 1 ns absorbs float noise in measured clocks converted to ns
EPS_NS = 1.0


@dataclass(frozen=True, slots=True)
class PathStep:
    """One piece of the critical path, in time order once the path is built."""

    kind: str  # "run": time on one CTA; "handoff": put -> satisfied poll; "slot": end -> start
    cta: int  # the CTA the time is spent on (for a hand-off / slot: the waiting CTA)
    start: float
    end: float
    src: int | None = None  # hand-off / slot: the CTA that acted (producer, slot freer)
    label: str = ""
    polled: str = ""  # hand-off: the regions the released poll asked for (its label)

    @property
    def dur(self) -> float:
        return self.end - self.start


@dataclass(frozen=True, slots=True)
class CriticalPath:
    steps: tuple[PathStep, ...]
    by_stage: dict[str, float] = field(default_factory=dict)  # ns on the path by stage

    @property
    def length(self) -> float:
        return self.steps[-1].end - self.steps[0].start if self.steps else 0.0

    @property
    def ctas(self) -> list[int]:
        seen: list[int] = []
        for s in self.steps:
            if s.kind == "run" and (not seen or seen[-1] != s.cta):
                seen.append(s.cta)
        return seen

    def handoffs(self) -> list[PathStep]:
        return [s for s in self.steps if s.kind == "handoff"]


class WalkIndex:
    """What the walk asks of a timeline, indexed once so that each step costs a
    binary search instead of a scan of the CTA's polls or of the launch.

    Ties go as a scan in list order would send them (the first of equal times), so
    the path is the one the plain definitions below each method give.
    """

    def __init__(self, tl: Timeline) -> None:
        self.origin = tl.origin  # a property that scans every CTA: read once
        # per CTA position, built when the walk first reaches the CTA: the polls that
        # can bind (waited on a put made after they began), by (satisfied, -position)
        self._polls: dict[int, tuple[list[float], list[PollRecord]]] = {}
        # per unit: the CTAs that ended, sorted by (end, -position)
        by_unit: dict[int, list[tuple[float, int]]] = {}
        for k, c in enumerate(tl.ctas):
            if c.unit is not None and c.end is not None and not math.isnan(c.end):
                by_unit.setdefault(c.unit, []).append((c.end, -k))
        self._ends: dict[int, tuple[list[float], list[int]]] = {}
        for unit, rows in by_unit.items():
            rows.sort()
            self._ends[unit] = ([e for e, _ in rows], [-k for _, k in rows])
        self._pos = {id(c): k for k, c in enumerate(tl.ctas)}
        self._stage_ends: dict[int, list[float] | None] = {}

    def overlapping(self, track: CtaTrack, start: float, end: float) -> list[StageSpan]:
        """The stages of ``track`` that may overlap [start, end], in list order: found
        by a binary search where the stages follow one another (their starts and their
        ends both in order), else all of them."""
        stages = track.stages
        k = self._pos[id(track)]
        if k not in self._stage_ends:
            ends = [s.end for s in stages]
            ordered = all(a <= b for a, b in pairwise(ends)) and all(
                a.start <= b.start for a, b in pairwise(stages)
            )
            self._stage_ends[k] = ends if ordered else None
        ends_or_none = self._stage_ends[k]
        if ends_or_none is None:
            return stages
        lo = bisect_right(ends_or_none, start)  # stages ending by ``start`` add nothing
        hi = lo
        while hi < len(stages) and stages[hi].start < end:
            hi += 1
        return stages[lo:hi]

    def binding_poll(self, track: CtaTrack, t: float) -> PollRecord | None:
        """The latest poll before ``t`` that waited on a put made after it began:
        of the polls satisfied by ``t`` (+ EPS_NS) whose put came before ``t``, the one
        satisfied last."""
        k = self._pos[id(track)]
        if k not in self._polls:
            self._polls[k] = _bindable(track.polls)
        times, polls = self._polls[k]
        i = bisect_right(times, t + EPS_NS)
        while i > 0:  # from the latest satisfied; a put at or after t does not count
            i -= 1
            if polls[i].put_time < t:  # type: ignore[operator]
                return polls[i]
        return None

    def slot_freer(self, tl: Timeline, track: CtaTrack) -> CtaTrack | None:
        """The CTA on the same unit whose end came last before ``track`` started."""
        if track.unit is None or track.start is None or track.unit not in self._ends:
            return None
        ends, pos = self._ends[track.unit]
        i = bisect_right(ends, track.start + EPS_NS)
        while i > 0:
            i -= 1
            c = tl.ctas[pos[i]]
            if c.cta != track.cta:
                return c
        return None


def _bindable(polls: list[PollRecord]) -> tuple[list[float], list[PollRecord]]:
    cands = [
        (p.satisfied, -k, p)
        for k, p in enumerate(polls)
        if p.satisfied is not None
        and p.producer is not None
        and p.put_time is not None
        and math.isfinite(p.satisfied)
        and p.put_time > p.first_issue + EPS_NS
    ]
    cands.sort(key=lambda x: (x[0], x[1]))
    return [x[0] for x in cands], [x[2] for x in cands]


def _stage_time(stages: list[StageSpan], start: float, end: float, acc: dict[str, float]) -> None:
    covered = 0.0
    for s in stages:
        lo, hi = max(s.start, start), min(s.end, end)
        if hi > lo:
            acc[s.name] = acc.get(s.name, 0.0) + hi - lo
            covered += hi - lo
    rest = (end - start) - covered
    if rest > EPS_NS:
        acc["(between stages)"] = acc.get("(between stages)", 0.0) + rest


def critical_path(tl: Timeline) -> CriticalPath | None:
    """The chain of work and hand-offs that ends last; None if no CTA finished."""
    done = [c for c in tl.ctas if c.end is not None and c.start is not None]
    if not done:
        return None
    ix = WalkIndex(tl)
    track = max(done, key=lambda c: c.end)  # type: ignore[arg-type, return-value]
    return path_of(tl, walk_back(tl, ix, track, track.end), ix)  # type: ignore[arg-type]


def walk_back(tl: Timeline, ix: WalkIndex, track: CtaTrack, t: float) -> list[PathStep]:
    """The chain that brought ``track`` to time ``t``, walked back from there (the
    steps latest first): what :func:`critical_path` walks from the CTA that ended last,
    and a near-critical rival from the predecessor it swaps in."""
    steps: list[PathStep] = []
    # every step moves t strictly back, so the walk ends; the cap guards bad traces
    for _ in range(sum(len(c.polls) for c in tl.ctas) + len(tl.ctas) + 1):
        p = ix.binding_poll(track, t)
        if p is not None:
            steps.append(PathStep("run", track.cta, p.satisfied, t))  # type: ignore[arg-type]
            label = tl.ctas[p.producer].puts[p.put_ref].region if _has_put(tl, p) else p.label  # type: ignore[index]
            steps.append(
                PathStep(
                    "handoff",
                    track.cta,
                    p.put_time,  # type: ignore[arg-type]
                    p.satisfied,  # type: ignore[arg-type]
                    p.producer,
                    label,
                    p.label,
                )
            )
            track, t = tl.ctas[p.producer], p.put_time  # type: ignore[index, assignment]
            continue
        start: float = track.start  # type: ignore[assignment]
        steps.append(PathStep("run", track.cta, start, t))
        freer = ix.slot_freer(tl, track)
        if freer is None or start <= ix.origin + EPS_NS:
            break
        steps.append(PathStep("slot", track.cta, freer.end, start, freer.cta, "slot"))  # type: ignore[arg-type]
        track, t = freer, freer.end  # type: ignore[assignment]
    return steps


def path_of(
    tl: Timeline, latest_first: list[PathStep], ix: WalkIndex | None = None
) -> CriticalPath:
    """A path from its steps, latest first (as :func:`walk_back` gives them), with the
    time on it by stage."""
    ix = ix or WalkIndex(tl)
    steps = latest_first[::-1]
    acc: dict[str, float] = {}
    for s in steps:
        if s.kind == "run":
            _stage_time(ix.overlapping(tl.ctas[s.cta], s.start, s.end), s.start, s.end, acc)
        else:
            key = "(hand-off latency)" if s.kind == "handoff" else "(waiting for a slot)"
            acc[key] = acc.get(key, 0.0) + s.dur
    return CriticalPath(tuple(steps), acc)


def kind_sequence(tl: Timeline, path: CriticalPath) -> list[str]:
    """The path as stage kinds and hand-offs, in time order, without CTA numbers: a run
    step gives the stages it runs through (consecutive repeats once), a hand-off
    ``<-REGIONS`` (the regions the released poll asked for, which a measured trace
    records as a simulated one does), a slot wait ``<-slot``. Two launches' paths
    compare by kind where their CTA numbers need not agree.

    A run step that begins where a poll was satisfied begins in the polling stage even
    when that stage ends at the same stamp (a measured load_x is its XRDY poll and
    nothing else), so a stage counts when it ends no earlier than the step begins."""
    out: list[str] = []

    def add(tok: str) -> None:
        if not out or out[-1] != tok:
            out.append(tok)

    for s in path.steps:
        if s.kind == "run":
            for st in tl.ctas[s.cta].stages:
                if st.end >= s.start - EPS_NS and st.start < s.end - EPS_NS:
                    add(st.name)
        elif s.kind == "handoff":
            add(f"<-{s.polled or s.label}")
        else:
            add("<-slot")
    return out


def stage_kinds(seq: list[str]) -> list[str]:
    """A :func:`kind_sequence` without its hand-offs (consecutive repeats once)."""
    out: list[str] = []
    for tok in seq:
        if not tok.startswith("<-") and (not out or out[-1] != tok):
            out.append(tok)
    return out


def _has_put(tl: Timeline, p: PollRecord) -> bool:
    return (
        p.producer is not None
        and p.put_ref is not None
        and p.put_ref < len(tl.ctas[p.producer].puts)
    )


@dataclass(frozen=True, slots=True)
class Source:
    """A put a poll waited on."""

    cta: int
    put_index: int  # into ``tl.ctas[cta].puts``
    last: bool  # the put the poll saw last (the one that released it)


def poll_sources(tl: Timeline, cta: int, poll_index: int) -> list[Source]:
    """Every put that poll ``poll_index`` of ``cta`` waited on.

    From the static hand-off graph of the timeline's configuration when its records
    line up with the programs (the simulator's always do; a measured trace's when it
    recorded every poll and put in program order); else only the record's own producer.
    """
    poll = tl.ctas[cta].polls[poll_index]
    last = (poll.producer, poll.put_ref)
    out: list[Source] = []
    try:
        out = _static_sources(tl, cta, poll_index)
    except (ImportError, ValueError, IndexError, KeyError, TypeError, KdaSimError):
        out = []
    if not out and _has_put(tl, poll):
        out = [Source(poll.producer, poll.put_ref, True)]  # type: ignore[arg-type]
    return [Source(s.cta, s.put_index, (s.cta, s.put_index) == last) for s in out]


def _static_sources(tl: Timeline, cta: int, poll_index: int) -> list[Source]:
    # imported here: the timeline package stays usable without the protocol model
    from kda_sim.protocol.handoffs import handoffs_of
    from kda_sim.protocol.ops import Poll, Publish, Put

    ho = handoffs_of(tl.meta.config())
    programs = ho.launch.programs
    if len(programs) != len(tl.ctas):
        raise ValueError("CTA count differs from the configuration's")
    poll_ops = [k for k, op in enumerate(programs[cta].ops) if isinstance(op, Poll)]
    if len(poll_ops) != len(tl.ctas[cta].polls):
        raise ValueError("the trace's polls do not line up with the program")
    ref = (cta, poll_ops[poll_index])
    out: list[Source] = []
    put_index_cache: dict[int, dict[int, int]] = {}
    for d, k in ho.producers[ref]:
        idx = put_index_cache.get(d)
        if idx is None:
            ops = programs[d].ops
            at = [j for j, op in enumerate(ops) if isinstance(op, Put | Publish)]
            idx = {j: i for i, j in enumerate(at)}
            put_index_cache[d] = idx
        i = idx[k]
        puts = tl.ctas[d].puts
        if i >= len(puts) or puts[i].region != ho.launch.space.name(programs[d].ops[k].region):
            raise ValueError("the trace's puts do not line up with the program")
        out.append(Source(d, i, False))
    return out


def wait_for_chain(tl: Timeline, cta: int, limit: int = 64) -> list[StuckWait]:
    """From a stuck CTA: what it waits for, what that producer waits for, ... until a
    CTA that is not stuck (not resident, finished, no producer) or a cycle closes."""
    by_cta = {s.cta: s for s in tl.stuck}
    chain: list[StuckWait] = []
    seen: set[int] = set()
    c: int | None = cta
    while c is not None and c in by_cta and c not in seen and len(chain) < limit:
        seen.add(c)
        w = by_cta[c]
        chain.append(w)
        c = w.producer
    return chain


def shortest_chain(tl: Timeline) -> list[StuckWait]:
    """The wait-for chain with the fewest links among the stuck CTAs that wait on a
    producer (the lowest first CTA of equals): the least that shows why the launch
    hangs, from a waiter to a CTA that will not write (not resident, finished) or back
    to a CTA of the chain."""
    waiting = sorted(s.cta for s in tl.stuck if s.producer is not None)
    return min((wait_for_chain(tl, c) for c in waiting), key=len, default=[])


def stuck_since(tl: Timeline, cta: int) -> float | None:
    """When a stuck CTA began its last wait (its unsatisfied poll's first issue)."""
    track = tl.ctas[cta]
    waits = [p.first_issue for p in track.polls if p.satisfied is None]
    if waits:
        return min(waits)
    return track.stages[-1].start if track.stages else track.start
