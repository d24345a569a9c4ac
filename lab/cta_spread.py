"""A spread between CTAs: each CTA's stage durations against its class's, launch by launch.

(No GPU.) For each launch (a trace of our K1) and each CTA, every stage's compute time
(its duration less its own polls' waits, ``compare``'s split) over the median of that
stage kind's compute among the CTAs of the same class in the launch: the CTA's factor
for the stage. A class is a gemv CTA's ``lab.makespan_parts`` class (what shares its
SM: nothing, an attn CTA, the later or the earlier gemv CTA), any other CTA's role; a
kda stage's class is the kind alone (every CTA runs kda tasks). Per shape, over the
launches:

- the spread of the log factor of each kind (sd, p10..p90 of the factor), pooled over
  the launches;
- whether it is one factor per CTA: the rank correlation (Spearman, inside a launch,
  median over the launches) of the CTA's gemv0 factor with its other stages' factors;
- whether it repeats: the rank correlation of the CTAs' gemv0 factors between two
  launches, by CTA number (median over the pairs).

``paths``: the critical path as a distribution. Per shape, ``--seeds`` seeded runs of
the model with the spread (``GpuProfile.cta_spread``: ``--spread`` on each stage kind of
``--stages``, every kind by default; no per-op jitter), run i placed as launch i mod n
of the shape ran and compared with it; beside them the n launches' own paths (a
shape's launches pooled over every folder given). Per shape:
each path's share of the runs and of the launches, whether the model's most-taken path
is the launches' (``lab.loo_spread``'s verdict), the overlap (the sum over paths of the
lesser share), the share of launches whose path the model takes in at least ``1 / n`` of
its runs, the makespan error of each run against its launch, and each stage kind's
pooled median duration error. With ``--bootstrap B``, the verdict B times over the
launches and the runs resampled: each shape's share of "yes", "tie" and "no", and the
count of "yes" shapes over the draws.

Usage::

    python -m lab.cta_spread measure LABEL=TRACE_DIR ... [--json OUT]
    python -m lab.cta_spread paths TRACE_DIR... (--folds DIR | --profile P) --spread SD
        [--stages gemv0,gemv1] --seeds N [--bootstrap B] [--json OUT]

(each folder's ``k1_R{R}_L{L}_{i}.json``, as ``lab.trace_spread record`` writes them).
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections import Counter, defaultdict
from dataclasses import replace
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.compare.diff import Comparison, compare_timelines
from kda_sim.compare.launch import profile_of
from kda_sim.compare.model import model_view
from kda_sim.compare.spread import launches_by_shape, model_run, read_launch
from kda_sim.compare.stage_split import split_spans
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.machine.profile import MAX_SPREAD
from kda_sim.timeline.critical import stage_kinds
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gemv_tail import _rho
from lab.gpu_jobs import report_main
from lab.loo_spread import KIND_BAR, MAKESPAN_BAR, fold_file, modal_verdict
from lab.makespan_parts import _neighbour

GEMV: tuple[str, ...] = ("load_x", "gemv0", "gemv1")
KDA: tuple[str, ...] = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")
ANCHOR = "gemv0"  # the stage whose factor the others are held against
FLOOR_NS = 64.0  # a compute under this is a tick or two of the clock: no factor read


def _class(tl: Timeline, c: CtaTrack, by_unit: dict[int | None, list[CtaTrack]], stage: str) -> str:
    if stage.startswith("k."):
        return stage
    return _neighbour(tl, c, by_unit) if c.role == "gemv" else c.role


def factors(tl: Timeline) -> dict[int, dict[str, float]]:
    """CTA -> stage kind -> its compute over its class's median compute of that kind in
    the launch (a kind a CTA runs more than once: the median of its spans)."""
    by_unit: dict[int | None, list[CtaTrack]] = defaultdict(list)
    for c in tl.ctas:
        by_unit[c.unit].append(c)
    ctas = {c.cta: c for c in tl.ctas}
    own: dict[tuple[int, str], list[float]] = defaultdict(list)
    for sp in split_spans(tl):
        if sp.compute >= FLOOR_NS:
            own[sp.cta, sp.stage].append(sp.compute)
    per: dict[tuple[int, str], float] = {k: float(np.median(v)) for k, v in own.items()}
    pool: dict[tuple[str, str], list[float]] = defaultdict(list)
    for (cta, stage), v in per.items():
        pool[_class(tl, ctas[cta], by_unit, stage), stage].append(v)
    med = {k: float(np.median(v)) for k, v in pool.items()}
    out: dict[int, dict[str, float]] = defaultdict(dict)
    for (cta, stage), v in per.items():
        out[cta][stage] = v / med[_class(tl, ctas[cta], by_unit, stage), stage]
    return dict(out)


def _q(xs: list[float], q: float) -> float:
    return round(float(np.quantile(xs, q)), 3)


def summary(launches: list[dict[int, dict[str, float]]]) -> dict[str, Any]:
    """One shape's launches (each :func:`factors`): see the module's doc."""
    spread: dict[str, Any] = {}
    for kind in (*GEMV, *KDA, "slice", "gate", "mix"):
        fs = [f[kind] for fl in launches for f in fl.values() if kind in f]
        if len(fs) > 2:
            logs = np.log(fs)
            spread[kind] = {
                "n": len(fs),
                "sd_log": round(float(np.std(logs)), 3),
                "p10": _q(fs, 0.1),
                "p90": _q(fs, 0.9),
            }
    with_anchor: dict[str, list[float]] = defaultdict(list)
    for fl in launches:
        rows = [f for f in fl.values() if ANCHOR in f]
        for kind in (*GEMV, *KDA):
            if kind == ANCHOR:
                continue
            r = _rho([f.get(kind) for f in rows], [f[ANCHOR] for f in rows])
            if r is not None:
                with_anchor[kind].append(r)
    repeat = []
    for a, b in combinations(launches, 2):
        common = sorted(c for c in a if c in b and ANCHOR in a[c] and ANCHOR in b[c])
        r = _rho([a[c][ANCHOR] for c in common], [b[c][ANCHOR] for c in common])
        if r is not None:
            repeat.append(r)
    return {
        "launches": len(launches),
        "spread": spread,
        "rho with gemv0": {k: round(float(np.median(v)), 2) for k, v in with_anchor.items()},
        "repeat by cta": round(float(np.median(repeat)), 2) if repeat else None,
    }


def report(folders: list[tuple[str, Path]]) -> list[dict[str, Any]]:
    out = []
    for label, folder in folders:
        for (R, L), paths in launches_by_shape(folder).items():
            launches = []
            for p in paths:
                tl = read_k1_trace(p)
                model_view(tl)  # a K1 launch, or InvalidInput
                launches.append(factors(tl))
            out.append({"set": label, "shape": f"{R}x{L}", "S": R * L, **summary(launches)})
    return out


def table(rows: list[dict[str, Any]]) -> str:
    kinds = ("gemv0", "gemv1", "load_x", "k.stage", "k.conv", "k.recur", "slice")
    head = (
        "| set | shape | "
        + " | ".join(f"{k}: sd log (p10..p90)" for k in kinds)
        + " | rho with gemv0: gemv1 / load_x / "
        + " / ".join(KDA)
        + " | repeat by CTA |"
    )
    lines = [head, "|" + "---|" * (len(kinds) + 4)]
    for r in rows:
        cells = []
        for k in kinds:
            s = r["spread"].get(k)
            cells.append(
                "-" if s is None else f"{s['sd_log']:.3f} ({s['p10']:.2f}..{s['p90']:.2f})"
            )
        rho = " / ".join(
            "-" if r["rho with gemv0"].get(k) is None else f"{r['rho with gemv0'][k]:+.2f}"
            for k in ("gemv1", "load_x", *KDA)
        )
        lines.append(
            f"| {r['set']} | {r['shape']} | "
            + " | ".join(cells)
            + f" | {rho} | {r['repeat by cta']} |"
        )
    return "\n".join(lines)


def spread_map(sd: float, stages: tuple[str, ...] = ()) -> dict[str, float]:
    """``GpuProfile.cta_spread`` for ``sd`` on ``stages`` (the K1's every stage kind where
    empty); a kind not the K1's is refused."""
    if not 0 <= sd <= MAX_SPREAD:
        raise InvalidInput(f"--spread {sd}: 0 to {MAX_SPREAD}", what="--spread")
    bad = [k for k in stages if k not in STAGES]
    if bad:
        raise InvalidInput(f"not a stage kind of the K1: {bad[0]}", what="--stages")
    return {k: sd for k in stages or STAGES} if sd else {}


def seeded_run(t: Timeline, profile: str, spread: dict[str, float], seed: int) -> Timeline:
    """The model's run of launch ``t`` (``compare.spread.model_run``: its build, residency
    and placement, no per-op jitter) with ``cta_spread`` ``spread`` (stage kind -> sd),
    seeded ``seed``."""
    return model_run(t, replace(profile_of(t, profile), cta_spread=spread), seed)[1]


def seeded_comparison(t: Timeline, profile: str, spread: dict[str, float], seed: int) -> Comparison:
    """:func:`seeded_run` of launch ``t`` compared with ``t``."""
    return compare_timelines(t, seeded_run(t, profile, spread, seed))


Path_ = tuple[str, ...]


def shares(paths: list[Path_]) -> dict[Path_, float]:
    n = Counter(paths)
    return {p: c / len(paths) for p, c in n.most_common()}


def path_shape(real: list[Path_], comps: list[Comparison]) -> dict[str, Any]:
    """One shape: the launches' paths ``real`` against the model's runs ``comps`` (see the
    module's doc)."""
    sim = [tuple(stage_kinds(c.sim_kinds)) for c in comps]
    pr, ps = shares(real), shares(sim)
    floor = 1 / len(real)
    ms = [c.makespan_err or 0.0 for c in comps]
    kinds: dict[str, float] = {}
    for k in STAGES:
        r = [m.real_dur for c in comps for m in c.matched if m.stage == k]
        if r:
            s = [m.sim_dur for c in comps for m in c.matched if m.stage == k]
            kinds[k] = statistics.median(s) / statistics.median(r) - 1
    return {
        "runs": len(comps),
        "launches": len(real),
        "real": [[list(p), v] for p, v in pr.items()],
        "model": [[list(p), v] for p, v in ps.items()],
        "modal": modal_verdict(real, sim),
        "overlap": sum(min(v, ps.get(p, 0.0)) for p, v in pr.items()),
        "launches_covered": sum(ps.get(p, 0.0) >= floor for p in real) / len(real),
        "makespan_abs_median": statistics.median(abs(e) for e in ms),
        "makespan_median": statistics.median(ms),
        "kinds": kinds,
    }


def verdict_draws(
    real: list[Path_], sim: list[Path_], draws: int, rng: np.random.Generator
) -> list[str]:
    """The modal verdict of ``draws`` resamples (with replacement) of the launches' paths
    and the runs': how far the verdict is the launches' and runs' noise."""
    out = []
    for _ in range(draws):
        r = [real[i] for i in rng.integers(0, len(real), len(real))]
        s = [sim[i] for i in rng.integers(0, len(sim), len(sim))]
        out.append(modal_verdict(r, s))
    return out


def resampled(per_shape: list[list[str]]) -> dict[str, Any]:
    """Over the draws (one verdict a shape each): the count of shapes whose verdict is
    "yes", its p10 / median / p90, and the share of draws with at least k (k = 0..)."""
    yes = np.sum(np.array(per_shape) == "yes", axis=0)
    return {
        "draws": int(yes.size),
        "yes_p10": float(np.percentile(yes, 10)),
        "yes_median": float(np.median(yes)),
        "yes_p90": float(np.percentile(yes, 90)),
        "yes_at_least": [float(np.mean(yes >= k)) for k in range(len(per_shape) + 1)],
    }


def run_header(
    folders: list[Path],
    folds: Path | None,
    profile: str | None,
    spread: float,
    stages: tuple[str, ...],
    seeds: int,
) -> dict[str, Any]:
    """What a report of seeded runs was run on: its launches, profiles and spread."""
    return {
        "folder": str(folders[0]) if len(folders) == 1 else [str(f) for f in folders],
        "folds": str(folds) if folds else None,
        "profile": profile,
        "spread": spread,
        "stages": list(stages),
        "seeds": seeds,
    }


def pooled_by_shape(folders: list[Path]) -> dict[tuple[int, int], list[Path]]:
    """Each shape's launches over ``folders``, in their order: launches of one build and
    GPU recorded in separate runs estimate the shape's path distribution together."""
    groups: dict[tuple[int, int], list[Path]] = defaultdict(list)
    for folder in folders:
        for shape, files in launches_by_shape(folder).items():
            groups[shape] += files
    return dict(sorted(groups.items()))


def launch_kind(t: Timeline) -> dict[str, Any]:
    """What launches must share to be pooled: the card, the launch configuration, the
    build's options, cold or warm, and the compiler."""
    m, x = t.meta, t.meta.extra
    return {
        "gpu": m.gpu,
        "config": m.config(),
        "build": x.get("build", {}),
        "warmup": x.get("warmup", 0),  # older traces name no warm-up: cold
        "triton": x.get("triton"),
    }


def same_kind(launches: list[Timeline], files: list[Path]) -> None:
    """Raises InvalidInput naming the first launch not of the first's kind."""
    first = launch_kind(launches[0])
    for t, f in zip(launches[1:], files[1:], strict=True):
        k = launch_kind(t)
        diff = [n for n in first if k[n] != first[n]]
        if diff:
            what = ", ".join(f"{n} {k[n]} against {first[n]}" for n in diff)
            raise InvalidInput(
                f"not the launch of {files[0]} ({what}): only launches of one build and card pool",
                where=str(f),
            )


def path_report(
    folders: list[Path],
    folds: Path | None,
    profile: str | None,
    spread: float,
    seeds: int,
    stages: tuple[str, ...] = (),
    bootstrap: int = 0,
) -> dict[str, Any]:
    """``bootstrap``: draws of :func:`verdict_draws` a shape (0: none), seeded, so a
    report is the same each time."""
    by_kind = spread_map(spread, stages)
    groups = pooled_by_shape(folders)
    shapes: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    draws: list[list[str]] = []
    if folds is None and profile is None:
        raise InvalidInput("a fold folder or a profile is needed", what="--profile")
    read: dict[tuple[int, int], list[Timeline]] = {}
    for shape, files in groups.items():  # every launch read and checked before any run
        if folds is not None and not fold_file(folds, *shape).is_file():
            raise InvalidInput("no fold for this shape", where=str(fold_file(folds, *shape)))
        read[shape] = [read_launch(p) for p in files]
        same_kind(read[shape], files)
    for (R, L), launches in read.items():
        prof = str(fold_file(folds, R, L)) if folds is not None else str(profile)
        comps = [
            seeded_comparison(launches[i % len(launches)], prof, by_kind, i) for i in range(seeds)
        ]
        real = [tuple(stage_kinds(c.real_kinds)) for c in comps[: len(launches)]]
        shapes[f"{R}x{L}"] = path_shape(real, comps)
        if bootstrap:
            sim = [tuple(stage_kinds(c.sim_kinds)) for c in comps]
            draws.append(verdict_draws(real, sim, bootstrap, rng))
            shapes[f"{R}x{L}"]["resampled"] = {
                v: draws[-1].count(v) / bootstrap for v in ("yes", "tie", "no")
            }
    med = {
        k: statistics.median(r["kinds"][k] for r in shapes.values() if k in r["kinds"])
        for k in STAGES
        if any(k in r["kinds"] for r in shapes.values())
    }
    verdicts = Counter(r["modal"] for r in shapes.values())
    return {
        **run_header(folders, folds, profile, spread, stages, seeds),
        "shapes": shapes,
        "summary": {
            "modal_yes": verdicts["yes"],
            "modal_tie": verdicts["tie"],
            "overlap_sum": sum(r["overlap"] for r in shapes.values()),
            "covered_sum": sum(r["launches_covered"] for r in shapes.values()),
            "makespans_within": sum(
                r["makespan_abs_median"] <= MAKESPAN_BAR for r in shapes.values()
            ),
            "makespan_abs_median_over_shapes": statistics.median(
                r["makespan_abs_median"] for r in shapes.values()
            ),
            "kind_median_err": med,
            "kinds_within": sum(abs(v) <= KIND_BAR for v in med.values()),
            **({"resampled": resampled(draws)} if draws else {}),
        },
    }


def _short(p: list[str]) -> str:
    return " ".join(p)


def path_table(rep: dict[str, Any]) -> str:
    lines = [
        "| shape | modal | overlap | launches covered | makespan: median abs (signed) |"
        " launches' paths (share) | the model's (share) |",
        "|" + "---|" * 7,
    ]
    for name, r in rep["shapes"].items():
        real = "; ".join(f"{_short(p)} ({v:.2f})" for p, v in r["real"])
        sim = "; ".join(f"{_short(p)} ({v:.2f})" for p, v in r["model"][:4])
        lines.append(
            f"| {name} | {r['modal']} | {r['overlap']:.2f} | {r['launches_covered']:.2f}"
            f" | {100 * r['makespan_abs_median']:.1f} % ({100 * r['makespan_median']:+.1f} %)"
            f" | {real} | {sim} |"
        )
    s = rep["summary"]
    lines.append(
        f"\nspread {rep['spread']} ({', '.join(rep['stages']) or 'every stage'}),"
        f" {rep['seeds']} runs a shape: modal {s['modal_yes']}"
        f" (+{s['modal_tie']} tie) of {len(rep['shapes'])}, overlap {s['overlap_sum']:.2f},"
        f" launches covered {s['covered_sum']:.2f}, makespans within 5 % {s['makespans_within']}"
        f" (median {100 * s['makespan_abs_median_over_shapes']:.1f} %), kinds within 15 %"
        f" {s['kinds_within']} of {len(s['kind_median_err'])}: "
        + ", ".join(f"{k} {100 * v:+.0f}" for k, v in s["kind_median_err"].items())
    )
    if "resampled" in s:
        b = s["resampled"]
        most = [(k, v) for k, v in enumerate(b["yes_at_least"]) if 0 < v < 1]
        lines.append(
            f"resampled ({b['draws']} draws of the launches and the runs): shapes 'yes'"
            f" median {b['yes_median']:.0f} (p10 {b['yes_p10']:.0f}, p90 {b['yes_p90']:.0f});"
            + "".join(f" at least {k} in {100 * v:.0f} %," for k, v in most).rstrip(",")
        )
    return "\n".join(lines)


def _labelled(arg: str) -> tuple[str, Path]:
    label, sep, path = arg.partition("=")
    return (label, Path(path)) if sep else (Path(arg).name, Path(arg))


def _seeds(v: str) -> int:
    n = int(v)
    if n < 1:
        raise argparse.ArgumentTypeError(f"at least 1 run, not {n}")
    return n


def model_args(p: argparse.ArgumentParser) -> None:
    """The options that pick a shape's profile and the stages its spread is on."""
    p.add_argument("--folds", type=Path, help="a folder of fold_R{R}_L{L}.json: each shape's")
    p.add_argument("--profile", help="a bundled profile's name or a file, for every shape")
    p.add_argument(
        "--stages",
        type=lambda v: tuple(x for x in v.split(",") if x),
        default=(),
        help="spread only these stages (comma-separated; default every stage)",
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("measure", help="each CTA's stage factors, per shape")
    m.add_argument("folders", nargs="+", type=_labelled, help="LABEL=DIR (or DIR)")
    m.add_argument("--json", type=Path, help="write the rows here too")
    p = sub.add_parser("paths", help="the critical path over seeded runs with the spread")
    p.add_argument(
        "folders", nargs="+", type=Path, help="one or more; a shape's launches pooled over them"
    )
    p.add_argument("--spread", type=float, required=True, help="cta_spread: a log's sd")
    p.add_argument("--seeds", type=_seeds, default=32, help="runs a shape (default 32)")
    p.add_argument(
        "--bootstrap",
        type=int,
        default=0,
        metavar="B",
        help="resample launches and runs B times: the modal verdict's own noise",
    )
    model_args(p)
    p.add_argument("--json", type=Path, help="write the report here too")
    a = ap.parse_args(argv)

    def make() -> Any:
        try:
            if a.cmd == "measure":
                return report(a.folders)
            if a.folds is not None and not a.folds.is_dir():
                raise InvalidInput("no such folder", where=str(a.folds))
            if a.bootstrap < 0:
                raise InvalidInput(f"{a.bootstrap}: 0 draws or more", where="--bootstrap")
            return path_report(
                a.folders, a.folds, a.profile, a.spread, a.seeds, a.stages, a.bootstrap
            )
        except (OSError, ValueError, KeyError) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    show = table if a.cmd == "measure" else path_table
    return report_main("cta_spread", make, show, a.json)


if __name__ == "__main__":
    sys.exit(main())
