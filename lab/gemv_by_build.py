"""The gemv's cost by build: its stages at one S = R x L across the builds (one an L).

(No GPU.) The Triton K1 compiles one kernel an L; R is a runtime argument. Shapes of one
S run the same gemv source at the same token count in different builds (1 x 2 and 2 x 1;
1 x 4, 2 x 2 and 4 x 1; ...), so a difference in the gemv's duration between them at
fixed S is the build's. For each launch set (a folder of traced launches, or trace
files; shapes read from each trace's meta) and each gemv stage (``load_x`` as traced:
mostly its wait for XRDY; ``load_x own``: from XRDY seen to its end; ``gemv0``,
``gemv1``, and ``gemv``: the two groups together), each gemv CTA's duration by what
shares its SM (``lab.makespan_parts``'s classes: ``alone``, ``attn``, the earlier and
the later of two gemv CTAs, ``idle``; and ``all``): per launch the median over its CTAs,
per shape the median of those launch medians and their range; ``last``: each launch's
longest (the gemv CTA a critical path through the gemv phase takes).

At each S with shapes of two or more builds, every pair of builds (the lower L first):
the difference of the shapes' medians (the higher L's less the lower's), whether the
launch ranges are apart, and how often a launch of the higher L has the longer median
(over every pair of launches; 1.0 or 0.0 where the ranges are apart). Beside it the
launch-to-launch spread of the set: the median over the shapes of a launch median's
largest distance from its shape's median. A set of one launch a shape has no spread:
its pairs are one launch against one (the CTAs' own p10..p90 in the JSON).

Then, for the gemv's cells, what a cost factor a build would be: each shape's median over
the geometric mean of its S's, and its L's factor as a leave-one-shape-out fold would
learn it, from the other shapes of that L (:func:`factors`).

Usage::

    python -m lab.gemv_by_build LABEL=PATH[,PATH...] ... [--json OUT]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from kda_sim.compare.spread import read_launch
from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gpu_jobs import report_main
from lab.makespan_parts import _neighbour

STAGES: tuple[str, ...] = ("load_x", "load_x own", "gemv0", "gemv1", "gemv")
ALL = "all"
LAST = "last"  # the cell of each launch's longest: one value a launch
XRDY = "XRDY"  # the poll load_x waits on


def _launch_files(spec: str) -> list[Path]:
    """A comma-separated list of folders (their ``*.json`` and ``*.json.gz``) and files."""
    out: list[Path] = []
    for part in spec.split(","):
        p = Path(part)
        if p.is_dir():
            out += sorted([*p.glob("*.json"), *p.glob("*.json.gz")])
        elif p.is_file():
            out.append(p)
        else:
            raise InvalidInput("no such file or folder", where=part)
    if not out:
        raise InvalidInput("no traces in it", where=spec)
    return out


def cta_stages(c: CtaTrack) -> dict[str, float]:
    """A gemv CTA's stage durations, ns, by :data:`STAGES` (those its trace has)."""
    by = {s.name: s for s in c.stages}
    out: dict[str, float] = {}
    if "load_x" in by:
        out["load_x"] = by["load_x"].dur
        seen = [p.satisfied for p in c.polls if p.label == XRDY and p.satisfied is not None]
        if seen:
            out["load_x own"] = by["load_x"].end - max(seen)
    for g in ("gemv0", "gemv1"):
        if g in by:
            out[g] = by[g].dur
    if "gemv0" in by and "gemv1" in by:
        out["gemv"] = by["gemv0"].dur + by["gemv1"].dur
    return out


def launch_cells(t: Timeline) -> dict[str, list[float]]:
    """Every gemv CTA's stage durations of one launch, by ``"STAGE NEIGHBOUR"`` and
    ``"STAGE all"``."""
    by_unit: dict[int | None, list[CtaTrack]] = {}
    for c in t.ctas:
        by_unit.setdefault(c.unit, []).append(c)
    cells: dict[str, list[float]] = {}
    for c in t.ctas:
        if c.role != "gemv":
            continue
        nb = _neighbour(t, c, by_unit)
        for k, v in cta_stages(c).items():
            cells.setdefault(f"{k} {nb}", []).append(v)
            cells.setdefault(f"{k} {ALL}", []).append(v)
    for k in [k for k in cells if k.endswith(f" {ALL}")]:
        # the launch's slowest gemv CTA: the one a critical path through the gemv takes
        cells[k.replace(f" {ALL}", f" {LAST}")] = [max(cells[k])]
    return cells


def _med(xs: list[float]) -> float:
    return float(statistics.median(xs))


def shape_summary(launches: list[dict[str, list[float]]]) -> dict[str, Any]:
    """Per cell: the launches' own medians, their median and range, and the pooled CTAs'
    p10 and p90."""
    keys = sorted({k for x in launches for k in x})
    out: dict[str, Any] = {}
    for k in keys:
        meds = [_med(x[k]) for x in launches if x.get(k)]
        pooled = [v for x in launches for v in x.get(k, [])]
        out[k] = {
            "launch_medians_ns": meds,
            "median_ns": _med(meds),
            "range_ns": [min(meds), max(meds)],
            "ctas_p10_p90_ns": [float(np.percentile(pooled, 10)), float(np.percentile(pooled, 90))],
            "ctas": len(pooled),
        }
    return out


def higher_longer(lo: list[float], hi: list[float]) -> float:
    """Over every pair of launches (one of each), how often the higher L's median is the
    longer (ties count a half)."""
    n = sum(1.0 if b > a else 0.5 if b == a else 0.0 for a in lo for b in hi)
    return n / (len(lo) * len(hi))


def compare_builds(shapes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """Every pair of shapes at one S in two builds, cell by cell."""
    by_s: dict[int, list[tuple[int, int]]] = {}
    for name in shapes:
        R, L = (int(x) for x in name.split("x"))
        by_s.setdefault(R * L, []).append((R, L))
    rows: list[dict[str, Any]] = []
    for S, rl in sorted(by_s.items()):
        for (r1, l1), (r2, l2) in combinations(sorted(rl, key=lambda x: x[1]), 2):
            a, b = shapes[f"{r1}x{l1}"], shapes[f"{r2}x{l2}"]
            for k in sorted(set(a) & set(b)):
                lo, hi = a[k], b[k]
                one = min(len(lo["launch_medians_ns"]), len(hi["launch_medians_ns"])) < 2
                sep = hi["range_ns"][0] > lo["range_ns"][1] or hi["range_ns"][1] < lo["range_ns"][0]
                apart = None if one else sep
                rows.append(
                    {
                        "S": S,
                        "lower": f"{r1}x{l1}",
                        "higher": f"{r2}x{l2}",
                        "cell": k,
                        "lower_ns": lo["median_ns"],
                        "higher_ns": hi["median_ns"],
                        "diff_ns": hi["median_ns"] - lo["median_ns"],
                        "ratio": hi["median_ns"] / lo["median_ns"] if lo["median_ns"] else None,
                        "apart": apart,
                        "higher_longer": higher_longer(
                            lo["launch_medians_ns"], hi["launch_medians_ns"]
                        ),
                        "launches": [len(lo["launch_medians_ns"]), len(hi["launch_medians_ns"])],
                    }
                )
    return rows


def spread(shapes: dict[str, dict[str, Any]]) -> dict[str, float | None]:
    """Per cell, the median over the shapes of the largest |launch median - its shape's
    median| (None where a shape has one launch)."""
    keys = sorted({k for s in shapes.values() for k in s})
    out: dict[str, float | None] = {}
    for k in keys:
        dev = [
            max(abs(m - s[k]["median_ns"]) for m in s[k]["launch_medians_ns"])
            for s in shapes.values()
            if k in s and len(s[k]["launch_medians_ns"]) > 1
        ]
        out[k] = _med(dev) if dev else None
    return out


def factors(shapes: dict[str, dict[str, Any]], cell: str) -> dict[str, dict[str, float | None]]:
    """What a cost factor a build (one an L) would be, for one cell: each shape's median
    over the geometric mean of the medians at its S (S with two or more builds only), and
    the factor its L would have with the shape held out (the median of the other shapes
    of its L; None where it has none): a fold that holds a shape out learns its L's
    factor from those."""
    by_s: dict[int, list[str]] = {}
    for name, s in shapes.items():
        if cell in s:
            R, L = (int(x) for x in name.split("x"))
            by_s.setdefault(R * L, []).append(name)
    rel: dict[str, float] = {}
    for names in by_s.values():
        if len(names) > 1:
            gm = float(np.exp(np.mean([np.log(shapes[n][cell]["median_ns"]) for n in names])))
            rel.update({n: shapes[n][cell]["median_ns"] / gm for n in names})
    out: dict[str, dict[str, float | None]] = {}
    for name, r in sorted(rel.items()):
        build = name.split("x")[1]
        others = [v for n, v in rel.items() if n != name and n.split("x")[1] == build]
        out[name] = {"own": r, "held_out": _med(others) if others else None}
    return out


FACTOR_CELLS = ("gemv all", "gemv last", "gemv1 all")


def launch_set(files: list[Path]) -> dict[str, Any]:
    """One launch set: per shape, :func:`shape_summary`; the pairs; the spread."""
    per: dict[tuple[int, int], list[dict[str, list[float]]]] = {}
    gpu = set()
    for p in tqdm(files, desc="launches", leave=False):
        t = read_launch(p)
        gpu.add(t.meta.gpu)
        per.setdefault((t.meta.R, t.meta.L), []).append(launch_cells(t))
    shapes = {f"{R}x{L}": shape_summary(v) for (R, L), v in sorted(per.items())}
    return {
        "gpu": sorted(gpu),
        "launches": {k: len(v) for k, v in ((f"{R}x{L}", v) for (R, L), v in per.items())},
        "shapes": shapes,
        "pairs": compare_builds(shapes),
        "spread_ns": spread(shapes),
        "factors": {k: factors(shapes, k) for k in FACTOR_CELLS},
    }


def collect(specs: list[str]) -> dict[str, Any]:
    """Every ``LABEL=PATH[,PATH...]`` launch set."""
    sets: dict[str, Any] = {}
    for spec in specs:
        label, _, paths = spec.rpartition("=")
        if not label:
            raise InvalidInput("want LABEL=PATH[,PATH...]", where=spec)
        sets[label] = launch_set(_launch_files(paths))
    return {"sets": sets}


def _cell(x: dict[str, Any]) -> str:
    """A shape's median, us, with its launches' range and count."""
    a, b = x["range_ns"]
    n = len(x["launch_medians_ns"])
    return f"{x['median_ns'] / 1e3:.2f} ({a / 1e3:.2f}..{b / 1e3:.2f}; {n})"


def _apart(a: bool | None) -> str:
    return "(one launch)" if a is None else "yes" if a else "no"


def table(rep: dict[str, Any], cells: tuple[str, ...] | None = None) -> str:
    """One row a (set, pair, cell): the two shapes' medians (launch range), the difference,
    the ratio, apart, how often the higher L is longer, and the set's spread."""
    lines = [
        "| set | S | lower L | higher L | cell | lower, us (launches) | higher, us (launches) "
        "| higher less lower, us | ratio | apart | higher longer | spread, us |",
        "|---" * 12 + "|",
    ]
    for label, s in rep["sets"].items():
        for p in s["pairs"]:
            if cells is not None and p["cell"] not in cells:
                continue
            lo, hi = s["shapes"][p["lower"]][p["cell"]], s["shapes"][p["higher"]][p["cell"]]
            sp = s["spread_ns"].get(p["cell"])

            ratio = "" if p["ratio"] is None else f"{p['ratio']:.3f}"
            floor = "" if sp is None else f"{sp / 1e3:.2f}"
            lines.append(
                f"| {label} | {p['S']} | {p['lower']} | {p['higher']} | {p['cell']} | {_cell(lo)} "
                f"| {_cell(hi)} | {p['diff_ns'] / 1e3:+.2f} | {ratio} | "
                f"{_apart(p['apart'])} | {p['higher_longer']:.2f} | {floor} |"
            )
    return "\n".join(lines)


def factor_table(rep: dict[str, Any]) -> str:
    """Per set and cell, each shape's factor at its S and its L's with it held out."""
    lines = [
        "| set | cell | shape: own factor at its S / its L's with it held out |",
        "|---|---|---|",
    ]
    for label, s in rep["sets"].items():
        for cell, f in s.get("factors", {}).items():
            if not f:
                continue
            parts = [
                f"{n} {v['own']:.3f} / "
                + ("-" if v["held_out"] is None else f"{v['held_out']:.3f}")
                for n, v in f.items()
            ]
            lines.append(f"| {label} | {cell} | " + ", ".join(parts) + " |")
    return "\n".join(lines)


MAIN_CELLS = tuple(
    f"{g} {n}"
    for g in ("gemv0", "gemv1", "gemv")
    for n in (ALL, LAST, "alone", "attn", "gemv-first", "gemv-second")
)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("sets", nargs="+", help="LABEL=PATH[,PATH...]: folders or trace files")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    ap.add_argument("--every-cell", action="store_true", help="every stage and neighbour")
    a = ap.parse_args(argv)
    return report_main(
        "gemv_by_build",
        lambda: collect(a.sets),
        lambda r: table(r, None if a.every_cell else MAIN_CELLS) + "\n\n" + factor_table(r),
        a.json,
    )


if __name__ == "__main__":
    sys.exit(main())
