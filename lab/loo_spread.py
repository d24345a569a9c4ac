"""Leave one shape out against many launches a shape: fold profiles scored on a spread.

(No GPU.) A leave-one-shape-out fold is a profile fitted with one shape held out
(``fold_R{R}_L{L}.json``, as the refit recipe's ``run.sh`` writes them). Scored against one
launch of the held-out shape it inherits that launch's noise (two launches of a shape land
0.7 to 3.2 % apart, and take the same critical path at only about half the shapes), so here
each fold is run against every launch of its shape in a spread folder (``k1_R{R}_L{L}_{i}
.json``, as ``lab.trace_spread record`` writes them), each launch placed as it ran, as
``kda-sim spread`` runs the model. Per shape:

- the makespan error against each launch: the median of the absolute errors (what the
  done-when figure counts, within 5 %), and the signed errors' median and range;
- each stage kind's duration error, pooled: the median duration of the kind over every
  matched stage of all the launches, simulated against real (``compare``'s by-stage
  medians, taken over the launches together);
- the critical path by stage kinds (``compare``'s "path kinds agree"): the share of the
  launches whose path the model's run of that launch matches, and whether the model's
  most-taken path is the launches' most-taken (modal) one. Where the launches' or the
  model's runs tie for most-taken, the verdict is "tie" when the tied paths share one, so
  the count of shapes says how many need a tie to agree.

- the near-critical set (``kda_sim.timeline.joins``): for each launch, the least slack of
  one join whose swap gives the model's path the launch's stage kinds, or the launch's
  path the model's ("swap slack"); the launches agreeing strictly and within
  ``--near`` ns; whether the launches' modal path is within the model's near-critical set
  at half its runs or more; and between the launches themselves, the share of ordered
  pairs agreeing strictly and within the threshold.

``--profile P`` scores one profile against every shape (a bundled fit: not held out for
the shapes it was fitted on). ``medoids`` picks each shape's launch of median makespan (the
lower middle of an even count), the typical launch to train a fold on.

Usage::

    python -m lab.loo_spread score SPREAD_DIR (--folds DIR | --profile P) [--json OUT]
    python -m lab.loo_spread medoids SPREAD_DIR --out DIR
    python -m lab.loo_spread joins SPREAD_DIR [--json OUT]

``joins`` measures how far a join's slack moves from launch to launch of a shape: at
every join of every launch's critical path, the gap between the same two predecessors'
ready times in each launch of the shape, and its median pairwise difference (beside it,
the join's own time's): what sets ``compare``'s default ``--near``.
"""

from __future__ import annotations

import argparse
import itertools
import math
import os
import shutil
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kda_sim.compare.diff import Comparison, real_side
from kda_sim.compare.spread import launches_by_shape, model_comparison, read_launch
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.timeline import Timeline
from kda_sim.timeline.critical import critical_path, stage_kinds
from kda_sim.timeline.joins import NEAR_NS, Join, NearCritical, Ready, Sources, near_critical
from lab.gpu_jobs import report_main

MAKESPAN_BAR = 0.05  # issue 38's done-when: a held-out makespan within 5 %
KIND_BAR = 0.15  # ... and every stage kind's median duration within 15 %
PATH_BAR = 7  # ... and the critical path's stage kinds on at least 7 of the 9 shapes

Path_ = tuple[str, ...]


def fold_file(folds: Path, R: int, L: int) -> Path:
    """The fold profile that held shape (R, L) out, as ``run.sh`` names it."""
    return folds / f"fold_R{R}_L{L}.json"


def modes(paths: list[Path_]) -> list[Path_]:
    """The most-taken paths (more than one where they tie)."""
    n = Counter(paths)
    top = max(n.values())
    return sorted(p for p, c in n.items() if c == top)


def modal_verdict(real: list[Path_], sim: list[Path_]) -> str:
    """ "yes": the model's most-taken path is the launches' most-taken, neither tied;
    "tie": they share one only with a tie on either side; "no": they share none."""
    r, s = modes(real), modes(sim)
    if not set(r) & set(s):
        return "no"
    return "yes" if len(r) == 1 and len(s) == 1 else "tie"


def _within(slack: float | None, near: float) -> bool:
    return slack is not None and slack < near


def side_slacks(c: Comparison) -> tuple[float | None, float | None]:
    """(the least slack of a join of the launch's path whose swap gives the model's stage
    kinds, the same of the model's path giving the launch's); None where no swap does."""
    return (
        c.real_near.slack_to(c.sim_kinds) if c.real_near else None,
        c.sim_near.slack_to(c.real_kinds) if c.sim_near else None,
    )


def swap_slack(c: Comparison) -> float | None:
    """The least slack of one join whose swap makes the two paths' stage kinds agree
    (0: they agree as they are; None: no single swap does)."""
    if c.kinds_agree:
        return 0.0
    return min((x for x in side_slacks(c) if x is not None), default=None)


def near_counts(comps: list[Comparison], near: float) -> dict[str, Any]:
    """The near-critical figures of one shape (see the module docstring); ``comps`` built
    with every rival (``near_ns`` infinite) so that any threshold reads them."""
    real_paths = [tuple(stage_kinds(c.real_kinds)) for c in comps]
    swaps = [swap_slack(c) for c in comps]
    modal = modes(real_paths)

    def near_set(nc: NearCritical | None, own: list[str], m: Path_) -> bool:
        return tuple(stage_kinds(own)) == m or (nc is not None and _within(nc.slack_to(m), near))

    modal_runs = sum(any(near_set(c.sim_near, c.sim_kinds, m) for m in modal) for c in comps)
    pairs = list(itertools.permutations(range(len(comps)), 2))

    def pair_slack(i: int, j: int) -> float | None:
        if real_paths[i] == real_paths[j]:
            return 0.0
        a, b = comps[i].real_near, comps[j].real_near
        got = [
            x
            for x in (a and a.slack_to(real_paths[j]), b and b.slack_to(real_paths[i]))
            if x is not None
        ]
        return min(got, default=None)

    ps = [pair_slack(i, j) for i, j in pairs]
    same = [real_paths[i] == real_paths[j] for i, j in pairs]
    return {
        "near_ns": near,
        "swap_slack_ns": swaps,
        # where they differ: the swap on the launch's side and on the model's
        "swap_slack_real_ns": [None if c.kinds_agree else side_slacks(c)[0] for c in comps],
        "swap_slack_sim_ns": [None if c.kinds_agree else side_slacks(c)[1] for c in comps],
        "agree_strict": sum(c.kinds_agree for c in comps),
        "agree_within": sum(
            c.kinds_agree or _within(x, near) for c, x in zip(comps, swaps, strict=True)
        ),
        "modal_within_runs": modal_runs,
        "modal_within": modal_runs * 2 >= len(comps),
        "pair_slack_ns": ps,
        "pair_strict_frac": sum(same) / len(ps) if ps else None,
        "pair_within_frac": sum(a or _within(x, near) for a, x in zip(same, ps, strict=True))
        / len(ps)
        if ps
        else None,
    }


def score_shape(comps: list[Comparison], near: float = NEAR_NS) -> dict[str, Any]:
    """One shape's comparisons (the model against each of its launches) as the table reads
    them (see the module docstring)."""
    ms = [c.makespan_err or 0.0 for c in comps]
    kinds: dict[str, dict[str, float]] = {}
    for k in STAGES:
        real = [m.real_dur for c in comps for m in c.matched if m.stage == k]
        sim = [m.sim_dur for c in comps for m in c.matched if m.stage == k]
        if real:
            r, s = statistics.median(real), statistics.median(sim)
            kinds[k] = {"n": len(real), "real_median_ns": r, "sim_median_ns": s, "err": s / r - 1}
    real_paths = [tuple(stage_kinds(c.real_kinds)) for c in comps]
    sim_paths = [tuple(stage_kinds(c.sim_kinds)) for c in comps]
    return {
        "launches": len(comps),
        "makespan_err": ms,
        "makespan_abs_median": statistics.median(abs(e) for e in ms),
        "makespan_median": statistics.median(ms),
        "kinds": kinds,
        "path_agree_frac": sum(c.kinds_agree for c in comps) / len(comps),
        "real_modes": [list(p) for p in modes(real_paths)],
        # how often a launch of the shape takes its modal path: the floor under "modal"
        "real_mode_share": Counter(real_paths).most_common(1)[0][1] / len(comps),
        "sim_modes": [list(p) for p in modes(sim_paths)],
        "modal": modal_verdict(real_paths, sim_paths),
        "near": near_counts(comps, near),
    }


def summary(shapes: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The done-when counts over the shapes."""
    ms = {s: r["makespan_abs_median"] for s, r in shapes.items()}
    worst = max(ms, key=lambda s: ms[s])
    med = {
        k: statistics.median(r["kinds"][k]["err"] for r in shapes.values() if k in r["kinds"])
        for k in STAGES
        if any(k in r["kinds"] for r in shapes.values())
    }
    cells = [abs(r["kinds"][k]["err"]) <= KIND_BAR for r in shapes.values() for k in r["kinds"]]
    verdicts = Counter(r["modal"] for r in shapes.values())
    return {
        "shapes": len(shapes),
        "makespans_within": sum(v <= MAKESPAN_BAR for v in ms.values()),
        "makespan_worst": {"shape": worst, "median_abs": ms[worst]},
        "makespan_abs_median_over_shapes": statistics.median(ms.values()),
        "kind_median_err": med,
        "kinds_within": sum(abs(v) <= KIND_BAR for v in med.values()),
        "kinds_out": {k: v for k, v in med.items() if abs(v) > KIND_BAR},
        "cells_within": sum(cells),
        "cells": len(cells),
        "modal_yes": verdicts["yes"],
        "modal_tie": verdicts["tie"],
        "path_agree_sum": sum(r["path_agree_frac"] for r in shapes.values()),
        "real_mode_sum": sum(r["real_mode_share"] for r in shapes.values()),
        "near": {
            "near_ns": next(iter(shapes.values()))["near"]["near_ns"],
            "agree_strict_sum": sum(
                r["near"]["agree_strict"] / r["launches"] for r in shapes.values()
            ),
            "agree_within_sum": sum(
                r["near"]["agree_within"] / r["launches"] for r in shapes.values()
            ),
            "modal_within": sum(r["near"]["modal_within"] for r in shapes.values()),
            # shapes where half the launches or more agree, strictly and within
            "shapes_half_strict": sum(
                2 * r["near"]["agree_strict"] >= r["launches"] for r in shapes.values()
            ),
            "shapes_half_within": sum(
                2 * r["near"]["agree_within"] >= r["launches"] for r in shapes.values()
            ),
            "pair_strict_sum": sum(r["near"]["pair_strict_frac"] or 0.0 for r in shapes.values()),
            "pair_within_sum": sum(r["near"]["pair_within_frac"] or 0.0 for r in shapes.values()),
        },
    }


def score(
    folder: Path,
    folds: Path | None = None,
    profile: str | None = None,
    progress: bool = True,
    near: float = NEAR_NS,
) -> dict[str, Any]:
    """Each shape's fold (or ``profile``) against every launch of the shape in ``folder``
    (the near-critical figures at ``near`` ns). Raises InvalidInput where a fold file is
    missing."""
    groups = launches_by_shape(folder)
    if folds is not None:
        for R, L in groups:
            if not fold_file(folds, R, L).is_file():
                raise InvalidInput("no such fold profile", where=str(fold_file(folds, R, L)))
    shapes: dict[str, dict[str, Any]] = {}
    bar = tqdm(total=sum(len(v) for v in groups.values()), desc="launches", disable=not progress)
    for (R, L), paths in groups.items():
        prof = str(fold_file(folds, R, L)) if folds is not None else profile
        comps = []
        for p in paths:
            comps.append(model_comparison(read_launch(p), prof, near_ns=math.inf)[1])
            bar.update()
        shapes[f"{R}x{L}"] = {
            "profile": prof,
            "files": [p.name for p in paths],
            **score_shape(comps, near),
        }
    bar.close()
    return {
        "folder": str(folder),
        "folds": str(folds) if folds is not None else None,
        "profile": profile,
        "shapes": shapes,
        "summary": summary(shapes),
    }


def _pct(x: float, digits: int = 0) -> str:
    return f"{100 * x:+.{digits}f}%"


def table(rep: dict[str, Any]) -> str:
    """The report as a markdown table, one row a shape, a median row and the counts."""
    shapes, sm = rep["shapes"], rep["summary"]
    kinds = list(sm["kind_median_err"])
    lines = [
        "| shape | makespan, median abs (signed: median, range) | "
        + " | ".join(kinds)
        + " | path: launches agreeing | modal path |",
        "|---" * (len(kinds) + 4) + "|",
    ]
    for s, r in shapes.items():
        e = r["makespan_err"]
        cells = [_pct(r["kinds"][k]["err"]) if k in r["kinds"] else "" for k in kinds]
        lines.append(
            f"| {s} | {100 * r['makespan_abs_median']:.1f}% ({_pct(r['makespan_median'], 1)}; "
            f"{_pct(min(e), 1)} to {_pct(max(e), 1)}) | "
            + " | ".join(cells)
            + f" | {round(r['path_agree_frac'] * r['launches'])} of {r['launches']} "
            f"| {r['modal']} |"
        )
    w = sm["makespan_worst"]
    lines.append(
        f"| median (makespan: max {100 * w['median_abs']:.1f}%, {w['shape']}) | "
        f"{100 * sm['makespan_abs_median_over_shapes']:.1f}% | "
        + " | ".join(_pct(sm["kind_median_err"][k]) for k in kinds)
        + f" | {sm['path_agree_sum']:.1f} of {sm['shapes']} | {sm['modal_yes']} of "
        f"{sm['shapes']} (+{sm['modal_tie']} tie) |"
    )
    out = ", ".join(f"{k} {_pct(v)}" for k, v in sm["kinds_out"].items())
    lines += [
        "",
        f"makespans within {100 * MAKESPAN_BAR:.0f}% (median abs over the launches): "
        f"{sm['makespans_within']} of {sm['shapes']}; kinds within {100 * KIND_BAR:.0f}% "
        f"(median over the shapes): {sm['kinds_within']} of {len(kinds)}"
        + (f" (out: {out})" if out else "")
        + f"; shape-kind cells within {100 * KIND_BAR:.0f}%: {sm['cells_within']} of "
        f"{sm['cells']}; model's path the modal one: {sm['modal_yes']} of {sm['shapes']}, "
        f"{sm['modal_yes'] + sm['modal_tie']} with ties (bar {PATH_BAR}); a launch's path "
        f"on average {sm['path_agree_sum']:.1f} of {sm['shapes']} (a launch takes its "
        f"shape's modal path at {sm['real_mode_sum']:.1f})",
    ]
    return "\n".join(lines)


def _ns(x: float | None) -> str:
    return "none" if x is None else f"{x:.0f}"


def near_table(rep: dict[str, Any]) -> str:
    """The near-critical figures, one row a shape: the swap slack of each launch (ns,
    sorted), the launches agreeing strictly and within the threshold, the modal path
    within the model's near set, and pairs of launches agreeing strictly and within."""
    shapes, sm = rep["shapes"], rep["summary"]["near"]
    near = sm["near_ns"]
    lines = [
        f"| shape | swap slack, each launch (ns) | launches agreeing: strict, within {near:.0f} ns "
        "| modal path within the model's set (runs) | launch pairs: strict, within |",
        "|---|---|---|---|---|",
    ]
    for s, r in shapes.items():
        n = r["near"]
        sw = sorted(n["swap_slack_ns"], key=lambda x: math.inf if x is None else x)
        lines.append(
            f"| {s} | {' '.join(_ns(x) for x in sw)} | {n['agree_strict']}, {n['agree_within']} "
            f"of {r['launches']} | {'yes' if n['modal_within'] else 'no'} "
            f"({n['modal_within_runs']} of {r['launches']}) | "
            f"{100 * (n['pair_strict_frac'] or 0):.0f}%, "
            f"{100 * (n['pair_within_frac'] or 0):.0f}% |"
        )
    k = len(shapes)
    lines += [
        f"| shapes agreeing, on average | | {sm['agree_strict_sum']:.1f}, "
        f"{sm['agree_within_sum']:.1f} of {k} | {sm['modal_within']} of {k} | "
        f"{sm['pair_strict_sum']:.1f}, {sm['pair_within_sum']:.1f} of {k} |",
        "",
        f"within {near:.0f} ns: a launch's path agrees with the model's on average at "
        f"{sm['agree_within_sum']:.1f} of {k} shapes (strict {sm['agree_strict_sum']:.1f}; bar "
        f"{PATH_BAR}); the modal path within the model's set at {sm['modal_within']} of {k}; "
        f"two launches at {sm['pair_within_sum']:.1f} (strict {sm['pair_strict_sum']:.1f}); "
        f"shapes where half the launches or more agree: {sm['shapes_half_within']} within, "
        f"{sm['shapes_half_strict']} strict",
    ]
    return "\n".join(lines)


def _ready(tl: Timeline, src: Sources, j: Join, r: Ready) -> float | None:
    """When predecessor ``r`` of a join like ``j`` (same CTA, poll) was ready in ``tl``."""
    if r.kind == "end":
        return tl.ctas[r.cta].end
    track = tl.ctas[j.cta]
    key = (j.stage, j.task, j.label)
    i = next((i for i, p in enumerate(track.polls) if (p.stage, p.task, p.label) == key), None)
    if i is None:
        return None
    if r.kind == "order":
        return track.polls[i].first_issue
    ts = [t for c, t in src(j.cta, i) if c == r.cta]
    return max(ts) if ts else None


def _join_at(tl: Timeline, j: Join) -> float | None:
    if j.kind != "poll":
        return tl.ctas[j.cta].end if j.kind == "end" else tl.ctas[j.cta].start
    key = (j.stage, j.task, j.label)
    return next(
        (p.satisfied for p in tl.ctas[j.cta].polls if (p.stage, p.task, p.label) == key), None
    )


def _pair_spread(xs: list[float]) -> float | None:
    d = [abs(a - b) for a, b in itertools.combinations(xs, 2)]
    return statistics.median(d) if d else None


def join_spread(folder: Path, progress: bool = True) -> dict[str, Any]:
    """How far each join's slack and time move between launches of a shape (see the
    module docstring): per shape the joins of every launch's path, each with its gap (the
    predecessor taken less the runner-up, ready times) in every launch and the median
    pairwise difference of the gaps and of the join's time; and the medians over all."""
    shapes: dict[str, Any] = {}
    gap_spreads: list[float] = []
    at_spreads: list[float] = []
    groups = launches_by_shape(folder)
    for (R, L), paths in tqdm(groups.items(), desc="shapes", disable=not progress):
        sides = [real_side(read_launch(p))[:2] for p in paths]
        keys: dict[tuple, Join] = {}
        for tl, src in sides:
            cp = critical_path(tl)
            if cp is None:
                continue
            for j in near_critical(tl, cp, 0.0, src).joins:
                if j.runner_up is not None:
                    who = (j.taken.kind, j.taken.cta, j.runner_up.kind, j.runner_up.cta)
                    keys.setdefault((j.kind, j.cta, j.stage, j.task, j.label, *who), j)
        rows = []
        for j in keys.values():
            gaps, ats = [], []
            for tl, src in sides:
                a, b = _ready(tl, src, j, j.taken), _ready(tl, src, j, j.runner_up)  # type: ignore[arg-type]
                if a is not None and b is not None:
                    gaps.append(a - b)
                at = _join_at(tl, j)
                if at is not None:
                    ats.append(at)
            g, t = _pair_spread(gaps), _pair_spread(ats)
            if g is not None:
                gap_spreads.append(g)
            if t is not None:
                at_spreads.append(t)
            rows.append(
                {
                    "join": j.summary(),
                    "gaps_ns": gaps,
                    "gap_pair_spread_ns": g,
                    "at_pair_spread_ns": t,
                }
            )
        shapes[f"{R}x{L}"] = {
            "joins": rows,
            "gap_pair_spread_median_ns": statistics.median(
                [r["gap_pair_spread_ns"] for r in rows if r["gap_pair_spread_ns"] is not None]
            ),
        }
    return {
        "folder": str(folder),
        "shapes": shapes,
        "gap_pair_spread_median_ns": statistics.median(gap_spreads),
        "at_pair_spread_median_ns": statistics.median(at_spreads),
        "joins": len(gap_spreads),
    }


def joins_table(rep: dict[str, Any]) -> str:
    lines = [
        f"{s}: {len(r['joins'])} joins, gap spread median {r['gap_pair_spread_median_ns']:.0f} ns"
        for s, r in rep["shapes"].items()
    ]
    lines.append(
        f"over {rep['joins']} joins: a join's gap (taken less runner-up) moves between two "
        f"launches by a median {rep['gap_pair_spread_median_ns']:.0f} ns; its time by "
        f"{rep['at_pair_spread_median_ns']:.0f} ns"
    )
    return "\n".join(lines)


def write_medoids(folder: Path, out: Path) -> dict[str, str]:
    """Each shape's launch of median makespan (the lower middle of an even count) copied
    to ``out/k1_R{R}_L{L}.json`` (to train on, as ``run.sh``'s T reads) and, under its own
    name, to ``out/alone/`` (a spread folder of one launch a shape, to score on)."""
    if os.path.lexists(out):
        raise InvalidInput("exists; name a new folder", where=str(out))
    if not out.parent.is_dir():
        raise InvalidInput("no such directory", where=str(out.parent))
    chosen: dict[str, str] = {}
    picks: list[tuple[int, int, Path]] = []
    for (R, L), paths in launches_by_shape(folder).items():
        ms = [(read_launch(p).makespan or 0.0, p) for p in paths]
        m = statistics.median_low([x for x, _ in ms])
        p = next(p for x, p in ms if x == m)
        picks.append((R, L, p))
        chosen[f"{R}x{L}"] = p.name
    (out / "alone").mkdir(parents=True, exist_ok=True)
    for R, L, p in picks:
        shutil.copyfile(p, out / f"k1_R{R}_L{L}.json")
        shutil.copyfile(p, out / "alone" / p.name)
    return chosen


def add_spread_args(p: argparse.ArgumentParser) -> None:
    """A spread folder and what runs the model on it: fold profiles or one profile."""
    p.add_argument("folder", type=Path, help="a spread folder (k1_R{R}_L{L}_{i}.json)")
    g = p.add_mutually_exclusive_group(required=True)
    g.add_argument("--folds", type=Path, help="a folder of fold_R{R}_L{L}.json profiles")
    g.add_argument("--profile", help="one profile (a name or a file) for every shape")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("score", help="fold profiles (or one profile) against a spread folder")
    add_spread_args(s)
    s.add_argument("--json", type=Path, default=None, help="also write the report here")
    s.add_argument(
        "--near",
        type=float,
        default=NEAR_NS,
        help=f"near-critical threshold, ns (default {NEAR_NS:.0f})",
    )
    j = sub.add_parser("joins", help="how far each join's slack moves between launches")
    j.add_argument("folder", type=Path)
    j.add_argument("--json", type=Path, default=None, help="also write the report here")
    m = sub.add_parser("medoids", help="each shape's launch of median makespan")
    m.add_argument("folder", type=Path)
    m.add_argument("--out", type=Path, required=True, help="a new folder")
    a = ap.parse_args(argv)
    if a.cmd == "score":
        return report_main(
            "loo_spread",
            lambda: score(a.folder, a.folds, a.profile, near=a.near),
            lambda r: table(r) + "\n\n" + near_table(r),
            a.json,
        )
    if a.cmd == "joins":
        return report_main("loo_spread", lambda: join_spread(a.folder), joins_table, a.json)
    return report_main(
        "loo_spread",
        lambda: write_medoids(a.folder, a.out),
        lambda d: "\n".join(f"{k}: {v}" for k, v in d.items()),
        None,
    )


if __name__ == "__main__":
    sys.exit(main())
