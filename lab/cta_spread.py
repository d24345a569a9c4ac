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

Usage: ``python -m lab.cta_spread LABEL=TRACE_DIR ... [--json OUT]`` (each folder's
``k1_R{R}_L{L}_{i}.json``, as ``lab.trace_spread record`` writes them).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.compare.model import model_view
from kda_sim.compare.spread import launches_by_shape
from kda_sim.compare.stage_split import split_spans
from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gemv_tail import _rho
from lab.gpu_jobs import report_main
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


def _labelled(arg: str) -> tuple[str, Path]:
    label, sep, path = arg.partition("=")
    return (label, Path(path)) if sep else (Path(arg).name, Path(arg))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=_labelled, help="LABEL=DIR (or DIR)")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    a = ap.parse_args(argv)

    def make() -> list[dict[str, Any]]:
        try:
            return report(a.folders)
        except (OSError, ValueError, KeyError) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    return report_main("cta_spread", make, table, a.json)


if __name__ == "__main__":
    sys.exit(main())
