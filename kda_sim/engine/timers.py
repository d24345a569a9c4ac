"""Events scheduled at an exact time, made without SimPy's ``Event`` and ``Timeout``
frames: the engine schedules thousands a launch (a CTA's wakes and sleeps), and SimPy's
loop asks of each only ``callbacks`` and ``_ok`` (a process that yields one, ``_value``
too). And calls at a time that are no event at all (``call_at``): the HBM server's joins
(2,300 a K1 launch), each numbered as SimPy numbers an event, so that it takes the place
among the ties of its instant that an event made there would, but kept on a heap of
their own that ``run`` merges with SimPy's queue; and the server's wakes (2,400), one
armed at a time and numbered the same way, which ``run`` takes from the server itself
(``Waker``) as a third head beside the two heaps, with the CTA wakes its stream ends fire
at the present instant (``fire_ready``), taken in their numbers' places without a heap."""

from __future__ import annotations

from collections.abc import Callable, Generator
from heapq import heappop, heappush
from typing import Any, Protocol

import simpy
from simpy.events import NORMAL

_INF = float("inf")


class Timer:
    """A scheduled event, triggered (ok, no value) when made; ``at`` is free for its
    callbacks (the HBM server keeps the time it was armed for there)."""

    __slots__ = ("at", "callbacks")
    _ok = True
    _value = None


class Wake:
    """An event one process waits on, triggered by ``fire``: a CTA's wake when the last of
    what it waits for lands (2,000 a K1 launch), without ``Event``'s and ``succeed``'s
    frames. Made empty (``wake``); ``_ok`` and ``_value`` are set when it fires, and its
    event number (``eid``) where it is fired onto a list (``fire_ready``)."""

    __slots__ = ("_ok", "_value", "callbacks", "eid")


def wake() -> Wake:
    ev = Wake()
    ev.callbacks = []
    return ev


def fire(env: simpy.Environment, ev: Wake) -> None:
    """Trigger ``ev`` now, as ``Event.succeed`` does: scheduled at ``now + 0`` (SimPy's
    delay of 0, kept for the time's type), normal priority, the next event number."""
    ev._ok, ev._value = True, None
    heappush(env._queue, (env._now + 0, NORMAL, next(env._eid), ev))


def fire_ready(env: simpy.Environment, ready: list[Wake], ev: Wake) -> None:
    """Trigger ``ev`` now as ``fire`` does (the next event number), onto ``ready``, not
    SimPy's queue: the wakes fired at this instant in number order, which ``run`` given
    them takes each in its number's place among the heaps' heads (a folded run's CTA
    wakes, 2,000 a K1 launch: each was a push and a pop of SimPy's queue)."""
    ev._ok, ev._value = True, None
    ev.eid = next(env._eid)
    ready.append(ev)


class Proc:
    """A process driven without SimPy's ``Process``: a folded run's CTAs and dispatcher.
    It takes the event numbers SimPy's would (its start's and its end's, ``process``),
    but its start is no event (``resume(STARTED)`` where its
    ``Initialize`` would run: the dispatcher's step that made it, which yields its next
    timer first) and its end is fired onto the server's ``ready`` list (``fire_ready``),
    not pushed onto SimPy's queue; a resume is SimPy's ``_resume`` without what the
    engine never reads (the active process, the target). An exception inside the
    generator is raised from ``run`` at once, where SimPy's raises a copy when the failed
    process's event comes up. Itself the event of its end, as a ``Process`` is: its
    ``callbacks`` run there (the dispatcher's release of the CTA's unit)."""

    __slots__ = ("_ok", "_value", "callbacks", "eid", "env", "gen", "ready")
    _ok: bool
    _value: Any
    callbacks: list[Callable[[Any], object]]  # (None once it has run: SimPy's mark)
    eid: int
    env: simpy.Environment
    gen: Generator[Any, Any, Any]
    ready: list[Any]  # the server's (``Waker.ready``): its end is fired there

    def resume(self, event: Any) -> None:
        gen = self.gen
        while True:
            try:
                if event._ok:
                    event = gen.send(event._value)
                else:  # as SimPy's: a copy of the failure thrown in
                    event._defused = True
                    exc = type(event._value)(*event._value.args)
                    exc.__cause__ = event._value
                    event = gen.throw(exc)
            except StopIteration as stop:  # ended: its end fired now (fire_ready, inlined)
                self._ok, self._value = True, stop.value
                self.eid = next(self.env._eid)
                self.ready.append(self)
                return
            callbacks = event.callbacks
            if callbacks is not None:
                callbacks.append(self.resume)
                return


# what a ``Proc``'s first resume is given: its start (an ``Initialize``'s ok and value)
STARTED = Timer()


def process(env: simpy.Environment, gen: Any, ready: list[Any]) -> Proc:
    """A ``Proc`` of ``gen``, not started (its ``resume(STARTED)`` starts it), its
    ``Initialize``'s event number taken now as ``env.process`` takes it."""
    proc = Proc()
    proc.callbacks, proc.env, proc.gen, proc.ready = [], env, gen, ready
    next(env._eid)
    return proc


def at_time(env: simpy.Environment, when: float, *callbacks: Callable[[Any], object]) -> Timer:
    """A timer at ``when`` exactly (``env.schedule`` takes a delay from now, and ``now +
    (when - now)`` may round away from ``when``), calling ``callbacks`` there; one event
    number, as a Timeout takes."""
    timer = Timer()
    timer.callbacks = list(callbacks)
    heappush(env._queue, (when, NORMAL, next(env._eid), timer))
    return timer


def schedule(env: simpy.Environment, ev: simpy.Event, when: float) -> None:
    """Schedule triggered ``ev`` at time ``when`` exactly (see ``at_time``)."""
    heappush(env._queue, (when, NORMAL, next(env._eid), ev))


# a call made at a time with no event (``call_at``): (time, priority, event number, fn, a,
# b), ``fn(a, b)`` called there; compared with SimPy's (time, priority, number, event) by
# its first three, which no two entries share (the numbers are SimPy's own)
Call = tuple[float, int, int, Callable[[Any, Any], object], Any, Any]


def call_at(
    env: simpy.Environment,
    calls: list[Call],
    when: float,
    fn: Callable[[Any, Any], object],
    a: Any,
    b: Any,
) -> None:
    """``fn(a, b)`` at ``when`` exactly, where an event made now at ``when`` (``at_time``)
    would be processed: the same event number, so the same place among the ties of that
    instant, but no event (no ``Timer``, no callbacks list, no entry on SimPy's queue).
    Only ``run`` given ``calls`` makes it."""
    heappush(calls, (when, NORMAL, next(env._eid), fn, a, b))


class Waker(Protocol):
    """What ``run`` asks of a server that keeps one pending wake outside the heaps (the
    HBM server given calls, ``SharedBandwidth``): its time (``inf``: none), its (time,
    priority, event number) to order it among ties, the call, how many event numbers
    its wakes have taken; and the wakes its calls fire at this instant (``ready``,
    ``fire_ready``)."""

    next_t: float
    next: tuple[float, int, int] | None
    armed: int
    ready: list[Wake]

    def wake(self) -> None: ...


class _Idle:
    """``run``'s server where it is given none: no wake is ever armed, nothing is fired
    onto its ``ready``."""

    next_t: float = _INF
    next: tuple[float, int, int] | None = None
    armed: int = 0

    def __init__(self) -> None:
        self.ready: list[Wake] = []

    def wake(self) -> None:
        raise AssertionError("no wake is armed")


def run(
    env: simpy.Environment, calls: list[Call] | None = None, server: Waker | None = None
) -> int:
    """``env.run()`` with no ``until``: SimPy's ``Environment.step`` inlined into its loop
    (one frame less an event, 8,000 a K1 launch), every event processed as ``step``
    processes it: popped in (time, priority, number) order, its callbacks called, and an
    event that failed with no process to take its failure raised again. ``calls``
    (``call_at``'s heap) are taken in the same order among the events: each before the
    first event whose (time, priority, number) is greater; so is ``server``'s pending
    wake, a third head (its time compared first as a float, a tuple's compare in C
    costing some ten float compares; its whole key only on a tie), and so are the wakes
    fired onto its ``ready`` at this instant (``fire_ready``): the first goes unless a head
    at this instant has a lower number. Returns how many calls it made (event numbers
    that were no event), the server's wakes counted by the numbers they took."""
    if calls is None:
        calls = []
    if server is None:
        server = _Idle()
    queue = env._queue
    pop = heappop
    made = 0
    ready = server.ready
    while True:
        if ready:
            now = env._now
            event = ready[0]
            e = event.eid
            if not (
                (queue and queue[0][0] == now and queue[0] < (now, NORMAL, e))
                or (calls and calls[0][0] == now and calls[0] < (now, NORMAL, e))
                or (server.next_t == now and server.next < (now, NORMAL, e))
            ):
                del ready[0]
                callbacks, event.callbacks = event.callbacks, None  # type: ignore[assignment]
                for callback in callbacks:
                    callback(event)
                continue
        wt = server.next_t
        if queue:  # the head of the two heaps, then the server's wake against it
            head = queue[0]
            call = calls and calls[0] < head
            if call:
                head = calls[0]
        elif calls:
            head, call = calls[0], True
        elif wt < _INF:
            env._now = wt
            server.wake()
            continue
        else:
            return made + server.armed
        t = head[0]
        if wt < t or (wt == t and server.next < head):  # type: ignore[operator]
            env._now = wt
            server.wake()
        elif call:
            env._now, _, _, fn, a, b = pop(calls)
            fn(a, b)
            made += 1
        else:
            env._now, _, _, event = pop(queue)
            callbacks, event.callbacks = event.callbacks, None
            for callback in callbacks:
                callback(event)
            if not event._ok and not hasattr(event, "_defused"):
                # as step: a copy of the failure, with the original as its cause
                exc = type(event._value)(*event._value.args)
                exc.__cause__ = event._value
                raise exc
