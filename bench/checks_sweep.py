"""Benchmark: a whole ``kda-sim sweep`` for one GPU (R 1..8 x L 1..4), cold.

    python bench/checks_sweep.py [--gpu mi355x] [--breakdown] [--profile-top 0]

Cold means a fresh process: every protocol the sweep needs is built, as for a user's
first ``kda-sim sweep``. Prints the wall time against the goal of 20 s; ``--breakdown``
runs under cProfile (slower) and splits the time into protocol builds (build_launch,
derive), the wait-for structures, the static fixpoints and the engine runs;
``--profile-top N`` also prints the N most expensive functions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

from kda_sim.checks import sweep as sweep_mod
from kda_sim.machine import load_profile


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--gpu", default="mi355x")
    ap.add_argument("--jobs", type=int, default=None, help="processes (default: the CPUs)")
    ap.add_argument("--breakdown", action="store_true")
    ap.add_argument("--profile-top", type=int, default=0)
    a = ap.parse_args()
    prof = load_profile(a.gpu)
    pr = cProfile.Profile()
    profiled = a.breakdown or a.profile_top > 0
    t = time.perf_counter()
    if profiled:
        pr.enable()
    # profiled: one process, so the profile sees every call
    cells = sweep_mod.sweep(prof, jobs=1 if profiled else a.jobs)
    if profiled:
        pr.disable()
    wall = time.perf_counter() - t
    n = {v: sum(c.verdict == v for c in cells) for v in ("finishes", "deadlocks", "invalid")}
    print(f"{prof.name}: {len(cells)} shapes ({n}) in {wall:.2f} s (cold)")
    print(f"goal 20 s: {'met' if wall <= 20 else 'NOT met'}" + (" (profiled)" if profiled else ""))
    if not profiled:
        return
    st = pstats.Stats(pr)
    parts = {
        "protocol build (build_launch)": "build_launch",
        "hand-offs (derive)": "derive",
        "wait-for structures": "build_waitgraph",
        "static fixpoints": "run_fixpoint",
        "engine (simulate)": "simulate",
    }
    cum = {}
    for (_file, _line, fn), (_cc, _nc, _tt, ct, _callers) in st.stats.items():  # type: ignore[attr-defined]
        for label, name in parts.items():
            if fn == name:
                cum[label] = cum.get(label, 0.0) + ct
    for label in parts:
        print(f"  {label:32s} {cum.get(label, 0.0):6.2f} s (cumulative, may nest)")
    if a.profile_top:
        st.sort_stats("tottime").print_stats(a.profile_top)


if __name__ == "__main__":
    main()
