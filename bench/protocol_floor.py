"""How fast the protocol could run on a GPU: the model with its costs taken away, step by step.

A ladder of what-ifs, each on top of the one before: the profile as fitted; every stage's
compute free; the weight stream at the best read measured on the GPU; the hand-offs at
their measured minimum; every latency nobody measured at 0; and last the weights held on
chip from the kernel's start (the seed's register-held first group, where the Triton K1
streams each group after XRDY because 229 KB a CTA does not fit the H200's registers).
What is left is the protocol's own chain (hand-offs in order, the weight read behind the
XRDY flags), set against the HBM bound (the launch's bytes at the datasheet's bandwidth).

Usage:
    python -m bench.protocol_floor --R 1 --L 1 --nw-first --onw-first \\
        [--profile h200-k1] [--stream-tbps 3.91] [--visibility-ns 300] [--poll-ns 190] \\
        [--out JSON] [--png PNG] [--force]

The defaults are the H200's measured figures: the fastest read of the in_proj weight by
any kernel (3.91 TB/s, ``bench.hbm_ceiling``, run 65 in docs/measurements/kernel_h200.md),
a store seen by another CTA 0.3 us after it (``../shared/MEASURED.md``), one acquire poll
round trip 0.19 us (same).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.gpu_jobs import report_to
from kda_sim.commands.common import add_variant_flags, refuse_overwrite, variant_flags
from kda_sim.config import LaunchConfig
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput, KdaSimError
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.timeline.critical import critical_path

# latencies no measurement here pins: the last rung sets them to 0 (the most optimistic)
UNMEASURED = ("hbm_load", "l2_load", "store_ack", "barrier", "retry", "dispatch", "cold_code")
HANDOFF = "(hand-off latency)"  # critical_path's name for time between a put and its poll


@dataclass(frozen=True)
class Figures:
    """The measured figures the ladder sets (B/ns and ns)."""

    stream_bytes_per_ns: float
    visibility_ns: float
    poll_ns: float


def _no_compute(p: GpuProfile, _f: Figures) -> GpuProfile:
    free = {f"cost_{k}": (0.0, 0.0) for k in p.costs}
    return replace(p.with_params(**free, cold_code=0.0), cost_above={}, unit_share=0.0)


def _best_stream(p: GpuProfile, f: Figures) -> GpuProfile:
    # one CTA's cap lifted: only the whole stream's rate bounds the read
    return p.with_params(hbm_bytes_per_ns=f.stream_bytes_per_ns, unit_bytes_per_ns=1e6)


def _measured_handoffs(p: GpuProfile, f: Figures) -> GpuProfile:
    v = f.visibility_ns
    return p.with_params(visibility_same_xcd=v, visibility_cross_xcd=v, poll=f.poll_ns)


def _unmeasured_zero(p: GpuProfile, _f: Figures) -> GpuProfile:
    return p.with_params(**dict.fromkeys(UNMEASURED, 0.0))


def _held_weights(p: GpuProfile, _f: Figures) -> GpuProfile:
    return replace(p, streamed_weights=False)


Rung = tuple[str, Callable[[GpuProfile, Figures], GpuProfile]]
LADDER: tuple[Rung, ...] = (
    ("every stage's compute free", _no_compute),
    ("the weight stream at the best measured read", _best_stream),
    ("hand-offs at their measured minimum", _measured_handoffs),
    ("every unmeasured latency 0", _unmeasured_zero),
    ("weights held on chip from the start (the seed's form)", _held_weights),
)


def check_figures(f: Figures, prof: GpuProfile) -> None:
    if f.stream_bytes_per_ns <= 0 or f.visibility_ns < 0 or f.poll_ns < 0:
        raise InvalidInput("--stream-tbps must be > 0, the latencies >= 0", what="figures")
    peak = prof.hbm_peak_bytes_per_ns
    if peak is not None and f.stream_bytes_per_ns > peak:
        raise InvalidInput(
            f"--stream-tbps {f.stream_bytes_per_ns / 1e3:g}: above the datasheet's "
            f"{peak / 1e3:g} TB/s ({prof.name})",
            what="stream",
        )


def rung(label: str, cfg: LaunchConfig, prof: GpuProfile, peak: float) -> dict[str, Any]:
    res = simulate(cfg, prof)
    tl = res.timeline
    if tl.makespan is None:
        raise InvalidInput(f"{cfg.label()} does not finish on {prof.name}", where=label)
    path = critical_path(tl)
    by_stage = dict(path.by_stage) if path else {}
    bound = res.hbm_bytes / peak
    return {
        "step": label,
        "makespan_us": tl.makespan / 1e3,
        "bound_us": bound / 1e3,
        "x_bound": tl.makespan / bound,
        "handoff_latency_us": by_stage.get(HANDOFF, 0.0) / 1e3,
        "gemv_us": sum(v for k, v in by_stage.items() if k.startswith("gemv")) / 1e3,
        "critical_path_us": {k: v / 1e3 for k, v in sorted(by_stage.items())},
    }


def ladder(cfg: LaunchConfig, prof: GpuProfile, f: Figures) -> dict[str, Any]:
    check_figures(f, prof)
    # the bound: the launch's bytes at the datasheet's bandwidth
    peak = prof.hbm_peak_bytes_per_ns or prof.hbm_bytes_per_ns
    rows = [rung(f"the profile ({prof.name})", cfg, prof, peak)]
    for label, step in LADDER:
        prof = step(prof, f)
        rows.append(rung(f"+ {label}", cfg, prof, peak))
    return {
        "config": cfg.label(),
        "figures": {
            "stream_tbps": f.stream_bytes_per_ns / 1e3,
            "visibility_ns": f.visibility_ns,
            "poll_ns": f.poll_ns,
        },
        "rows": rows,
    }


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
    ap.add_argument("--R", type=int, default=1)
    ap.add_argument("--L", type=int, default=1)
    ap.add_argument("--nb", type=int, default=8)
    ap.add_argument("--kda0", type=int, default=0)
    add_variant_flags(ap)
    ap.add_argument("--profile", default="h200-k1", help="a bundled profile or a .json file")
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
    try:
        refuse_overwrite(a.png, a.force)
        cfg = LaunchConfig(a.R, a.L, a.nb, a.kda0, **variant_flags(a)).validate()
        figs = Figures(a.stream_tbps * 1e3, a.visibility_ns, a.poll_ns)
        report: dict[str, Any] = {}

        def make() -> dict[str, Any]:
            report.update(ladder(cfg, load_profile(a.profile), figs))
            return report

        report_to(make, a.out, a.force)
        print(table(report), file=sys.stderr)
        if a.png is not None:
            plot(report, a.png)
    except KdaSimError as e:
        print(f"protocol_floor: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
