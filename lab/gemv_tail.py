"""Which gemv CTAs end gemv1 last, launch by launch, and by what: traces against the model.

(No GPU.) For each launch (a trace of our K1) and each gemv CTA: its CTA number, its SM,
what shares the SM (``lab.makespan_parts``'s classes), its start, its XRDY seen time
(load_x's poll) and its gemv1 end, times from the launch's first CTA start. Per shape
(launches pooled by the traces' meta): the spread of the gemv1 ends (last less first),
the tail (each launch's ``TAIL`` last gemv1 ends): its CTAs' classes and numbers against
all gemv CTAs', the rank correlation (Spearman) of the gemv1 end with each covariate,
each class's median gemv1 end less its launch's median, and whether the tail is the same
CTAs launch to launch (the mean overlap of two launches' tails, and the rank correlation
of the CTAs' gemv1 ends between two launches). With ``--profile``, the same of the model,
each launch simulated as ``kda-sim compare`` runs it (the trace's placement).

Usage: ``python -m lab.gemv_tail TRACE.json ... [--profile P | --folds DIR] [--json OUT]``
(``--folds DIR``: each shape's model is ``DIR/fold_R{R}_L{L}.json``).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

from kda_sim.compare.counterpart import like_profile, read_k1_trace, simulate_like
from kda_sim.compare.model import model_view
from kda_sim.errors import InvalidInput
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gemv_by_build import XRDY
from lab.gpu_jobs import report_main
from lab.makespan_parts import _neighbour

TAIL = 10  # a launch's last gemv1 ends taken as its tail (5 % of the 197 gemv CTAs)
COVARIATES: tuple[str, ...] = ("cta", "sm", "start", "xrdy")
CLASSES: tuple[str, ...] = ("alone", "attn", "gemv-first", "gemv-second")


def _stage_end(c: CtaTrack, name: str) -> float:
    return next(s.end for s in c.stages if s.name == name)


def gemv_rows(tl: Timeline) -> list[dict[str, Any]]:
    """Each gemv CTA of one launch: its number, SM, class, start, XRDY seen and gemv1 end,
    ns from the launch's first CTA start."""
    t0 = min(c.start for c in tl.ctas if c.start is not None)
    by_unit: dict[int | None, list[CtaTrack]] = defaultdict(list)
    for c in tl.ctas:
        by_unit[c.unit].append(c)
    rows = []
    for c in tl.ctas:
        if c.role != "gemv" or c.start is None:
            continue
        seen = [p.satisfied for p in c.polls if p.label == XRDY and p.satisfied is not None]
        rows.append(
            {
                "cta": c.cta,
                "sm": c.unit,
                "class": _neighbour(tl, c, by_unit),
                "start": c.start - t0,
                "xrdy": (max(seen) - t0) if seen else None,
                "end": _stage_end(c, "gemv1") - t0,
            }
        )
    return rows


def _rho(xs: list[float], ys: list[float]) -> float | None:
    pairs = [(x, y) for x, y in zip(xs, ys, strict=True) if x is not None]
    if len(pairs) < 3 or len({p[0] for p in pairs}) < 2:
        return None
    r = spearmanr([p[0] for p in pairs], [p[1] for p in pairs]).statistic
    return None if np.isnan(r) else round(float(r), 2)


def _tail(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["end"])[-TAIL:]


def summary(launches: list[list[dict[str, Any]]]) -> dict[str, Any]:
    """One shape's launches (each :func:`gemv_rows`) pooled: see the module's doc."""
    spreads, rho, by_class, tails = [], defaultdict(list), defaultdict(list), []
    tail_class: dict[str, int] = defaultdict(int)
    all_class: dict[str, int] = defaultdict(int)
    tail_cta: list[int] = []
    for rows in launches:
        ends = [r["end"] for r in rows]
        med = float(np.median(ends))
        spreads.append(max(ends) - min(ends))
        for k in COVARIATES:
            r = _rho([x[k] for x in rows], ends)
            if r is not None:
                rho[k].append(r)
        for r in rows:
            by_class[r["class"]].append(r["end"] - med)
            all_class[r["class"]] += 1
        tl = _tail(rows)
        tails.append({r["cta"] for r in tl})
        for r in tl:
            tail_class[r["class"]] += 1
            tail_cta.append(r["cta"])
    overlap = [len(a & b) / TAIL for a, b in combinations(tails, 2)]
    by_cta = [{r["cta"]: r["end"] for r in rows} for rows in launches]
    same = []
    for a, b in combinations(by_cta, 2):
        common = sorted(set(a) & set(b))
        r = _rho([a[c] for c in common], [b[c] for c in common])
        if r is not None:
            same.append(r)
    n_all = sum(all_class.values())
    n_tail = sum(tail_class.values())
    return {
        "launches": len(launches),
        "spread ns": [round(min(spreads)), round(max(spreads))],
        "rho": {k: round(float(np.median(v)), 2) for k, v in rho.items()},
        "class end less median ns": {
            k: round(float(np.median(v))) for k, v in by_class.items() if v
        },
        "class share all": {k: round(all_class[k] / n_all, 2) for k in CLASSES},
        "class share tail": {k: round(tail_class[k] / n_tail, 2) for k in CLASSES},
        "tail cta median": round(float(np.median(tail_cta))),
        "tail cta range": [min(tail_cta), max(tail_cta)],
        "tail overlap": round(float(np.mean(overlap)), 2) if overlap else None,
        "rank corr by cta": round(float(np.median(same)), 2) if same else None,
        "tail ctas": sorted(set(tail_cta)),
    }


def _model(tl: Timeline, profile: str) -> Timeline:
    return simulate_like(tl, like_profile(tl, profile)).timeline


def report(traces: list[Path], profile: str | None, folds: Path | None) -> list[dict[str, Any]]:
    by_shape: dict[tuple[int, int], list[Timeline]] = defaultdict(list)
    for t in traces:
        tl = read_k1_trace(t)
        cfg = model_view(tl).cfg
        by_shape[(cfg.R, cfg.L)].append(tl)
    out = []
    for (R, L), tls in sorted(by_shape.items()):
        row: dict[str, Any] = {"shape": f"{R}x{L}", "real": summary([gemv_rows(t) for t in tls])}
        prof = str(folds / f"fold_R{R}_L{L}.json") if folds is not None else profile
        if prof is not None:
            row["model"] = summary([gemv_rows(_model(t, prof)) for t in tls])
        out.append(row)
    return out


def _share(s: dict[str, Any]) -> str:
    return " / ".join(f"{s['class share tail'][k]:.2f}" for k in CLASSES)


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| shape | side | gemv1 ends spread, us | tail's classes (alone / attn / gemv-first /"
        " gemv-second), all's | class end less median, ns (same order) | tail CTAs: median"
        " (range) | rho: cta / sm / start / xrdy | tail overlap | rank corr by CTA |"
    )
    lines = [head, "|" + "---|" * 9]
    for r in rows:
        for side in ("real", "model"):
            s = r.get(side)
            if s is None:
                continue
            sp = s["spread ns"]
            alls = " / ".join(f"{s['class share all'][k]:.2f}" for k in CLASSES)
            ce = " / ".join(
                "-"
                if k not in s["class end less median ns"]
                else f"{s['class end less median ns'][k]:+d}"
                for k in CLASSES
            )
            rho = " / ".join(
                "-" if s["rho"].get(k) is None else f"{s['rho'][k]:+.2f}" for k in COVARIATES
            )
            lo, hi = s["tail cta range"]
            lines.append(
                f"| {r['shape']} | {side} | {sp[0] / 1e3:.1f}..{sp[1] / 1e3:.1f}"
                f" | {_share(s)} ({alls})"
                f" | {ce} | {s['tail cta median']} ({lo}..{hi}) | {rho} | {s['tail overlap']}"
                f" | {s['rank corr by cta']} |"
            )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+", type=Path)
    ap.add_argument("--profile", help="a bundled profile's name or a file: the model beside")
    ap.add_argument("--folds", type=Path, help="a folder of fold_R{R}_L{L}.json: each shape's")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    a = ap.parse_args(argv)
    if a.folds is not None and not a.folds.is_dir():
        print(f"gemv_tail: no such folder: {a.folds}", file=sys.stderr)
        return 2

    def make() -> list[dict[str, Any]]:
        try:
            return report(a.traces, a.profile, a.folds)
        except (OSError, ValueError, StopIteration) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    return report_main("gemv_tail", make, table, a.json)


if __name__ == "__main__":
    sys.exit(main())
