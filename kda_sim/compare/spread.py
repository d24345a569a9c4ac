"""How far apart real launches of one shape land: the floor under any model's error.

A model cannot predict a launch closer than the next launch of the same shape lands to
it, so a profile's errors mean little without this figure. Given many traced launches of
each shape (files ``k1_R{R}_L{L}_{i}.json`` in one folder, as ``lab/trace_spread.py
record`` writes them on the GPU), :func:`report` compares every ordered pair of launches
of a shape as ``kda-sim compare`` compares a launch with the model (one launch as the
real one, the other in the model's place), and beside that the model against each launch.

The same holds for the critical path: which of several near-simultaneous producers ends
last changes from launch to launch, so each launch's path (its stage kinds in order, as
``compare``'s "path kinds agree" reads them) is counted, how often two launches of a shape
take the same one, and how often the model's path is a launch's.

The files of another kernel are named by its name and its two ``sweep_axes``
(``{kernel}_{a}{x}_{b}{y}_{i}.json``; K1's axes are R and L), and every launch in them
must be one of that kernel's.
"""

from __future__ import annotations

import itertools
import re
import statistics
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kda_sim.compare.diff import Comparison, compare_timelines
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.kernels.spec import require_hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.timeline import Timeline
from kda_sim.timeline.critical import stage_kinds
from kda_sim.timeline.joins import NEAR_NS

NAME = re.compile(r"k1_R(\d+)_L(\d+)_(\d+)\.json")  # K1's launches (what name_of(k1) reads)


def _axes(kernel: str) -> tuple[str, str]:
    return require_hook(get(kernel), "sweep_axes", "the two fields a launch's file name gives")


def name_of(kernel: str = DEFAULT_KERNEL) -> re.Pattern[str]:
    """The file names of ``kernel``'s traced launches: its name, its two axes' values and
    the launch's index."""
    a, b = (re.escape(x) for x in _axes(kernel))
    return re.compile(rf"{re.escape(get(kernel).name)}_{a}(\d+)_{b}(\d+)_(\d+)\.json")


def trace_name(R: int, L: int, i: int, kernel: str = DEFAULT_KERNEL) -> str:
    """The file name of the i-th traced launch at axis values (R, L) (what
    :func:`name_of` reads)."""
    a, b = _axes(kernel)
    return f"{get(kernel).name}_{a}{R}_{b}{L}_{i}.json"


def _errors(c: Comparison) -> tuple[float, float]:
    """(|makespan error|, median |start error|) of a comparison's simulated side against its
    real one, as fractions of the real makespan, as ``kda-sim compare`` reports them."""
    return abs(c.makespan_err or 0.0), float(statistics.median(c.start_err_frac()))


def _path(c: Comparison) -> tuple[str, ...]:
    """The real side's critical path as ``compare`` matches paths: its stage kinds."""
    return tuple(stage_kinds(c.real_kinds))


def paths(kinds: list[tuple[str, ...]]) -> dict[str, Any]:
    """Launches' critical paths (stage kinds, one tuple a launch): each path taken and by
    how many launches (most first), and the share of ordered pairs of launches whose paths
    are the same."""
    counts: dict[tuple[str, ...], int] = {}
    for k in kinds:
        counts[k] = counts.get(k, 0) + 1
    n = len(kinds)
    same = sum(c * (c - 1) for c in counts.values())
    return {
        "taken": [
            {"kinds": list(k), "launches": c}
            for k, c in sorted(counts.items(), key=lambda kc: -kc[1])
        ],
        "pair_agree_frac": same / (n * (n - 1)) if n > 1 else None,
    }


def _stats(xs: list[float]) -> dict[str, float]:
    return {"min": min(xs), "median": statistics.median(xs), "max": max(xs)}


def spread(launches: list[Timeline]) -> dict[str, Any]:
    """Makespans, and the errors between every ordered pair of launches of one shape."""
    if len(launches) < 2:
        raise InvalidInput(f"{len(launches)} launch: a spread needs two or more", what="launches")
    n = len(launches)
    comps = {(i, j): compare_timelines(launches[i], launches[j]) for i, j in _pairs(n)}
    pairs = [_errors(c) for c in comps.values()]
    ms = [(t.makespan or 0.0) / 1e3 for t in launches]
    return {
        "launches": n,
        "makespan_us": _stats(ms),
        "makespan_range_frac": (max(ms) - min(ms)) / statistics.median(ms),
        "pair_makespan_err_frac": _stats([p[0] for p in pairs]),
        "pair_start_err_median_frac": _stats([p[1] for p in pairs]),
        # launch i's own path, read where it stands as the real launch (its producers named)
        "path": paths([_path(comps[i, (i + 1) % n]) for i in range(n)]),
    }


def _pairs(n: int) -> list[tuple[int, int]]:
    return list(itertools.permutations(range(n), 2))


def model_run(
    t: Timeline, profile: str | GpuProfile | None = None, seed: int | None = None
) -> tuple[GpuProfile, Timeline]:
    """The model's run of launch ``t``: the profile a trace names (``kda-sim compare``'s
    choice), or ``profile`` (a name, a file, or a profile), running the launch's build with
    its residency and placement. ``seed`` None: the nominal run; a seed: one seeded run
    without per-op jitter, so that only the profile's spread between CTAs
    (``cta_spread``) draws, as ``calibrate --seeds`` runs it. The profile as run, and the
    run."""
    from kda_sim.compare.counterpart import simulate_like
    from kda_sim.compare.launch import profile_of, resources, with_resources

    base = profile if isinstance(profile, GpuProfile) else profile_of(t, profile)
    prof = with_resources(base, resources(t))
    return prof, simulate_like(t, prof, seed=seed, jitter=0.0).timeline


def model_comparison(
    t: Timeline,
    profile: str | GpuProfile | None = None,
    near_ns: float = NEAR_NS,
    seed: int | None = None,
) -> tuple[GpuProfile, Comparison]:
    """:func:`model_run` (``seed`` None: nominal) compared with the launch (rivals of
    slack under ``near_ns``): the profile as run, and the comparison."""
    prof, sim = model_run(t, profile, seed)
    return prof, compare_timelines(t, sim, near_ns=near_ns)


def model_errors(launches: list[Timeline], profile: str | None = None) -> dict[str, Any]:
    """The profile a trace names (``kda-sim compare``'s choice), or ``profile`` (a name or
    a file), against each launch."""
    errs = []
    agree: list[bool] = []
    sim_paths: list[tuple[str, ...]] = []
    for t in launches:
        prof, c = model_comparison(t, profile)
        errs.append((prof.name, *_errors(c), prof.costs_from))
        agree.append(c.kinds_agree)
        sim_paths.append(tuple(stage_kinds(c.sim_kinds)))
    return {
        "profile": errs[0][0],
        "costs": errs[0][3],  # which kernel costs the profile ran
        "makespan_err_frac": _stats([e[1] for e in errs]),
        "start_err_median_frac": _stats([e[2] for e in errs]),
        # each launch placed as it ran, so the model's path may differ launch to launch
        "path": {
            "taken": paths(sim_paths)["taken"],
            "agree_frac": sum(agree) / len(agree),
        },
    }


def launches_by_shape(
    folder: Path, kernel: str = DEFAULT_KERNEL
) -> dict[tuple[int, int], list[Path]]:
    """The folder's traced launches, by (R, L); other files are left alone. Raises
    InvalidInput where there is no folder or no launch in it."""
    pattern = name_of(kernel)
    if not folder.is_dir():
        raise InvalidInput("not a folder", where=str(folder))
    groups: dict[tuple[int, int], list[Path]] = {}
    for p in sorted(folder.glob("*.json")):
        m = pattern.fullmatch(p.name)
        if m:
            groups.setdefault((int(m[1]), int(m[2])), []).append(p)
    if not groups:
        a, b = _axes(kernel)
        glob = f"{get(kernel).name}_{a}*_{b}*_*.json"
        raise InvalidInput(f"no {glob} traces in it", where=str(folder))
    return dict(sorted(groups.items()))


def read_launch(path: Path, kernel: str = DEFAULT_KERNEL) -> Timeline:
    """A traced launch of ``kernel``; InvalidInput where the file is another kernel's."""
    from kda_sim.importers.chrome import read_kernel_trace

    tl = read_kernel_trace(path)
    if tl.meta.kernel != get(kernel).name:
        raise InvalidInput(
            f"a {tl.meta.kernel} launch, not one of {get(kernel).name}", where=str(path)
        )
    return tl


def report(
    folder: Path, profile: str | None = None, kernel: str = DEFAULT_KERNEL
) -> dict[str, Any]:
    """Each shape's launches against each other and the model against each launch, by
    "RxL"."""

    out: dict[str, Any] = {}
    for (R, L), paths in tqdm(launches_by_shape(folder, kernel).items(), desc="shapes"):
        if len(paths) < 2:
            raise InvalidInput(
                f"one launch of {R}x{L}: a spread needs two or more", where=str(paths[0])
            )
        tls = [read_launch(p, kernel) for p in paths]
        out[f"{R}x{L}"] = {
            "files": [p.name for p in paths],
            "between_launches": spread(tls),
            "model": model_errors(tls, profile),
        }
    return out


def table(report: dict[str, Any]) -> str:
    """One line a shape: the launches' makespans, how far apart they land, and the model's
    error against them (medians over the pairs, and over the launches)."""
    lines = [
        f"{'shape':>5} {'n':>3} {'makespan us':>18} {'range':>7} {'pair ms err':>12} "
        f"{'model ms err':>13} {'paths':>5} {'pair path':>9} {'model path':>10}  (median "
        "[min, max]; paths: distinct critical paths by stage kind; path columns: share of "
        "launch pairs, and of launches the model's, that agree; model: the profile named)"
    ]
    for shape, r in report.items():
        b, m = r["between_launches"], r["model"]
        ms, pe, me = b["makespan_us"], b["pair_makespan_err_frac"], m["makespan_err_frac"]
        lines.append(
            f"{shape:>5} {b['launches']:3d} {ms['median']:6.1f} [{ms['min']:.1f}, "
            f"{ms['max']:.1f}] {100 * b['makespan_range_frac']:6.1f}% "
            f"{100 * pe['median']:11.1f}% {100 * me['median']:12.1f}% "
            f"{len(b['path']['taken']):5d} {100 * b['path']['pair_agree_frac']:8.0f}% "
            f"{100 * m['path']['agree_frac']:9.0f}%  {m['profile']}"
        )
    pair = [r["between_launches"]["path"]["pair_agree_frac"] for r in report.values()]
    model = [r["model"]["path"]["agree_frac"] for r in report.values()]
    lines.append(
        f"critical path by stage kind, shapes agreeing on average: two launches "
        f"{sum(pair):.1f} of {len(pair)}, the model and a launch {sum(model):.1f}"
    )
    named = {r["model"]["profile"]: r["model"].get("costs") for r in report.values()}
    lines += [f"costs of {p}: {c}" for p, c in named.items() if c]
    return "\n".join(lines)
