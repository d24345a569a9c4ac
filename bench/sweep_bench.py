"""Benchmark: ``kda-sim sweep --gpu h200`` (issue 40's sweep goal: under 1.5 s with 2 jobs),
each tree given in turn, so that all see the same load on a shared machine.

    python bench/sweep_bench.py [--tree DIR ...] [--repeat 3] [--jobs 2] [--gpu h200]
                                [--bytecode]

For each round and each tree (``--tree``, default this checkout), three runs of the
command in a fresh interpreter with that tree's ``kda_sim`` first on the path
(``PYTHONPATH=DIR``, and ``DIR/.shim`` where a worktree keeps its kernel package link):

- **process**: ``python -m kda_sim.cli sweep ...``: wall time from the process's start to
  its end (interpreter start, imports and exit included) and the CPU time of it and its
  workers (user + system, from the children's rusage);
- **in-process**: ``kda_sim.cli.main`` timed inside the interpreter (imports of the
  command included, the interpreter's start and exit not): wall, and CPU of the process
  and its workers.

Every run's printed map must equal the first tree's (the trees are compared, not only
timed). Prints each run, then per tree the best and the median.

The runs inherit this process's environment: where it sets ``PYTHONDONTWRITEBYTECODE``
and the trees hold no bytecode (this machine), every run compiles the modules it
imports (55 to 65 ms before a sweep's fork). ``--bytecode``: each tree's bytecode cached
under a temporary ``PYTHONPYCACHEPREFIX``, filled by one unmeasured run of each tree
first, as an installed kda-sim runs.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

GOAL_S = 1.5  # issue 40: the sweep with 2 jobs, wall

# the in-process run: main() timed, its output written where the parent compares it
INNER = """
import contextlib, io, os, sys, time
t, c = time.perf_counter(), time.process_time()
from kda_sim.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(sys.argv[1:])
wall, cpu = time.perf_counter() - t, time.process_time() - c
ch = os.times()
sys.stdout.write(out.getvalue())
print(f"@@ {rc} {wall:.4f} {cpu + ch.children_user + ch.children_system:.4f}", file=sys.stderr)
"""


# set by --bytecode: the folder every run's bytecode is cached under
PYC_PREFIX: str | None = None


def env_for(tree: Path) -> dict[str, str]:
    env = dict(os.environ)
    if PYC_PREFIX is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = PYC_PREFIX  # a tree's own paths keep trees apart
    paths = [str(tree)] + ([str(tree / ".shim")] if (tree / ".shim").is_dir() else [])
    env["PYTHONPATH"] = os.pathsep.join(paths + [p for p in [env.get("PYTHONPATH")] if p])
    return env


def run_process(tree: Path, argv: list[str]) -> tuple[float, float, str]:
    """Wall of the whole process and CPU of it and its workers; its output."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-m", "kda_sim.cli", *argv],
        cwd=tree,
        env=env_for(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if p.returncode != 0:
        raise SystemExit(f"{tree}: exit {p.returncode}\n{p.stderr}")
    return wall, cpu, p.stdout


def run_inside(tree: Path, argv: list[str]) -> tuple[float, float, str]:
    """Wall and CPU (with its workers) of ``main`` inside the interpreter; its output."""
    p = subprocess.run(
        [sys.executable, "-c", INNER, *argv],
        cwd=tree,
        env=env_for(tree),
        capture_output=True,
        text=True,
        check=False,
    )
    line = next((s for s in p.stderr.splitlines() if s.startswith("@@ ")), None)
    if p.returncode != 0 or line is None:
        raise SystemExit(f"{tree}: exit {p.returncode}\n{p.stderr}")
    _, rc, wall, cpu = line.split()
    if rc != "0":
        raise SystemExit(f"{tree}: the sweep exited {rc}")
    return float(wall), float(cpu), p.stdout


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tree", type=Path, action="append", help="a checkout (default: this one)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--gpu", default="h200")
    ap.add_argument(
        "--bytecode", action="store_true", help="each tree's bytecode cached (the docstring)"
    )
    a = ap.parse_args()
    trees = [t.resolve() for t in a.tree or [Path(__file__).resolve().parents[1]]]
    argv = ["sweep", "--gpu", a.gpu, "--jobs", str(a.jobs)]
    global PYC_PREFIX
    if a.bytecode:
        PYC_PREFIX = tempfile.mkdtemp(prefix="sweep_bench_pyc_")
        for tree in trees:  # unmeasured: writes the tree's bytecode
            run_process(tree, argv)
    compiled = "bytecode cached" if a.bytecode else "as the environment runs it"
    print(f"kda-sim {' '.join(argv)} ({compiled}); load average {os.getloadavg()[0]:.2f}")
    runs: dict[Path, list[tuple[float, float, float, float]]] = {t: [] for t in trees}
    first: str | None = None
    for i in range(a.repeat):
        for tree in trees:
            wall, cpu, out = run_process(tree, argv)
            in_wall, in_cpu, in_out = run_inside(tree, argv)
            first = out if first is None else first
            if out != first or in_out != first:
                raise SystemExit(f"{tree}: the map differs from {trees[0]}'s")
            runs[tree].append((wall, cpu, in_wall, in_cpu))
            print(
                f"round {i + 1} {tree}: process wall {wall:.2f} s, CPU {cpu:.2f} s; "
                f"in-process wall {in_wall:.2f} s, CPU {in_cpu:.2f} s"
            )
    print(f"load average {os.getloadavg()[0]:.2f}; the maps are the same")
    for tree, rs in runs.items():
        cols = list(zip(*rs, strict=True))
        best = [min(c) for c in cols]
        med = [statistics.median(c) for c in cols]
        print(
            f"{tree}: best (median) process wall {best[0]:.2f} ({med[0]:.2f}) s, CPU "
            f"{best[1]:.2f} ({med[1]:.2f}) s; in-process wall {best[2]:.2f} ({med[2]:.2f}) "
            f"s, CPU {best[3]:.2f} ({med[3]:.2f}) s; goal {GOAL_S} s wall: "
            f"{'met' if best[0] <= GOAL_S else 'NOT met'}"
        )
    if PYC_PREFIX is not None:
        shutil.rmtree(PYC_PREFIX, ignore_errors=True)


if __name__ == "__main__":
    main()
