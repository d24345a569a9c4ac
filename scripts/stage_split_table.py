"""Markdown tables docs/calibration.md shows for several ``kda-sim compare --json``
reports (one a shape): per stage kind the median duration error (sim - real) / real of
each shape and its median over the shapes; each shape's makespan error; the critical
path's stage kinds, real against simulated; and, with ``--split``, the medians of each
stage's parts (wait, load, compute) over the shapes.

Usage: ``python scripts/stage_split_table.py [--split] REPORT.json ...``.
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


def error_table(reports: list[dict]) -> str:
    kinds = list(dict.fromkeys(k for r in reports for k in r["comparison"]["stage_split"]))
    head = "| shape | makespan | " + " | ".join(kinds) + " | path kinds agree |"
    lines = [head, "|" + "---|" * (len(kinds) + 3)]
    errs: dict[str, list[float]] = {k: [] for k in kinds}
    spans: list[float] = []
    agree = 0
    for r in reports:
        c = r["comparison"]
        row = [_shape(r), _pct(c["makespan_err"])]
        spans.append(abs(c["makespan_err"]))
        for k in kinds:
            e = c["stage_split"].get(k, {}).get("dur_err")
            row.append(_pct(e))
            if e is not None:
                errs[k].append(e)
        ok = c["critical_path"]["kinds"]["agree"]
        agree += bool(ok)
        row.append("yes" if ok else "no")
        lines.append("| " + " | ".join(row) + " |")
    med = [_pct(float(np.median(errs[k]))) if errs[k] else "-" for k in kinds]
    lines.append(
        f"| median (makespan: max abs) | {max(spans):.1%} | "
        + " | ".join(med)
        + f" | {agree} of {len(reports)} |"
    )
    return "\n".join(lines)


def split_table(reports: list[dict]) -> str:
    """Medians over the shapes of each kind's median parts, real and simulated (us)."""
    kinds = list(dict.fromkeys(k for r in reports for k in r["comparison"]["stage_split"]))
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
    split = "--split" in argv
    paths = [Path(a) for a in argv if a != "--split"]
    if not paths:
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    try:
        reports = [json.loads(p.read_text()) for p in paths]
        text = split_table(reports) if split else error_table(reports)
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"not `kda-sim compare --json` reports ({type(e).__name__}: {e})", file=sys.stderr)
        return 2
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
