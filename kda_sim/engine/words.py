"""Counter and flag words as a simulated launch sees them.

Every write of a word (an atomic, a reset) is serialized where the word lives: it
arrives half an ``atomic`` round trip after it issues, plus, when the word's last write
came from another XCD, the extra a cross-XCD hand-off costs over a same-XCD one (the
line moves; 0 on a GPU of one XCD); it is served after the word's previous write, which
holds the word ``atomic_serial`` ns. A write's value is the one an atomic returns (the
value at its serialization point) and is visible to a CTA on XCD x from its
serialization plus the visibility latency from the writer's XCD to x, as a put's pair.

What a load reads is the latest write visible to it. Under nominal latencies a write's
visibility to a reader is its serialization plus one of three offsets (0 for the
reader's own writes, the same-XCD latency for its XCD's, the cross-XCD one for the
rest), and serializations only grow, so each class's visible times are sorted:
``_Seen`` finds the latest visible write by a bisection a class instead of walking back
through every write not yet visible (a grid barrier's counter holds hundreds, serialized
ahead of the clock). A jittered run draws a visibility each (writer, reader) pair, in
the order the walk meets them, and keeps the walk.

A wait re-reads when a write may change its next try: in an unfolded or jittered run
every write of the word wakes every wait on it (``change``); in a folded nominal run
(``watch``) only a write that becomes visible to the wait before the earliest write it
already knows of (or any, where it knows of none) does. Any other write leaves what its
next try reads, and when, as they were, and its wake cost an event a waiter a write: a
grid barrier of N CTAs made N x N of them a round.
"""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass, field
from heapq import heappop, heappush

import simpy

from kda_sim.engine.initial import StaleWait
from kda_sim.engine.sampler import Sampler
from kda_sim.protocol.counters import Pred, Wait


@dataclass(slots=True)
class Write:
    at: float  # its serialization
    value: int
    xcd: int
    cta: int
    rec: int  # index into the writer's track.puts
    seen: dict[int, float] = field(default_factory=dict)  # reader CTA -> visible at


@dataclass(slots=True)
class Waiting:
    """What a CTA stuck in a wait waits for (for the stuck report)."""

    op: Wait
    target: int
    seen: int
    item: int  # the ticket it runs, -1 outside a ticket loop


class _Seen:
    """One word's writes as nominal latencies show them to readers: each class of
    writes (a CTA's own; those from an XCD, read on it; those from the other XCDs, read
    on one) as (visible at, index into the history), both ascending. A write of the
    reader's XCD shows in its XCD's class at the same-XCD offset even when it is the
    reader's own: later than its own class says, so never visible there before it is,
    and never the earliest of what it has not seen (its own class has it earlier)."""

    __slots__ = ("cross", "far", "hist", "near", "ordered", "own", "same")

    def __init__(self, hist: list[Write], same: float, cross: float) -> None:
        self.hist = hist  # the word's history (Words.writes'), shared
        self.same, self.cross = same, cross
        self.own: dict[int, tuple[list[float], list[int]]] = {}  # by writer CTA
        self.near: dict[int, tuple[list[float], list[int]]] = {}  # by writer XCD
        self.far: dict[int, tuple[list[float], list[int]]] = {}  # by reader XCD, lazily
        self.ordered = True  # serializations never went back (else: the walk)
        for i, w in enumerate(hist):
            self.add(i, w)

    def add(self, i: int, w: Write) -> None:
        hist = self.hist
        if i and w.at < hist[i - 1].at:
            self.ordered = False
        vis, idx = self.own.setdefault(w.cta, ([], []))
        vis.append(w.at)
        idx.append(i)
        vis, idx = self.near.setdefault(w.xcd, ([], []))
        vis.append(w.at + self.same)
        idx.append(i)
        for x, (vis, idx) in self.far.items():
            if x != w.xcd:
                vis.append(w.at + self.cross)
                idx.append(i)

    def _far(self, xcd: int) -> tuple[list[float], list[int]]:
        got = self.far.get(xcd)
        if got is None:
            cross = self.cross
            pairs = [(w.at + cross, i) for i, w in enumerate(self.hist) if w.xcd != xcd]
            got = self.far[xcd] = ([v for v, _ in pairs], [i for _, i in pairs])
        return got

    def latest(self, cta: int, xcd: int, at: float) -> tuple[int, float]:
        """The index of the latest write visible at ``at`` to ``cta`` on ``xcd`` (-1:
        none), and when the earliest later one becomes visible (inf: none)."""
        empty: tuple[list[float], list[int]] = ([], [])
        classes = (self.own.get(cta, empty), self.near.get(xcd, empty), self._far(xcd))
        best = -1
        for vis, idx in classes:
            k = bisect_right(vis, at)
            if k and idx[k - 1] > best:
                best = idx[k - 1]
        nxt = float("inf")
        for vis, idx in classes:
            j = bisect_right(idx, best)
            if j < len(vis) and vis[j] < nxt:
                nxt = vis[j]
        return best, nxt


def _process(events: list[simpy.Event]) -> None:
    """Trigger and process each of ``events`` now, in order: what processing one event
    they all wait on does to its callbacks (a condition's check, a process's resume)."""
    for ev in events:
        ev._ok, ev._value = True, None
        callbacks, ev.callbacks = ev.callbacks, None
        for callback in callbacks:
            callback(ev)


class _Watch:
    """The folded nominal waits on one word (``Words.watch``): each reader XCD's as a
    heap on the earliest visibility each knows of (largest first, so a write pops those
    it comes before), and the CTAs' live ones (a popped or replaced entry is dead)."""

    __slots__ = ("by_xcd", "live", "seq")

    def __init__(self) -> None:
        self.by_xcd: dict[int, list[tuple[float, int, int, simpy.Event]]] = {}
        self.live: dict[int, tuple[float, int, simpy.Event]] = {}  # CTA -> (nxt, seq, event)
        self.seq = 0  # registrations so far: the order a write wakes its waits in

    def due(self, w: Write, same: float, cross: float) -> list[simpy.Event]:
        """The waits write ``w`` may change, popped, in the order they registered."""
        live = self.live
        out: list[tuple[int, simpy.Event]] = []
        for x, heap in self.by_xcd.items():
            vis = w.at + (same if x == w.xcd else cross)  # as _Seen's classes compute it
            while heap and -heap[0][0] > vis:
                _, seq, cta, ev = heappop(heap)
                got = live.get(cta)
                if got is not None and got[2] is ev:
                    del live[cta]
                    out.append((seq, ev))
        own = live.get(w.cta)  # a CTA sees its own write at its serialization
        if own is not None and own[0] > w.at:
            del live[w.cta]
            out.append((own[1], own[2]))
        out.sort(key=lambda e: e[0])
        return [ev for _, ev in out]


class Words:
    def __init__(
        self, env: simpy.Environment, sampler: Sampler, initial: dict[int, int] | None = None
    ) -> None:
        self.env = env
        self.sampler = sampler
        self.initial: dict[int, int] = initial or {}  # values left before the launch
        self.value: dict[int, int] = dict(self.initial)  # the value at the serialization point
        self.writes: dict[int, list[Write]] = {}
        self.free: dict[int, float] = {}  # when the word's serialization point is free
        self.changed: dict[int, simpy.Event] = {}  # fired by the word's next write
        self.waiting: dict[int, Waiting] = {}  # CTA -> its wait, while it waits
        self.stale: list[StaleWait] = []  # waits passed on an initial value
        self.rebased: set[int] = set()  # words reset or exchanged in this launch
        # nominal latencies (drawn nothing): seen by bisection (_Seen), a word once read
        self.bisect = not sampler.jitter and sampler.nominal_visibility[0] >= 0.0
        self.by_class: dict[int, _Seen] = {}
        self.watches: dict[int, _Watch] = {}  # a folded nominal run's waits (watch)

    def arrive(self, cell: int, xcd: int, at: float) -> float:
        """When a write from ``xcd`` arriving at ``at`` is serialized (and the word held)."""
        hist = self.writes.get(cell)
        if hist and hist[-1].xcd != xcd:
            vis = self.sampler.visibility
            at += max(0.0, vis(hist[-1].xcd, xcd) - vis(xcd, xcd))
        s = max(at, self.free.get(cell, 0.0))
        self.free[cell] = s + self.sampler.latency("atomic_serial")
        return s

    def write(self, cell: int, value: int, w: Write) -> None:
        self.value[cell] = value
        hist = self.writes.setdefault(cell, [])
        hist.append(w)
        index = self.by_class.get(cell)
        if index is not None:
            index.add(len(hist) - 1, w)
        ev = self.changed.pop(cell, None)
        if ev is not None:
            ev.succeed()
        watch = self.watches.get(cell)
        if watch is not None and watch.live:
            due = watch.due(w, *self.sampler.nominal_visibility)
            if due:  # one event wakes them all, in order, as the word's ``change`` would
                group = self.env.event()
                group.callbacks.append(lambda _ev: _process(due))
                group.succeed()

    def early(self, cell: int, seen: int, pred: Pred, target: int, read_initial: bool) -> bool:
        """Whether a wait that read ``seen`` passed only thanks to the value the word held
        when the launch started: counted from 0 (no reset or exchange since), the
        predicate would not hold. A read of that value itself (``read_initial``: no write
        of this launch visible to it yet) counts from 0 whatever was written since."""
        left = self.initial.get(cell, 0)
        rebased = cell in self.rebased and not read_initial
        return bool(left) and not rebased and not pred.holds(seen - left, target)

    def watch(self, cell: int, cta: int, xcd: int, nxt: float) -> simpy.Event:
        """An event the next write of ``cell`` that ``cta`` on ``xcd`` sees before ``nxt``
        fires (any write, ``nxt`` inf): a folded nominal run's ``change``, for one wait."""
        watch = self.watches.get(cell)
        if watch is None:
            watch = self.watches[cell] = _Watch()
        ev = self.env.event()
        watch.seq += 1
        watch.live[cta] = (nxt, watch.seq, ev)
        heappush(watch.by_xcd.setdefault(xcd, []), (-nxt, watch.seq, cta, ev))
        return ev

    def unwatch(self, cell: int, cta: int) -> None:
        """``cta``'s wait on ``cell`` has passed: no write wakes it."""
        watch = self.watches.get(cell)
        if watch is not None:
            watch.live.pop(cta, None)

    def change(self, cell: int) -> simpy.Event:
        ev = self.changed.get(cell)
        if ev is None:
            ev = self.changed[cell] = self.env.event()
        return ev

    def _visible(self, w: Write, cta: int, xcd: int) -> float:
        if w.cta == cta:  # a CTA reads its own writes of a word in program order
            return w.at
        t = w.seen.get(cta)
        if t is None:  # drawn once a reader (jittered runs draw each anew)
            t = w.seen[cta] = w.at + self.sampler.visibility(w.xcd, xcd)
        return t

    def seen(self, cell: int, cta: int, xcd: int, at: float) -> tuple[int, Write | None, float]:
        """The value a load issued at ``at`` by ``cta`` on ``xcd`` reads (the latest write
        in serialization order that is visible by then, the launch's initial value before
        any), that write, and
        when the next later write known now becomes visible to it (inf: none)."""
        hist = self.writes.get(cell, ())
        if self.bisect and hist:
            index = self.by_class.get(cell)
            if index is None:
                same, cross = self.sampler.nominal_visibility
                index = self.by_class[cell] = _Seen(hist, same, cross)
            if index.ordered:
                i, nxt = index.latest(cta, xcd, at)
                if i < 0:
                    return self.initial.get(cell, 0), None, nxt
                return hist[i].value, hist[i], nxt
        nxt = float("inf")
        for w in reversed(hist):
            t = self._visible(w, cta, xcd)
            if t <= at:
                return w.value, w, nxt
            nxt = min(nxt, t)
        return self.initial.get(cell, 0), None, nxt
