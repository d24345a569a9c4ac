"""Benchmark: one simulated launch against SimPy's own bare event rate, on this machine.

    python bench/sim_bench.py [--R 4 --L 2 --gpu mi355x --repeat 7]

Prints the wall time of one launch (protocol built and cached, as in the app and the
sweep; and cold, building the protocol too), the events it schedules, and events a
second against SimPy's bare rate (250 processes x 2000 ``env.timeout(1)``). The goal is
one launch in 0.1 s or less.
"""

from __future__ import annotations

import argparse
import statistics
import time

import simpy

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.protocol.handoffs import handoffs_of


def bare_simpy_rate(procs: int = 250, steps: int = 2000) -> float:
    env = simpy.Environment()

    def tick(env: simpy.Environment):
        for _ in range(steps):
            yield env.timeout(1)

    for _ in range(procs):
        env.process(tick(env))
    t = time.perf_counter()
    env.run()
    return procs * steps / (time.perf_counter() - t)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--R", type=int, default=4)
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--gpu", default="mi355x")
    ap.add_argument("--repeat", type=int, default=15)
    a = ap.parse_args()
    cfg, prof = LaunchConfig(a.R, a.L), load_profile(a.gpu)

    build_launch.cache_clear()
    handoffs_of.cache_clear()
    t = time.perf_counter()
    res = simulate(cfg, prof)
    cold = time.perf_counter() - t
    warm = []
    for _ in range(a.repeat):
        t = time.perf_counter()
        res = simulate(cfg, prof)
        warm.append(time.perf_counter() - t)
    best, med = min(warm), statistics.median(warm)
    bare = statistics.median(bare_simpy_rate() for _ in range(3))
    rate = res.events / best
    print(f"{prof.name} {cfg.label()}: makespan {res.timeline.makespan / 1e3:.2f} us")
    print(
        f"one launch: best {best * 1e3:.1f} ms, median {med * 1e3:.1f} ms (protocol cached); "
        f"cold {cold * 1e3:.1f} ms (protocol built)"
    )
    print(
        f"events {res.events}: {rate / 1e6:.2f} M events/s; SimPy bare {bare / 1e6:.2f} M "
        f"events/s ({rate / bare:.0%} of bare)"
    )
    print(f"goal 100 ms: {'met' if best <= 0.1 else 'NOT met'}")


if __name__ == "__main__":
    main()
