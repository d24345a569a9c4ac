"""The floor's report as a user reads it: :func:`kda_sim.checks.floor.ladder`'s rows as a
table (us a launch, the multiple of the HBM bound, and what of it is on the critical path)
and as a figure (each rung's makespan split into the gemv stages, the hand-off latency and
the rest of the critical path, against the bound and 1.3x it)."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any


def table(report: dict[str, Any]) -> str:
    lines = [f"{report['config']}: us a launch (x the HBM bound), and on the critical path"]
    lines.append(f"{'':58} {'makespan':>15} {'hand-offs':>10} {'gemv':>7}")
    for r in report["rows"]:
        x = r["x_bound"]
        bound = f"({x:.2f}x)" if math.isfinite(x) else "(no HBM bytes)"
        lines.append(
            f"{r['step']:<58} {r['makespan_us']:7.1f} {bound}"
            f" {r['handoff_latency_us']:10.1f} {r['gemv_us']:7.1f}"
        )
    if report.get("costs"):
        lines.append(f"costs: {report['costs']}")
    return "\n".join(lines)


def plot(report: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = report["rows"]
    ys = range(len(rows))[::-1]
    fig, ax = plt.subplots(figsize=(9, 0.55 * len(rows) + 1.6))
    hand = [r["handoff_latency_us"] for r in rows]
    gemv = [r["gemv_us"] for r in rows]
    rest = [r["makespan_us"] - h - g for r, h, g in zip(rows, hand, gemv, strict=True)]
    ax.barh(ys, gemv, color="#1f77b4", label="gemv stages on the critical path")
    ax.barh(ys, hand, left=gemv, color="#ff7f0e", label="hand-off latency on it")
    left = [g + h for g, h in zip(gemv, hand, strict=True)]
    ax.barh(ys, rest, left=left, color="#c7c7c7", label="the rest of it")
    bound = rows[0]["bound_us"]
    ax.axvline(bound, color="black", linewidth=1, label=f"HBM bound ({bound:.1f} us)")
    ax.axvline(
        1.3 * bound,
        color="black",
        linewidth=1,
        linestyle="--",
        label=f"1.3x the bound ({1.3 * bound:.1f} us)",
    )
    ax.set_yticks(list(ys), [r["step"] for r in rows], fontsize=8)
    ax.set_xlabel("us a launch (simulated)")
    ax.set_title(f"How fast the protocol could run: {report['config']}", fontsize=10)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)
