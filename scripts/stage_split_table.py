"""Markdown tables docs/calibration.md shows for several ``kda-sim compare --json``
reports: per stage kind the median duration error (sim - real) / real of each shape and its
median over the shapes; each shape's makespan error; the critical path's stage kinds, real
against simulated; with ``--split``, the medians of each stage's parts (wait, load,
compute) over the shapes; with ``--floor``, how far a shape's launches land from their own
median, by kind.

Reports of one shape (the same configuration) are that shape's launches, compared with
one model: its row gives each error's median over them, the makespan's range, and the
launches whose critical path agrees (the shape agrees where more than half do).

Usage: ``python scripts/stage_split_table.py [--split | --floor] REPORT.json ...``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:+.0%}"


def _us(v: float | None) -> str:
    return "-" if v is None else f"{v / 1000:.2f}"


def _shape(report: dict) -> str:
    c = report["config"]
    return f"{c['R']}x{c['L']}"


def _by_shape(reports: list[dict]) -> dict[str, list[dict]]:
    """The reports grouped by shape, in the order the shapes first come."""
    out: dict[str, list[dict]] = {}
    for r in reports:
        out.setdefault(_shape(r), []).append(r)
    return out


def _kinds(reports: list[dict]) -> list[str]:
    return list(dict.fromkeys(k for r in reports for k in r["comparison"]["stage_split"]))


def _median(xs: list[float]) -> float | None:
    return float(np.median(xs)) if xs else None


def error_table(reports: list[dict]) -> str:
    kinds = _kinds(reports)
    head = "| shape | makespan | " + " | ".join(kinds) + " | path kinds agree |"
    lines = [head, "|" + "---|" * (len(kinds) + 3)]
    errs: dict[str, list[float]] = {k: [] for k in kinds}
    spans: list[float] = []
    agree = 0
    shapes = _by_shape(reports)
    for shape, rs in shapes.items():
        comps = [r["comparison"] for r in rs]
        ms = [c["makespan_err"] for c in comps]
        span = _median(ms)
        assert span is not None
        spans.append(abs(span))
        cell = _pct(span) if len(rs) == 1 else f"{_pct(span)} ({_pct(min(ms))}..{_pct(max(ms))})"
        row = [shape, cell]
        for k in kinds:
            es = [c["stage_split"][k]["dur_err"] for c in comps if k in c["stage_split"]]
            e = _median([x for x in es if x is not None])
            row.append(_pct(e))
            if e is not None:
                errs[k].append(e)
        ok = sum(bool(c["critical_path"]["kinds"]["agree"]) for c in comps)
        agree += 2 * ok > len(rs)
        if len(rs) == 1:
            row.append("yes" if ok else "no")
        else:
            row.append(f"{ok} of {len(rs)}")
        lines.append("| " + " | ".join(row) + " |")
    med = [_pct(_median(errs[k])) for k in kinds]
    lines.append(
        f"| median (makespan: max abs) | {max(spans):.1%} | "
        + " | ".join(med)
        + f" | {agree} of {len(shapes)} |"
    )
    return "\n".join(lines)


def floor_table(reports: list[dict]) -> str:
    """How far each shape's launches land from their own median: for the makespan and each
    kind's median duration, the largest |launch / median - 1| of a shape, and its median
    over the shapes (the floor under a model's error against one launch)."""
    kinds = _kinds(reports)
    head = "| shape | launches | makespan | " + " | ".join(kinds) + " |"
    lines = [head, "|" + "---|" * (len(kinds) + 3)]
    cols: dict[str, list[float]] = {k: [] for k in ["makespan", *kinds]}

    def worst(xs: list[float]) -> float | None:
        m = _median(xs)
        return max(abs(x / m - 1) for x in xs) if m else None

    for shape, rs in _by_shape(reports).items():
        comps = [r["comparison"] for r in rs]
        row = [shape, str(len(rs))]
        vals = {"makespan": worst([c["real_makespan_ns"] for c in comps])}
        for k in kinds:
            ds = [c["stage_split"].get(k, {}).get("real_dur_ns") for c in comps]
            vals[k] = worst([d for d in ds if d is not None])
        for k, v in vals.items():
            row.append("-" if v is None else f"{v:.0%}")
            if v is not None:
                cols[k].append(v)
        lines.append("| " + " | ".join(row) + " |")
    med = ["-" if not cols[k] else f"{_median(cols[k]):.0%}" for k in cols]
    lines.append("| median | | " + " | ".join(med) + " |")
    return "\n".join(lines)


def split_table(reports: list[dict]) -> str:
    """Medians over the shapes of each kind's median parts, real and simulated (us)."""
    kinds = _kinds(reports)
    parts = ("dur", "wait", "load", "compute")
    head = "| stage | " + " | ".join(f"{p} real | {p} sim" for p in parts) + " |"
    lines = [head, "|" + "---|" * (2 * len(parts) + 1)]
    for k in kinds:
        row = [k]
        for p in parts:
            for side in ("real", "sim"):
                v = [
                    r["comparison"]["stage_split"][k][f"{side}_{p}_ns"]
                    for r in reports
                    if k in r["comparison"]["stage_split"]
                ]
                v = [x for x in v if x is not None]
                row.append(_us(float(np.median(v))) if v else "-")
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    flags = {"--split": split_table, "--floor": floor_table}
    table = next((flags[a] for a in argv if a in flags), error_table)
    paths = [Path(a) for a in argv if a not in flags]
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        reports = [json.loads(p.read_text()) for p in paths]
        text = table(reports)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"not `kda-sim compare --json` reports ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
