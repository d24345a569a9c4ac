"""How far apart two real launches of one shape are: the floor under any model's error.

The fitted profile's errors (docs/calibration.md) mean little without it: a model cannot
predict a launch closer than the next launch of the same shape lands to it. ``record``
makes N traced launches a shape on the GPU, as the bundled traces were made
(``kernel.run.run`` with a trace path); ``report`` compares them on any machine with the
same comparison ``kda-sim compare`` makes (every pair of launches, one as "real" and the
other in the model's place) and beside it the fitted profile against each launch.

Usage:
    python -m bench.trace_spread record --shapes 1x1,1x2,4x4 --launches 8 --dir DIR
    python -m bench.trace_spread report DIR [--out JSON]
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from bench.gpu_jobs import before_launches, report_to
from kda_sim.compare.diff import compare_timelines
from kda_sim.config import parse_shapes
from kda_sim.errors import InvalidInput
from kda_sim.timeline import Timeline

NAME = re.compile(r"k1_R(\d+)_L(\d+)_(\d+)\.json")


def record(
    shapes: list[tuple[int, int]], launches: int, out: Path, force: bool = False, warmup: int = 0
) -> None:
    """Raises InvalidInput (before any launch, bench.gpu_jobs.before_launches) where a
    trace of this name is there (unless ``force``) or no GPU is here. ``warmup``: eager
    steps before each traced launch (``kernel.run.run``): warm launches, not first ones."""
    jobs = [(R, L, out / f"k1_R{R}_L{L}_{i}.json") for R, L in shapes for i in range(launches)]
    before_launches([path for _, _, path in jobs], force)
    from kda_kernel.triton.run import run

    out.mkdir(parents=True, exist_ok=True)
    for R, L, path in tqdm(jobs, desc="traced launches", unit="launch"):
        run(R, L, nb=8, trace_path=path, warmup=warmup)


def _errors(a: Timeline, b: Timeline) -> tuple[float, float]:
    """(|makespan error|, median |start error|) of b against a, as fractions of a's makespan,
    as ``kda-sim compare`` reports them."""
    c = compare_timelines(a, b)
    return abs(c.makespan_err or 0.0), float(statistics.median(c.start_err_frac()))


def _stats(xs: list[float]) -> dict[str, float]:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def spread(launches: list[Timeline]) -> dict[str, Any]:
    """Makespans, and the errors between every ordered pair of launches of one shape."""
    pairs = [_errors(a, b) for a, b in itertools.permutations(launches, 2)]
    ms = [(t.makespan or 0.0) / 1e3 for t in launches]
    return {
        "launches": len(launches),
        "makespan_us": _stats(ms),
        "makespan_range_frac": (max(ms) - min(ms)) / statistics.median(ms),
        "pair_makespan_err_frac": _stats([p[0] for p in pairs]),
        "pair_start_err_median_frac": _stats([p[1] for p in pairs]),
    }


def model_errors(launches: list[Timeline], profile: str | None = None) -> dict[str, Any]:
    """The profile a trace names (``kda-sim compare``'s choice), or ``profile`` (a name or
    a file), against each launch."""
    from kda_sim.compare.launch import occupancy_of, profile_of, resources, with_resources
    from kda_sim.compare.model import config_of
    from kda_sim.engine import simulate

    errs = []
    for t in launches:
        prof = with_resources(profile_of(t, profile), resources(t))
        sim = simulate(config_of(t), prof, occupancy=occupancy_of(t)).timeline
        errs.append((prof.name, *_errors(t, sim)))
    return {
        "profile": errs[0][0],
        "makespan_err_frac": _stats([e[1] for e in errs]),
        "start_err_median_frac": _stats([e[2] for e in errs]),
    }


def report(folder: Path, profile: str | None = None) -> dict[str, Any]:
    from kda_sim.importers.chrome import read_kernel_trace

    groups: dict[tuple[int, int], list[Path]] = {}
    for p in sorted(folder.glob("*.json")):
        m = NAME.fullmatch(p.name)
        if m:
            groups.setdefault((int(m[1]), int(m[2])), []).append(p)
    if not groups:
        raise FileNotFoundError(f"no k1_R*_L*_*.json traces in {folder}")
    out: dict[str, Any] = {}
    for (R, L), paths in tqdm(sorted(groups.items()), desc="shapes"):
        tls = [read_kernel_trace(p) for p in paths]
        out[f"{R}x{L}"] = {
            "files": [p.name for p in paths],
            "between_launches": spread(tls),
            "model": model_errors(tls, profile),
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="traced launches on the GPU")
    r.add_argument("--shapes", default="1x1,1x2,4x4")
    r.add_argument("--launches", type=int, default=8)
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--force", action="store_true", help="overwrite traces of the same names")
    r.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="eager steps before each traced launch (warm launches)",
    )
    p = sub.add_parser("report", help="compare the launches (CPU)")
    p.add_argument("dir", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument(
        "--profile",
        help="the model to set against the launches (name or file; "
        "default: the one each trace's GPU and kernel name, as compare takes it)",
    )
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "record":
            record(list(parse_shapes(a.shapes)), a.launches, a.dir, a.force, a.warmup)
        else:
            report_to(lambda: report(a.dir, a.profile), a.out, a.force)
    except (FileNotFoundError, InvalidInput) as e:
        print(f"trace_spread: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
