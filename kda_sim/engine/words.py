"""Counter and flag words as a simulated launch sees them.

Every write of a word (an atomic, a reset) is serialized where the word lives: it
arrives half an ``atomic`` round trip after it issues, plus, when the word's last write
came from another XCD, the extra a cross-XCD hand-off costs over a same-XCD one (the
line moves; 0 on a GPU of one XCD); it is served after the word's previous write, which
holds the word ``atomic_serial`` ns. A write's value is the one an atomic returns (the
value at its serialization point) and is visible to a CTA on XCD x from its
serialization plus the visibility latency from the writer's XCD to x, as a put's pair.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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
        self.writes.setdefault(cell, []).append(w)
        ev = self.changed.pop(cell, None)
        if ev is not None:
            ev.succeed()

    def early(self, cell: int, seen: int, pred: Pred, target: int, read_initial: bool) -> bool:
        """Whether a wait that read ``seen`` passed only thanks to the value the word held
        when the launch started: counted from 0 (no reset or exchange since), the
        predicate would not hold. A read of that value itself (``read_initial``: no write
        of this launch visible to it yet) counts from 0 whatever was written since."""
        left = self.initial.get(cell, 0)
        rebased = cell in self.rebased and not read_initial
        return bool(left) and not rebased and not pred.holds(seen - left, target)

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
        nxt = float("inf")
        for w in reversed(hist):
            t = self._visible(w, cta, xcd)
            if t <= at:
                return w.value, w, nxt
            nxt = min(nxt, t)
        return self.initial.get(cell, 0), None, nxt
