"""Benchmark: ``kda-sim check`` on one K1 launch, in this process, against one simulated
launch and SimPy's bare event rate measured in the same run.

    PYTHONPATH=. python bench/check_bench.py [--gpu h200 --R 4 --L 2 --seeds 3 --repeat 3]
                                              [--breakdown] [--jobs 1,2]

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

``--jobs 1,2`` times the check with each ``--jobs`` in turn, alternating (one check of
each a round, ``--repeat`` rounds, every report compared), so that each sees the same
load; CPU time is then this process's and its workers' together (and this process's
alone: with a free core for each worker, the wall time of its share), and the load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import resource
import statistics
import time
from collections.abc import Callable, Iterator
from typing import Any

from bench.sim_bench import bare_simpy_s

GOAL_S = 1.0
# (module, function, where else it is imported by name): the parts --breakdown times;
# a name a tree lacks is left out (an older tree measured for comparison)
PARTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    # one engine run of the deadlock or visibility check (a tree where the checks map
    # their runs themselves times them inside check_dynamic and check_visibility)
    (
        "kda_sim.checks.deadlock_dynamic",
        "run_one",
        ("kda_sim.checks.launch_check", "kda_sim.checks.visibility"),
    ),
    ("kda_sim.checks.late_loads", "makespan_early", ()),
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


def children_cpu_s() -> float:
    """CPU seconds of this process's ended children (a check's workers, once joined)."""
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed_check(argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU seconds of ``kda-sim ARGV`` in this process (its workers' CPU
    included), and what it printed."""
    wall, here, workers, text = timed_check_parts(argv)
    return wall, here + workers, text


def timed_check_parts(argv: list[str]) -> tuple[float, float, float, str]:
    """Wall seconds of ``kda-sim ARGV`` in this process, the CPU seconds of this process
    and of its workers, and what it printed."""
    from kda_sim.cli import main

    out = io.StringIO()
    t, c, k = time.perf_counter(), time.process_time(), children_cpu_s()
    with contextlib.redirect_stdout(out):
        main(argv)
    here, workers = time.process_time() - c, children_cpu_s() - k
    return time.perf_counter() - t, here, workers, out.getvalue()


def load_text() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f}, {five:.2f}, {fifteen:.2f} on {os.cpu_count()} CPUs"


def compare_jobs(argv: list[str], jobs: list[int], repeat: int) -> None:
    """The cached check with each ``--jobs`` of ``jobs``, alternating, ``repeat`` rounds."""
    print(f"before: {load_text()}")
    first = timed_check(argv)[2]  # cold: the protocol built, outside the comparison
    walls: dict[int, list[float]] = {j: [] for j in jobs}
    cpus: dict[int, list[float]] = {j: [] for j in jobs}
    heres: dict[int, list[float]] = {j: [] for j in jobs}
    for _ in range(repeat):
        for j in jobs:
            wall, here, workers, text = timed_check_parts([*argv, "--jobs", str(j)])
            assert text == first, f"--jobs {j} printed another report"
            walls[j].append(wall)
            cpus[j].append(here + workers)
            heres[j].append(here)
    print(f"after: {load_text()}")
    print(f"kda-sim {' '.join(argv)}, {repeat} rounds alternating, every report the same:")
    for j in jobs:
        w, c = walls[j], cpus[j]
        print(
            f"  --jobs {j}: wall {', '.join(f'{x:.2f}' for x in w)} s (best {min(w):.2f}, "
            f"median {statistics.median(w):.2f}); CPU with workers "
            f"{', '.join(f'{x:.2f}' for x in c)} s (best {min(c):.2f}), this process's "
            f"{', '.join(f'{x:.2f}' for x in heres[j])} s"
        )
    base = jobs[0]
    for j in jobs[1:]:
        ratios = [a / b for a, b in zip(walls[j], walls[base], strict=True)]
        print(
            f"  --jobs {j} / --jobs {base}, round by round: wall "
            f"{', '.join(f'{x:.2f}' for x in ratios)}; median CPU "
            f"{statistics.median(cpus[j]) / statistics.median(cpus[base]):.2f}"
        )


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
    ap.add_argument("--jobs", default=None, help="compare these --jobs, alternating (e.g. 1,2)")
    a = ap.parse_args()

    import kda_sim
    from kda_sim.engine import simulate
    from kda_sim.kernels.registry import DEFAULT_KERNEL, get
    from kda_sim.machine import load_profile
    from kda_sim.parallel import idle_jobs

    argv = check_argv(a)
    # the command's module imported first: the cold check times the protocol built, not
    # imports (one tree's CLI imports every command up front, another the named one only)
    importlib.import_module("kda_sim.cli")
    importlib.import_module("kda_sim.commands.check")
    spec = get(DEFAULT_KERNEL)
    cfg = spec.config_from_dict({"R": a.R, "L": a.L})
    prof = load_profile(a.gpu)
    if a.jobs is not None:
        compare_jobs(argv, [int(j) for j in a.jobs.split(",")], a.repeat)
        return
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
    print(f"its --jobs: the default, the cores idle now: {idle_jobs()}")
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
