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

``--profile P`` scores one profile against every shape (a bundled fit: not held out for
the shapes it was fitted on). ``medoids`` picks each shape's launch of median makespan (the
lower middle of an even count), the typical launch to train a fold on.

Usage::

    python -m lab.loo_spread score SPREAD_DIR (--folds DIR | --profile P) [--json OUT]
    python -m lab.loo_spread medoids SPREAD_DIR --out DIR
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kda_sim.compare.diff import Comparison
from kda_sim.compare.spread import launches_by_shape, model_comparison, read_launch
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.spec import STAGES
from kda_sim.timeline.critical import stage_kinds
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


def score_shape(comps: list[Comparison]) -> dict[str, Any]:
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
    }


def score(
    folder: Path,
    folds: Path | None = None,
    profile: str | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """Each shape's fold (or ``profile``) against every launch of the shape in ``folder``.
    Raises InvalidInput where a fold file is missing."""
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
            comps.append(model_comparison(read_launch(p), prof)[1])
            bar.update()
        shapes[f"{R}x{L}"] = {
            "profile": prof,
            "files": [p.name for p in paths],
            **score_shape(comps),
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
    m = sub.add_parser("medoids", help="each shape's launch of median makespan")
    m.add_argument("folder", type=Path)
    m.add_argument("--out", type=Path, required=True, help="a new folder")
    a = ap.parse_args(argv)
    if a.cmd == "score":
        return report_main("loo_spread", lambda: score(a.folder, a.folds, a.profile), table, a.json)
    return report_main(
        "loo_spread",
        lambda: write_medoids(a.folder, a.out),
        lambda d: "\n".join(f"{k}: {v}" for k, v in d.items()),
        None,
    )


if __name__ == "__main__":
    sys.exit(main())
