"""HBM as one server that every stream shares fairly (processor sharing).

Each active stream gets ``min(cap, bandwidth / n)`` bytes a ns. With one cap for all
streams every stream advances at the same rate, so a single virtual clock (bytes
served to any one stream since the start) orders all finishes: a join or a finish
costs O(log n) and one timer, however many streams are in flight.

Given a heap of calls (``timers.call_at``; a folded run's), a stream can join at a later
time without a timer of its own (``join_at``, a call on that heap), and the server keeps
its one armed wake itself (``next``), not on SimPy's queue, which ``timers.run`` (given
the server) takes in its place: each join and wake is numbered as the event it replaces,
so it runs at the same place among the ties of its instant, and the server's float
arithmetic runs in the same order with the same operands.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from heapq import heappop, heappush

import simpy
from simpy.events import NORMAL, Event

from kda_sim.engine.timers import Call, Timer, Wake, at_time

# the rate tables (``SharedBandwidth._rates``) of the last few (bandwidth, cap) pairs: a
# warm launch finds its table grown, where each launch grew its own one n at a time (a
# K1 R=4 L=2 launch: 400 ``IndexError``s raised and caught); a table's floats depend on
# the pair alone, so servers share it. A few, not all: a fit tries a bandwidth a launch
_KEPT = 8
_INF = float("inf")
_rate_tables: dict[tuple[float, float], list[float]] = {}


def _rates_for(bytes_per_ns: float, cap_per_stream: float) -> list[float]:
    key = (bytes_per_ns, cap_per_stream)
    hit = _rate_tables.get(key)
    if hit is None:
        if len(_rate_tables) >= _KEPT:  # the oldest made goes
            del _rate_tables[next(iter(_rate_tables))]
        hit = _rate_tables[key] = [0.0]
    return hit


class SharedBandwidth:
    def __init__(
        self,
        env: simpy.Environment,
        bytes_per_ns: float,
        cap_per_stream: float,
        calls: list[Call] | None = None,
    ) -> None:
        self.env = env
        # where the server's timers go: None, SimPy's queue (``Timer`` events); else this
        # heap of calls (``timers.call_at``), which ``timers.run`` must be given
        self.calls = calls
        self.bw = bytes_per_ns
        self.cap = cap_per_stream
        self._v = 0.0  # virtual bytes served to each active stream
        self._t = env.now
        # (virtual finish, arrival number, what a finish calls): an event's ``succeed``, or
        # a stream's own callback (``stream``)
        self._heap: list[tuple[float, int, Callable[[], object]]] = []
        self._seq = itertools.count()
        self._wake_at: float | None = None
        # given calls, the one wake armed (a later arming for earlier replaces it): its
        # time and its (time, priority, event number), which ``timers.run`` compares with
        # its heaps' heads and then calls ``wake``; not an entry of the calls' heap, where
        # a wake (2,400 a K1 launch) sifted through the 150 joins waiting there and one
        # replaced stayed until it came up (``_INF``: none armed)
        self.next_t = _INF
        self.next: tuple[float, int, int] | None = None
        self.armed = 0  # event numbers the wakes took (``timers.run`` counts them as calls)
        # the CTAs' wakes its stream ends fire at this instant (``timers.fire_ready``, a
        # folded run's CTA inlines it), which ``timers.run`` takes in their numbers' places
        # (about 2,000 a K1 launch: each was a push and a pop of SimPy's queue). Here, not
        # with the launch's ``World``: a thirtieth attribute there made each of its reads
        # slower (1.3 M more instructions a launch)
        self.ready: list[Wake] = []
        self.bytes_total = 0
        # the bound methods the heap of calls holds, made once (a join and a wake each
        # made one: 4,700 a K1 launch)
        self._stream_call = self.stream
        # each stream's rate with n in flight, ``_rates[n]``: ``min(cap, bw / n)`` as the
        # share and compare made it (the same float), looked up where a join and a wake
        # made it again (4,700 a K1 launch); grown by ``_rate`` as a larger n first comes,
        # and kept for the next server of the same bandwidth and cap (``_rates_for``)
        self._rates = _rates_for(bytes_per_ns, cap_per_stream)

    def transfer(self, nbytes: int) -> simpy.Event:
        """An event that fires when ``nbytes`` have streamed through."""
        done = Event(self.env)
        if nbytes <= 0:
            done.succeed()
            return done
        self.stream(nbytes, done.succeed)
        return done

    def join_at(self, when: float, nbytes: int, then: Callable[[], object]) -> None:
        """``stream(nbytes, then)`` at ``when`` (a transfer's latency from now), numbered
        as a timer made now for it would be, but no event (``timers.call_at``): the join
        runs at that timer's place among the ties at ``when``, so the server applies its
        joins and wakes in the order and with the operands an unfolded run does. Needs
        the server's ``calls``."""
        calls = self.calls
        assert calls is not None, "join_at needs the server's calls (timers.run's)"
        # timers.call_at, inlined (a frame less a transfer)
        heappush(calls, (when, NORMAL, next(self.env._eid), self._stream_call, nbytes, then))

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
        rates = self._rates
        if n:  # with no stream in flight the virtual clock stands still
            v += rates[n] * (now - self._t)
            self._v = v
        self._t = now
        self.bytes_total += nbytes
        heappush(heap, (v + nbytes, next(self._seq), then))
        try:
            rate = rates[n + 1]
        except IndexError:  # more streams than ever before
            rate = self._rate(n + 1)
        wait = (heap[0][0] - v) / rate
        at = now + (wait if wait > 0.0 else 0.0)
        if self._wake_at is not None and self._wake_at <= at:
            return
        self._arm(now, at)

    def _rate(self, n: int) -> float:
        """Each stream's rate with ``n`` in flight, the table grown to it."""
        rates = self._rates
        while len(rates) <= n:
            share = self.bw / len(rates)
            rates.append(share if share < self.cap else self.cap)
        return rates[n]

    def _arm(self, now: float, at: float) -> None:
        """A timer for ``at`` where SimPy's ``Timeout(at - now)`` would land (``now + (at -
        now)``, one event number), with no Timeout's frames and closure (2,400 a launch):
        a ``Timer`` on SimPy's queue, or a call on the server's heap (``calls``)."""
        self._wake_at = at
        if self.calls is None:
            at_time(self.env, now + (at - now), self._timer).at = at
        else:
            when = now + (at - now)
            self.next_t, self.next = when, (when, NORMAL, next(self.env._eid))
            self.armed += 1

    def _timer(self, timer: Timer) -> None:
        if self._wake_at == timer.at:  # else superseded by an earlier timer
            self.wake()

    def wake(self) -> None:
        """The armed wake (``_arm``): advance the virtual clock, finish every stream it
        has served, re-arm (as in ``stream``)."""
        self._wake_at = None
        # disarmed; its key kept while the streams it ends call back (a CTA's drain reads
        # it: cta._woke_after), then None unless armed again
        self.next_t = _INF
        now = self.env._now
        heap = self._heap
        n = len(heap)
        v = self._v
        rates = self._rates  # (a stream has made every n the heap has held)
        if n:
            v += rates[n] * (now - self._t)
            self._v = v
        self._t = now
        eps = 1e-6 * (v if v > 1.0 else 1.0)
        while heap and heap[0][0] <= v + eps:
            heappop(heap)[2]()
        if not heap:
            self.next = None
            return
        wait = (heap[0][0] - v) / rates[len(heap)]
        at = now + (wait if wait > 0.0 else 0.0)
        if self._wake_at is not None and self._wake_at <= at:
            return
        self._wake_at = at  # (``_arm``, inlined: a wake re-arms all but every time)
        if self.calls is None:
            at_time(self.env, now + (at - now), self._timer).at = at
        else:
            when = now + (at - now)
            self.next_t, self.next = when, (when, NORMAL, next(self.env._eid))
            self.armed += 1
