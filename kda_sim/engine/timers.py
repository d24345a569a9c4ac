"""Events scheduled at an exact time, made without SimPy's ``Event`` and ``Timeout``
frames: the engine schedules thousands a launch (a CTA's wakes, the HBM server's timers,
the starts of transfers), and SimPy's loop asks of each only ``callbacks`` and ``_ok``
(a process that yields one, ``_value`` too)."""

from __future__ import annotations

from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

import simpy
from simpy.events import NORMAL


class Timer:
    """A scheduled event, triggered (ok, no value) when made; ``at`` is free for its
    callbacks (the HBM server keeps the time it was armed for there)."""

    __slots__ = ("at", "callbacks")
    _ok = True
    _value = None


class Wake:
    """An event one process waits on, triggered by ``fire``: a CTA's wake when the last of
    what it waits for lands (2,000 a K1 launch), without ``Event``'s and ``succeed``'s
    frames. Made empty (``wake``); ``_ok`` and ``_value`` are set when it fires."""

    __slots__ = ("_ok", "_value", "callbacks")


def wake() -> Wake:
    ev = Wake()
    ev.callbacks = []
    return ev


def fire(env: simpy.Environment, ev: Wake) -> None:
    """Trigger ``ev`` now, as ``Event.succeed`` does: scheduled at ``now + 0`` (SimPy's
    delay of 0, kept for the time's type), normal priority, the next event number."""
    ev._ok, ev._value = True, None
    heappush(env._queue, (env._now + 0, NORMAL, next(env._eid), ev))


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


def run(env: simpy.Environment) -> None:
    """``env.run()`` with no ``until``: SimPy's ``Environment.step`` inlined into its loop
    (one frame less an event, 8,000 a K1 launch), every event processed as ``step``
    processes it: popped in (time, priority, number) order, its callbacks called, and an
    event that failed with no process to take its failure raised again."""
    queue = env._queue
    pop = heappop
    while queue:
        env._now, _, _, event = pop(queue)
        callbacks, event.callbacks = event.callbacks, None
        for callback in callbacks:
            callback(event)
        if not event._ok and not hasattr(event, "_defused"):
            # as step: a copy of the failure, with the original as its cause
            exc = type(event._value)(*event._value.args)
            exc.__cause__ = event._value
            raise exc
