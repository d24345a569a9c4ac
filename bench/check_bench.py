"""Benchmark: ``kda-sim check`` on one K1 launch, in this process, against one simulated
launch and SimPy's bare event rate measured in the same run.

    PYTHONPATH=. python bench/check_bench.py [--gpu h200 --R 4 --L 2 --seeds 3 --repeat 3]
                                              [--breakdown]

Prints the first check in the process (cold: the protocol, its hand-off table and access
rows built too) and the best and median of ``--repeat`` later ones (those cached, as in
the app, a sweep or a second check in one process), in wall time and in CPU time (which
a shared machine's load disturbs less). After each check, one nominal launch of the same
configuration and bare SimPy for as many events run, so all three see the same load: the
check's time is also given in launches (it runs the engine 13 times at the defaults) and
against the bare rate. ``--breakdown`` splits the last check into its parts (each engine
run, the static checks, the data-flow section, the hand-off tables derived). The goal is
a check in under 1 s. It imports the ``kda_sim`` first on the path: put the checkout
there (``PYTHONPATH=.``), or another tree's to measure it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.sim_bench import bare_simpy_s

GOAL_S = 1.0
# (module, function, where else it is imported by name): the parts --breakdown times;
# a name a tree lacks is left out (an older tree measured for comparison)
PARTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("kda_sim.checks.deadlock_dynamic", "check_dynamic", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.visibility", "check_visibility", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.late_loads", "check_late_loads", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.deadlock_static", "check_static", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.deadlock_static", "any_order", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.waitgraph", "waitgraph_of", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.words", "uses_words", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.sections", "dataflow_section", ("kda_sim.checks.launch_check",)),
    ("kda_sim.checks.sections", "tags_section", ("kda_sim.checks.launch_check",)),
    ("kda_sim.protocol.access", "accesses_of", ("kda_sim.checks.sections",)),
    (
        "kda_sim.protocol.handoffs",
        "derive",
        ("kda_sim.engine.simulate", "kda_sim.checks.waitgraph", "kda_sim.checks.tickets"),
    ),
    (
        "kda_sim.engine.simulate",
        "simulate",
        (
            "kda_sim.engine",
            "kda_sim.checks.launch_check",
            "kda_sim.checks.deadlock_dynamic",
            "kda_sim.checks.late_loads",
        ),
    ),
)


def check_argv(a: argparse.Namespace) -> list[str]:
    return ["check", "--gpu", a.gpu, "--R", str(a.R), "--L", str(a.L), "--seeds", str(a.seeds)]


def timed_check(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``kda-sim ARGV`` in this process, and what it printed."""
    from kda_sim.cli import main

    out = io.StringIO()
    t, c = time.perf_counter(), time.process_time()
    with contextlib.redirect_stdout(out):
        main(argv)
    return time.perf_counter() - t, time.process_time() - c, out.getvalue()


@contextlib.contextmanager
def parts_timed() -> Iterator[dict[str, list[float]]]:
    """Each function of :data:`PARTS` wrapped to add its CPU seconds a call (inclusive:
    a part's time holds its callees', the engine runs' included)."""
    times: dict[str, list[float]] = {}
    undo: list[tuple[Any, str, Any]] = []

    def wrapped(key: str, f: Callable[..., Any]) -> Callable[..., Any]:
        def timed(*args: Any, **kw: Any) -> Any:
            c = time.process_time()
            try:
                return f(*args, **kw)
            finally:
                times.setdefault(key, []).append(time.process_time() - c)

        return timed

    for modname, name, also in PARTS:
        mod = importlib.import_module(modname)
        f = getattr(mod, name, None)
        if f is None:
            continue
        w = wrapped(name, f)
        for m in (mod, *(importlib.import_module(x) for x in also)):
            if getattr(m, name, None) is f:
                undo.append((m, name, f))
                setattr(m, name, w)
            sections = getattr(m, "SECTIONS", None)  # the report's further checks, in order
            if sections is not None and f in sections:
                undo.append((m, "SECTIONS", sections))
                m.SECTIONS = tuple(w if s is f else s for s in sections)
    try:
        yield times
    finally:
        for m, name, f in reversed(undo):
            setattr(m, name, f)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", default="h200")
    ap.add_argument("--R", type=int, default=4)
    ap.add_argument("--L", type=int, default=2)
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--breakdown", action="store_true")
    a = ap.parse_args()

    import kda_sim
    from kda_sim.engine import simulate
    from kda_sim.kernels.registry import DEFAULT_KERNEL, get
    from kda_sim.machine import load_profile

    argv = check_argv(a)
    # the command's module imported first: the cold check times the protocol built, not
    # imports (one tree's CLI imports every command up front, another the named one only)
    importlib.import_module("kda_sim.cli")
    importlib.import_module("kda_sim.commands.check")
    spec = get(DEFAULT_KERNEL)
    cfg = spec.config_from_dict({"R": a.R, "L": a.L})
    prof = load_profile(a.gpu)
    cold_wall, cold_cpu, first = timed_check(argv)
    walls, cpus, launches, bares = [], [], [], []
    for _ in range(a.repeat):
        wall, cpu, text = timed_check(argv)
        assert text == first, "a later check printed another report"
        walls.append(wall)
        cpus.append(cpu)
        t, c = time.perf_counter(), time.process_time()
        res = simulate(cfg, prof)
        launches.append((time.perf_counter() - t, time.process_time() - c))
        bares.append(bare_simpy_s(res.events))
    best, bare = min(walls), min(bares)
    launch, launch_cpu = min(w for w, _ in launches), min(c for _, c in launches)
    print(f"kda_sim from {kda_sim.__file__}")
    print(f"kda-sim {' '.join(argv)}: {first.splitlines()[-1]}")
    print(
        f"cold (first in the process): {cold_wall:.2f} s wall, {cold_cpu:.2f} s CPU; later "
        f"(protocol cached), best of {a.repeat}: {best:.2f} s wall (median "
        f"{statistics.median(walls):.2f}), {min(cpus):.2f} s CPU"
    )
    print(
        f"one nominal launch, same run: {launch * 1e3:.0f} ms wall, {launch_cpu * 1e3:.0f} ms "
        f"CPU ({res.events} events): the check takes {min(cpus) / launch_cpu:.1f} launches "
        f"(CPU, best against best); bare SimPy for as many events {bare * 1e3:.0f} ms: the "
        f"check takes {best / bare:.0f}x that (wall)"
    )
    print(f"goal {GOAL_S:g} s: {'met' if best <= GOAL_S else 'NOT met'} (best wall, cached)")
    if a.breakdown:
        with parts_timed() as times:
            _, cpu, _ = timed_check(argv)
        print(f"parts of one cached check ({cpu:.2f} s CPU; inclusive, CPU seconds):")
        for name, ts in sorted(times.items(), key=lambda x: -sum(x[1])):
            each = ", ".join(f"{t * 1e3:.0f}" for t in ts)
            print(f"  {name:18s} {len(ts):2d}x {sum(ts) * 1e3:7.0f} ms  ({each})")


if __name__ == "__main__":
    main()
