"""How fast the protocol could run on a GPU: :mod:`kda_sim.checks.floor`'s ladder of
what-ifs (the model with its costs taken away, step by step) at one shape, as a table, a
JSON report and a plot, with the GPU's measured figures.

Usage:
    python -m bench.protocol_floor --R 1 --L 1 --nw-first --onw-first \\
        [--gpu h200-k1 | --profile FILE] [--occupancy N] \\
        [--stream-tbps 3.91] [--visibility-ns 300] [--poll-ns 190] \\
        [--out JSON] [--png PNG] [--force]

The defaults are the H200's measured figures: the fastest read of the in_proj weight by
any kernel (3.91 TB/s, ``lab.hbm_ceiling``, run 65 in docs/measurements/kernel_h200.md),
a store seen by another CTA 0.3 us after it (``../shared/MEASURED.md``), one acquire poll
round trip 0.19 us (same).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from kda_sim.checks.floor import Figures, ladder
from kda_sim.commands.common import add_launch_flags, gpu_profile, launch_config
from lab.gpu_jobs import report_with_views


def table(report: dict[str, Any]) -> str:
    lines = [f"{report['config']}: us a launch (x the HBM bound), and on the critical path"]
    lines.append(f"{'':58} {'makespan':>15} {'hand-offs':>10} {'gemv':>7}")
    for r in report["rows"]:
        lines.append(
            f"{r['step']:<58} {r['makespan_us']:7.1f} ({r['x_bound']:.2f}x)"
            f" {r['handoff_latency_us']:10.1f} {r['gemv_us']:7.1f}"
        )
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


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_launch_flags(ap)
    ap.set_defaults(R=1, L=1, gpu="h200-k1")  # the K1 on our H200, the 1x1
    ap.add_argument(
        "--stream-tbps",
        type=float,
        default=3.91,
        help="the best read of the weight measured on the GPU (TB/s)",
    )
    ap.add_argument(
        "--visibility-ns",
        type=float,
        default=300.0,
        help="a store seen by another CTA, at the least (ns)",
    )
    ap.add_argument("--poll-ns", type=float, default=190.0, help="one poll's round trip (ns)")
    ap.add_argument("--out", type=Path)
    ap.add_argument("--png", type=Path)
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)

    def make() -> dict[str, Any]:
        figs = Figures(a.stream_tbps * 1e3, a.visibility_ns, a.poll_ns)
        return ladder(launch_config(a), gpu_profile(a), figs, a.occupancy)

    return report_with_views("protocol_floor", make, table, plot, a.out, a.png, a.force)


if __name__ == "__main__":
    sys.exit(main())
