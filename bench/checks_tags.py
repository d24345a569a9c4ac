"""Benchmark: one tag analysis (``kda-sim check --tags``), cold and warm.

    python bench/checks_tags.py [--shapes 8x1,1x1,2x2,4x2 --nb-per-slot 1,1,2,8,...]

Times the analysis over every int32 epoch for a step of the given shapes and slots
(default: 4 shapes, 43 slots with nb cycling 1..7 and one last slot of nb 8, never
zeroed: the nb-8 slot is the only writer of some PART pairs, so scenarios exist),
including the step model built from the protocol's extents. Goal: under 1 s.
"""

from __future__ import annotations

import argparse
import statistics
import time

from kda_sim.checks.tags.analysis import Policy, analyse
from kda_sim.kernels.k1.config import parse_shapes
from kda_sim.kernels.k1.footprint import k1_step_model
from kda_sim.kernels.k1.tags import STEP_TAG


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", default="8x1,1x1,2x2,4x2")
    ap.add_argument("--nb-per-slot", default=",".join([str(1 + i % 7) for i in range(42)] + ["8"]))
    ap.add_argument("--policy", default=Policy.NEVER_ZEROED.value)
    ap.add_argument("--repeat", type=int, default=5)
    a = ap.parse_args()
    shapes = parse_shapes(a.shapes)
    nbs = tuple(int(x) for x in a.nb_per_slot.split(","))
    times = []
    v = None
    for _ in range(a.repeat):
        t = time.perf_counter()
        model = k1_step_model(shapes, nbs)
        v = analyse(model, STEP_TAG, Policy(a.policy))
        times.append(time.perf_counter() - t)
    assert v is not None
    print(
        f"{len(shapes)} shapes x {len(nbs)} slots, {a.policy}: "
        f"{'safe' if v.safe else 'unsafe'}, {len(v.scenarios)} scenarios"
    )
    print(f"first {times[0] * 1e3:.0f} ms (cold), median {statistics.median(times) * 1e3:.0f} ms")
    print(f"goal 1 s: {'met' if max(times) <= 1.0 else 'NOT met'}")


if __name__ == "__main__":
    main()
