"""Which cost form follows k.recur's duration: fitted on the traces' k.recur spans.

(No GPU.) Every k.recur of every launch of the spread folders (``k1_R{R}_L{L}_{i}.json``,
as ``lab.trace_spread record`` writes them), read with ``lab.makespan_parts``'s
``recur_spans`` (its duration, the slot of its task, how many other k.recur ran across
the GPU beside it), is one point. Each form is fitted in relative least squares over
the points (a growth factor on a grid, the line by least squares at each):

- ``line in L``: a + b L, the model's cost line as it was;
- ``+ c S``: a + b L + c S, a term in the launch's tokens S = R x L;
- ``x (1 + g S)``: (a + b L)(1 + g S), the line growing with S (``cost_growth``);
- ``x (1 + k n)``: (a + b L)(1 + k n), n the k.recur in flight beside it (a
  concurrency form; in the traces the launch's own n, in a model its run's);
- ``x (1 + u sm)``: (a + b L)(1 + u sm), sm the share of its span another k.recur
  on its SM ran beside it (the SM's sharing alone).

Per form: the root mean square of the points' relative errors; per shape the median
fitted against the median measured, in the fit and with the shape held out (fitted on
the other shapes' points), and the largest held-out error.

Usage::

    python -m lab.recur_growth SPREAD_DIR... [--later] [--json OUT]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.spread import launches_by_shape, read_launch
from lab.gpu_jobs import report_main
from lab.makespan_parts import recur_spans

GRID = 201  # growth factors tried a form, from 0 to its top
Cols = Callable[[dict[str, np.ndarray]], np.ndarray]
# form -> (the line's columns, the growth's variable and its grid's top; None: linear)
FORMS: dict[str, tuple[Cols, tuple[str, float] | None]] = {
    "line in L": (lambda p: np.c_[np.ones_like(p["L"]), p["L"]], None),
    "+ c S": (lambda p: np.c_[np.ones_like(p["L"]), p["L"], p["S"]], None),
    "x (1 + g S)": (lambda p: np.c_[np.ones_like(p["L"]), p["L"]], ("S", 0.2)),
    "x (1 + k n)": (lambda p: np.c_[np.ones_like(p["L"]), p["L"]], ("n", 0.01)),
    "x (1 + u sm)": (lambda p: np.c_[np.ones_like(p["L"]), p["L"]], ("sm", 1.0)),
}


def points(folders: list[Path], later: bool) -> dict[str, np.ndarray]:
    """Every k.recur of the folders' launches (``later``: not a shape's first launch, a
    build's first after its compile) as columns: R, L, S, n, sm, slot, dur, shape."""
    cols: dict[str, list[Any]] = {k: [] for k in ("R", "L", "S", "n", "sm", "slot", "dur", "shape")}
    for folder in folders:
        for (R, L), paths in launches_by_shape(folder).items():
            for p in paths[1:] if later else paths:
                for r in recur_spans(read_launch(p)):
                    for k, v in (
                        ("R", R),
                        ("L", L),
                        ("S", R * L),
                        ("n", r["in_flight"]),
                        ("sm", r["sm_share"]),
                        ("slot", r["slot"]),
                        ("dur", r["dur"]),
                        ("shape", f"{R}x{L}"),
                    ):
                        cols[k].append(v)
    return {k: np.array(v) for k, v in cols.items()}


def _solve(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, float]:
    """Relative least squares: the coefficients and the sum of squared relative errors."""
    a = x / y[:, None]
    c, *_ = np.linalg.lstsq(a, np.ones_like(y), rcond=None)
    return c, float(np.sum((a @ c - 1.0) ** 2))


def fit(p: dict[str, np.ndarray], form: str, mask: np.ndarray) -> tuple[np.ndarray, float]:
    """The form fitted on the points ``mask`` selects: each point's prediction and the
    growth factor (0 for a linear form)."""
    cols, growth = FORMS[form]
    x, y = cols(p), p["dur"]
    if growth is None:
        c, _ = _solve(x[mask], y[mask])
        return x @ c, 0.0
    var, top = growth
    best: tuple[float, float, np.ndarray] | None = None
    for g in np.linspace(0.0, top, GRID):
        xg = x * (1.0 + g * p[var])[:, None]
        c, err = _solve(xg[mask], y[mask])
        if best is None or err < best[0]:
            best = (err, float(g), xg @ c)
    assert best is not None
    return best[2], best[1]


def _shape_err(p: dict[str, np.ndarray], pred: np.ndarray, shape: str) -> float:
    m = p["shape"] == shape
    return float(statistics.median(pred[m]) / statistics.median(p["dur"][m]) - 1.0)


def forms(folders: list[Path], later: bool = False) -> dict[str, Any]:
    p = points(folders, later)
    shapes = sorted(set(p["shape"]), key=lambda s: (int(s.split("x")[1]), int(s.split("x")[0])))
    everything = np.ones(p["dur"].size, bool)
    out: dict[str, Any] = {}
    for form in FORMS:
        pred, g = fit(p, form, everything)
        held = {s: _shape_err(p, fit(p, form, p["shape"] != s)[0], s) for s in shapes}
        out[form] = {
            "growth": g,
            "rms": float(np.sqrt(np.mean((pred / p["dur"] - 1.0) ** 2))),
            "in_fit": {s: _shape_err(p, pred, s) for s in shapes},
            "held_out": held,
            "worst_held_out": max(abs(v) for v in held.values()),
        }
    return {
        "folders": [str(f) for f in folders],
        "later": later,
        "points": int(p["dur"].size),
        "shapes": shapes,
        "forms": out,
    }


def table(rep: dict[str, Any]) -> str:
    shapes = rep["shapes"]
    lines = [
        "| form | growth | rms | " + " | ".join(shapes) + " | largest held out |",
        "|---" * (len(shapes) + 4) + "|",
    ]
    for form, f in rep["forms"].items():
        cells = [f"{100 * f['in_fit'][s]:+.0f} / {100 * f['held_out'][s]:+.0f}" for s in shapes]
        lines.append(
            f"| {form} | {f['growth']:.4g} | {f['rms']:.3f} | "
            + " | ".join(cells)
            + f" | {100 * f['worst_held_out']:.0f} % |"
        )
    return (
        "\n".join(lines) + "\n(each shape: median fitted / measured - 1, in the fit / held out, %)"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("folders", nargs="+", type=Path, help="spread folders (k1_R{R}_L{L}_{i}.json)")
    ap.add_argument("--later", action="store_true", help="leave out each shape's first launch")
    ap.add_argument("--json", type=Path, default=None, help="also write the report here")
    a = ap.parse_args(argv)
    return report_main("recur_growth", lambda: forms(a.folders, a.later), table, a.json)


if __name__ == "__main__":
    sys.exit(main())
