"""The model's launch as a distribution: seeded runs of a profile with a spread between CTAs.

A profile's ``cta_spread`` draws each CTA's factor on a stage kind's computes once a
seeded launch; a nominal run draws none. ``kda-sim compare --seeds N`` runs the trace's
launch N times (seeds 0 to N - 1, no per-op jitter, as ``calibrate --seeds`` runs them:
:func:`kda_sim.compare.spread.model_run`), compares each run with the trace, and gives,
beside the trace's own critical path (its stage kinds), the model's paths as a
distribution (each path's share of the runs, the trace's marked, the most-taken ones),
and the makespan error and each stage kind's duration error as their mean and spread
over the runs.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kda_sim.compare.diff import Comparison, compare_timelines
from kda_sim.compare.spread import model_run
from kda_sim.machine.profile import GpuProfile
from kda_sim.timeline.critical import stage_kinds
from kda_sim.timeline.joins import NEAR_NS
from kda_sim.timeline.model import Timeline


@dataclass(frozen=True)
class SeededRun:
    """What one seeded run's comparison with the trace gives the distribution."""

    seed: int
    kinds: tuple[str, ...]  # the run's critical path by stage kind
    sim_makespan: float | None
    makespan_err: float | None  # (sim - real) / real
    # stage kind -> (sim - real) / real of its median durations (compare's split)
    dur_err: dict[str, float] = field(default_factory=dict)


def record(seed: int, c: Comparison) -> SeededRun:
    """Seed ``seed``'s run as its comparison with the trace reads it."""
    errs = {k: float(r["dur_err"]) for k, r in c.split.items() if r.get("dur_err") is not None}
    return SeededRun(seed, tuple(stage_kinds(c.sim_kinds)), c.sim_makespan, c.makespan_err, errs)


def seeded_run(
    real: Timeline,
    prof: GpuProfile,
    seed: int,
    clock_mode: str | None = None,
    clock_group: str | None = None,
    near_ns: float = NEAR_NS,
) -> SeededRun:
    """The launch's model run seeded ``seed`` on ``prof``, compared with the trace as
    ``compare`` compares (its clock flags); module-level, so that workers can take it."""
    _, sim = model_run(real, prof, seed)
    clk = {"clock_mode": clock_mode, "clock_group": clock_group}
    return record(seed, compare_timelines(real, sim, **clk, near_ns=near_ns))


def stats(xs: Sequence[float]) -> dict[str, float] | None:
    """Mean, standard deviation (of the runs as they are, 0 for one), least and most."""
    if not xs:
        return None
    return {
        "mean": statistics.fmean(xs),
        "sd": statistics.pstdev(xs),
        "min": min(xs),
        "max": max(xs),
    }


def distribution(trace_kinds: Sequence[str], runs: Sequence[SeededRun]) -> dict[str, Any]:
    """The runs' critical paths (stage kinds) as shares of the runs, most-taken first (ties
    in seed order), each marked where it is the trace's path ``trace_kinds`` and where it
    is modal (taken by as many runs as any); and the makespan and per-kind duration errors
    over the runs."""
    n = len(runs)
    counts = Counter(r.kinds for r in runs)
    top = max(counts.values())
    trace = tuple(trace_kinds)
    taken = [
        {
            "kinds": list(k),
            "runs": c,
            "share": c / n,
            "trace": k == trace,
            "modal": c == top,
        }
        for k, c in counts.most_common()
    ]
    kinds = dict.fromkeys(k for r in runs for k in r.dur_err)
    return {
        "runs": n,
        "seeds": [r.seed for r in runs],
        "trace_path": list(trace),
        "trace_path_share": counts.get(trace, 0) / n,
        "trace_path_modal": counts.get(trace, 0) == top,
        "modal": [p["kinds"] for p in taken if p["modal"]],
        "paths": taken,
        "makespan_err": stats([r.makespan_err for r in runs if r.makespan_err is not None]),
        "sim_makespan_ns": stats([r.sim_makespan for r in runs if r.sim_makespan is not None]),
        "dur_err_by_kind": {
            k: stats([r.dur_err[k] for r in runs if k in r.dur_err]) for k in kinds
        },
    }
