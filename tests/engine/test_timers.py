"""The engine's frameless events and its loop: a timer lands at the time asked for, a
Wake fires as ``Event.succeed`` would, and ``timers.run`` processes a queue in the order
SimPy's ``Environment.run`` does, raising a failed process's error as it does."""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

import pytest
import simpy

from kda_sim.engine import timers


def test_a_timer_lands_at_the_time_asked_not_now_plus_a_delay() -> None:
    env = simpy.Environment(initial_time=0.2)
    when = 0.9  # 0.2 + (0.9 - 0.2) is 0.8999999999999999
    assert env.now + (when - env.now) != when
    seen: list[float] = []
    timers.at_time(env, when, lambda _ev: seen.append(env.now))
    timers.run(env)
    assert seen == [when]


def _script(env: simpy.Environment, log: list[str], *, ours: bool) -> None:
    """Timers, timeouts, succeeded events and processes at tied and untied times, made
    with the engine's helpers (``ours``) or SimPy's own; each records when it ran."""

    def note(name: str) -> Callable[[Any], None]:
        return lambda _ev: log.append(f"{name}@{env.now}")

    def sleeper(name: str, delays: list[float]) -> Generator[Any, Any, None]:
        for d in delays:
            if ours:
                yield timers.at_time(env, env.now + d)
            else:
                yield env.timeout(d)
            log.append(f"{name}@{env.now}")

    def waiter(name: str) -> Generator[Any, Any, None]:
        ev: Any = timers.wake() if ours else env.event()
        waiting.append(ev)
        yield ev
        log.append(f"{name} woken@{env.now}")

    waiting: list[Any] = []
    for i, d in enumerate((2.0, 1.0, 2.0, 0.0, 1.0)):
        if ours:
            timers.at_time(env, env.now + d, note(f"t{i}"))
        else:
            env.timeout(d).callbacks.append(note(f"t{i}"))
    env.process(sleeper("a", [1.0, 1.0, 0.0]))
    env.process(sleeper("b", [2.0, 0.5]))
    env.process(waiter("w"))

    def wake_all(_ev: object) -> None:
        for ev in waiting:
            if ours:
                timers.fire(env, ev)
            else:
                ev.succeed()

    env.timeout(1.0).callbacks.append(wake_all)


def test_run_and_the_helpers_keep_simpy_order_and_event_numbers() -> None:
    mine: list[str] = []
    theirs: list[str] = []
    env_a, env_b = simpy.Environment(), simpy.Environment()
    _script(env_a, mine, ours=True)
    timers.run(env_a)
    _script(env_b, theirs, ours=False)
    env_b.run()
    assert mine == theirs
    assert "w woken@1.0" in mine
    assert next(env_a._eid) == next(env_b._eid)  # one event number each, as SimPy's


def _calls_script(env: simpy.Environment, calls: list[timers.Call] | None) -> list[str]:
    """Marks at tied and untied times, some made by others as they run, each a call on
    ``calls`` (``call_at``) or, without it, an event (``at_time``)."""
    log: list[str] = []

    def mark(name: str, then: float | None) -> None:
        log.append(f"{name}@{env.now}")
        if then is not None:  # made while running, numbered after what came before
            put(f"{name}'", env.now + then, None)

    def put(name: str, when: float, then: float | None) -> None:
        if calls is not None:
            timers.call_at(env, calls, when, mark, name, then)
        else:
            timers.at_time(env, when, lambda _ev: mark(name, then))

    for i, (when, then) in enumerate([(1.0, 0.0), (2.0, None), (1.0, 1.0), (0.0, 2.0)]):
        put(f"c{i}", when, then)
        timers.at_time(env, when, lambda _ev, i=i: log.append(f"e{i}@{env.now}"))
    return log


def test_calls_run_in_the_place_events_made_for_them_would() -> None:
    """Calls and events at tied times: each call runs where an event made at its moment
    would (its event number orders it among the ties), also once SimPy's queue is empty."""
    env_a, env_b = simpy.Environment(), simpy.Environment()
    calls: list[timers.Call] = []
    mine, theirs = _calls_script(env_a, calls), _calls_script(env_b, None)
    made = timers.run(env_a, calls)
    assert timers.run(env_b) == 0
    assert mine == theirs
    assert made == 7 and not calls  # four calls, three made by calls
    # made at 0 and at 1 for 2.0: after e1, made first; the queue empty by then
    assert mine[-3:] == ["e1@2.0", "c3'@2.0", "c2'@2.0"]
    assert next(env_a._eid) == next(env_b._eid)  # a number each, as an event's


def test_a_failed_process_raises_from_run_as_from_simpy() -> None:
    def broken(env: simpy.Environment) -> Generator[Any, Any, None]:
        yield env.timeout(1.0)
        raise ValueError("bad op")

    for runner in (timers.run, lambda env: env.run()):
        env = simpy.Environment()
        env.process(broken(env))
        with pytest.raises(ValueError, match="bad op") as info:
            runner(env)
        assert isinstance(info.value.__cause__, ValueError)  # SimPy's copy of the failure


class _NoServer:
    """A server with no wake armed (``timers.Waker``), for ``run``'s ``ready``."""

    next_t = float("inf")
    next = None
    armed = 0

    def __init__(self) -> None:
        self.ready: list[timers.Wake] = []

    def wake(self) -> None:
        raise AssertionError("no wake is armed")


def _wakes_script(
    env: simpy.Environment, calls: list[timers.Call], ready: list[timers.Wake] | None
) -> list[str]:
    """Three processes waiting on wakes, fired at one instant by timers and calls tied
    with others numbered before and after them; each woken process makes a timer at that
    instant too. ``ready``: the wakes fired onto it (``fire_ready``), else onto SimPy's
    queue (``fire``)."""
    log: list[str] = []
    wakes: dict[str, timers.Wake] = {}

    def waiter(name: str) -> Generator[Any, Any, None]:
        wakes[name] = ev = timers.wake()
        yield ev
        log.append(f"{name} woken@{env.now}")
        timers.at_time(env, env.now, lambda _ev: log.append(f"after {name}@{env.now}"))

    def mark(name: str, then: str | None) -> None:
        log.append(f"{name}@{env.now}")
        if then is None:
            return
        if ready is None:
            timers.fire(env, wakes[then])
        else:
            timers.fire_ready(env, ready, wakes[then])

    for name in ("w1", "w2", "w3"):
        env.process(waiter(name))
    timers.at_time(env, 1.0, lambda _ev: mark("t1", "w1"))
    timers.call_at(env, calls, 1.0, mark, "c1", "w2")
    timers.at_time(env, 1.0, lambda _ev: mark("t2", None))
    timers.call_at(env, calls, 1.0, mark, "c2", "w3")
    timers.at_time(env, 2.0, lambda _ev: mark("t3", None))
    return log


def test_wakes_fired_onto_ready_run_where_they_would_on_simpys_queue() -> None:
    """A wake fired onto ``ready`` runs after every event and call of its instant numbered
    before it and before those numbered after, as one fired onto SimPy's queue does."""
    env_a, env_b = simpy.Environment(), simpy.Environment()
    calls_a: list[timers.Call] = []
    calls_b: list[timers.Call] = []
    server = _NoServer()
    ready = server.ready
    mine = _wakes_script(env_a, calls_a, ready)
    theirs = _wakes_script(env_b, calls_b, None)
    made = timers.run(env_a, calls_a, server)
    assert made == timers.run(env_b, calls_b) == 2
    assert mine == theirs
    # w2 fired by c1 waits for t2 and c2, numbered before it; each woken one's timer after
    assert mine[:7] == ["t1@1.0", "c1@1.0", "t2@1.0", "c2@1.0"] + [
        f"w{i} woken@1.0" for i in (1, 2, 3)
    ]
    assert not ready and next(env_a._eid) == next(env_b._eid)


def test_a_proc_ends_onto_ready_with_its_value_and_raises_a_failure_at_once() -> None:
    """A ``Proc`` started by hand runs until it waits, resumes from its events, and at its
    end is fired onto the ready list with its return value, its callbacks run there; a
    failure inside it leaves ``run`` at once, itself, not SimPy's copy."""

    def body(env: simpy.Environment, fail: bool) -> Generator[Any, Any, str]:
        yield timers.at_time(env, 1.0)
        if fail:
            raise ValueError("bad op")
        return "done"

    ended: list[tuple[float, str]] = []
    for fail in (False, True):
        env = simpy.Environment()
        server = _NoServer()
        proc = timers.process(env, body(env, fail), server.ready)
        proc.callbacks.append(lambda ev, env=env: ended.append((env.now, ev._value)))
        proc.resume(timers.STARTED)
        if fail:
            with pytest.raises(ValueError, match="bad op") as info:
                timers.run(env, None, server)
            assert info.value.__cause__ is None
        else:
            timers.run(env, None, server)
            assert next(env._eid) == 3  # its start, its timer and its end, as a Process's
    assert ended == [(1.0, "done")]
