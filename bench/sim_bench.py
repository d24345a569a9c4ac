"""Benchmark: one simulated launch against SimPy's own bare event rate, on this machine.

    python bench/sim_bench.py [--R 4 --L 2 --gpu mi355x --repeat 7]

Prints the wall and CPU time of one launch (protocol built and cached, as in the app and
the sweep; and cold, building the protocol and its hand-off table too, each part timed), the
events it schedules (and the HBM server's joins and wakes, made as calls, no event), and
events a second against SimPy's bare rate: after each launch, bare SimPy runs as many
``env.timeout(1)`` (250 processes), so both see the same load on a shared machine; best
against best. The engine folds events (``fold_events``), so the
rate counts the events of the same launch unfolded (one SimPy event for each, as the
engine before folding scheduled; issue 40 counts speed in those): the ratio is that count
over the launch's time, against the bare rate. The goals: one launch in 30 ms or less on
a quiet machine, a cold one (protocol and hand-off table built first) in 0.1 s or less,
and the launch at half the bare rate or better.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import simpy

from kda_sim.engine import SimResult, simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.kda import kda_template
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.protocol.handoffs import handoffs_of


class Events(NamedTuple):
    """A run's events, as this benchmark counts them (``growth_bench.py`` too)."""

    unfolded: int  # scheduled by the same run unfolded (fold_events=False): the rate's count
    scheduled: int  # SimPy events the folded engine schedules
    calls: int  # the folded engine's HBM joins and wakes, made as calls (no event)


def events_of(folded: Sequence[SimResult], unfolded: Sequence[SimResult]) -> Events:
    """The events of one run (a launch, or each launch of a host sequence) from its
    folded results and those of the same run unfolded."""
    return Events(
        sum(r.events for r in unfolded),
        sum(r.events for r in folded),
        sum(r.calls for r in folded),
    )


def bare_simpy_s(events: int, procs: int = 250) -> float:
    """Seconds bare SimPy takes for about ``events`` timeouts (``procs`` processes): the
    rate a launch's events are measured against, in the same run."""
    env = simpy.Environment()
    steps = -(-events // procs)

    def tick(env: simpy.Environment) -> Iterator[simpy.Event]:
        for _ in range(steps):
            yield env.timeout(1)

    for _ in range(procs):
        env.process(tick(env))
    t = time.perf_counter()
    env.run()
    return time.perf_counter() - t


def bare_simpy_rate(procs: int = 250, steps: int = 2000) -> float:
    return procs * steps / bare_simpy_s(procs * steps, procs)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--R", type=int, default=4)
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--gpu", default="mi355x")
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    cfg, prof = LaunchConfig(a.R, a.L), load_profile(a.gpu)

    build_launch.cache_clear()
    kda_template.cache_clear()  # the kda tasks' template, made with the protocol
    handoffs_of.cache_clear()
    # wall and CPU time (the CPU's moves less with other work on a shared machine)
    marks = [(time.perf_counter(), time.process_time())]
    build_launch(cfg)  # the protocol (K1's programs)
    marks.append((time.perf_counter(), time.process_time()))
    handoffs_of(cfg)  # its hand-off table (the programs cached by now)
    marks.append((time.perf_counter(), time.process_time()))
    res = simulate(cfg, prof)
    marks.append((time.perf_counter(), time.process_time()))
    (t0, c0), (t1, c1), (t2, c2), (t3, c3) = marks
    cold = t3 - t0
    ev = events_of([res], [simulate(cfg, prof, fold_events=False)])
    unfolded = ev.unfolded  # the events the rate counts
    warm, warm_cpu, bares = [], [], []
    for _ in range(a.repeat):
        t, c = time.perf_counter(), time.process_time()
        res = simulate(cfg, prof)
        warm.append(time.perf_counter() - t)
        warm_cpu.append(time.process_time() - c)
        bares.append(bare_simpy_rate(steps=-(-unfolded // 250)))
    best, med = min(warm), statistics.median(warm)
    bare = max(bares)
    rate = unfolded / best
    print(f"{prof.name} {cfg.label()}: makespan {res.timeline.makespan / 1e3:.2f} us")
    print(
        f"one launch: best {best * 1e3:.1f} ms, median {med * 1e3:.1f} ms (protocol cached); "
        f"cold {cold * 1e3:.1f} ms (protocol {(t1 - t0) * 1e3:.1f}, hand-off table "
        f"{(t2 - t1) * 1e3:.1f}, first launch {(t3 - t2) * 1e3:.1f})"
    )
    print(
        f"one launch, CPU time: best {min(warm_cpu) * 1e3:.1f} ms, median "
        f"{statistics.median(warm_cpu) * 1e3:.1f} ms (protocol cached)"
    )
    print(
        f"cold, CPU time: {(c3 - c0) * 1e3:.1f} ms (protocol {(c1 - c0) * 1e3:.1f}, hand-off "
        f"table {(c2 - c1) * 1e3:.1f}, first launch {(c3 - c2) * 1e3:.1f}); goal 100 ms: "
        f"{'met' if t3 - t0 <= 0.1 else 'NOT met'}"
    )
    print(
        f"events {unfolded} unfolded (folded: {ev.scheduled} scheduled, {ev.calls} HBM joins "
        f"and wakes as calls): {rate / 1e6:.2f} M "
        f"events/s; SimPy bare {bare / 1e6:.2f} M events/s, same run ({rate / bare:.1%} of "
        f"bare; goal 50 %: {'met' if rate >= bare / 2 else 'NOT met'})"
    )
    print(f"one launch, goal 30 ms (a quiet machine): {'met' if best <= 0.03 else 'NOT met'}")


if __name__ == "__main__":
    main()
