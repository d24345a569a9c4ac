"""HBM as one server that every stream shares fairly (processor sharing).

Each active stream gets ``min(cap, bandwidth / n)`` bytes a ns. With one cap for all
streams every stream advances at the same rate, so a single virtual clock (bytes
served to any one stream since the start) orders all finishes: a join or a finish
costs O(log n) and one timer, however many streams are in flight.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappop, heappush

import simpy
from simpy.events import Event

from kda_sim.engine.timers import Timer, at_time


class SharedBandwidth:
    def __init__(self, env: simpy.Environment, bytes_per_ns: float, cap_per_stream: float) -> None:
        self.env = env
        self.bw = bytes_per_ns
        self.cap = cap_per_stream
        self._v = 0.0  # virtual bytes served to each active stream
        self._t = env.now
        # (virtual finish, arrival number, what a finish calls): an event's ``succeed``, or
        # a stream's own callback (``stream``)
        self._heap: list[tuple[float, int, Callable[[], object]]] = []
        self._seq = itertools.count()
        self._wake_at: float | None = None
        self.bytes_total = 0

    def transfer(self, nbytes: int) -> simpy.Event:
        """An event that fires when ``nbytes`` have streamed through."""
        done = Event(self.env)
        if nbytes <= 0:
            done.succeed()
            return done
        self.stream(nbytes, done.succeed)
        return done

    def stream(self, nbytes: int, then: Callable[[], object]) -> None:
        """``then()`` is called when ``nbytes`` have streamed through, from the server's own
        wake: no event of its own (a folded engine's transfer, see ``CtaRun``).

        The stream joins: advance the virtual clock to now at the old rate, add the stream,
        and keep one timer for the earliest finish: a join only slows streams down, so a
        timer already set for earlier still fires first and re-arms then. (Inlined, with
        the timer's arming: this runs for every load and store.)"""
        if nbytes <= 0:
            then()
            return
        now = self.env._now
        heap = self._heap
        n = len(heap)
        v = self._v
        if n:  # with no stream in flight the virtual clock stands still
            share = self.bw / n
            v += (share if share < self.cap else self.cap) * (now - self._t)
            self._v = v
        self._t = now
        self.bytes_total += nbytes
        heappush(heap, (v + nbytes, next(self._seq), then))
        share = self.bw / (n + 1)
        wait = (heap[0][0] - v) / (share if share < self.cap else self.cap)
        at = now + (wait if wait > 0.0 else 0.0)
        if self._wake_at is not None and self._wake_at <= at:
            return
        self._wake_at = at
        # a timer for ``at`` where SimPy's ``Timeout(at - now)`` would land (``now + (at -
        # now)``, one event number), with no Timeout's frames and closure (2,400 a launch)
        at_time(self.env, now + (at - now), self._wake).at = at

    def _wake(self, timer: Timer) -> None:
        """Advance the virtual clock, finish every stream it has served, re-arm (as in
        ``stream``)."""
        if self._wake_at != timer.at:
            return  # superseded by an earlier timer
        self._wake_at = None
        now = self.env._now
        heap = self._heap
        n = len(heap)
        v = self._v
        if n:
            share = self.bw / n
            v += (share if share < self.cap else self.cap) * (now - self._t)
            self._v = v
        self._t = now
        eps = 1e-6 * (v if v > 1.0 else 1.0)
        while heap and heap[0][0] <= v + eps:
            heappop(heap)[2]()
        if not heap:
            return
        share = self.bw / len(heap)
        wait = (heap[0][0] - v) / (share if share < self.cap else self.cap)
        at = now + (wait if wait > 0.0 else 0.0)
        if self._wake_at is not None and self._wake_at <= at:
            return
        self._wake_at = at
        at_time(self.env, now + (at - now), self._wake).at = at  # (as in ``stream``)
