"""``kda-sim floor``: how fast the protocol could run on a GPU, as a table, a JSON report
and a figure: :mod:`kda_sim.checks.floor`'s ladder of what-ifs (the profile with its costs
taken away a step at a time) at one shape.

The figures' defaults are the H200's: the fastest read of the in_proj weight measured by
any kernel (3.91 TB/s, ``lab/hbm_ceiling.py``), a store seen by another CTA 0.3 us after it
and one acquire poll round trip of 0.19 us (single-thread atomics on the H200).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kda_sim.checks.floor import Figures, ladder
from kda_sim.checks.floor_report import plot, table
from kda_sim.commands.common import (
    add_launch_flags,
    float_type,
    gpu_profile,
    launch_config,
    write_report,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "floor",
        help="how fast the protocol could run: the model's costs taken away step by step",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_launch_flags(p)
    p.set_defaults(R=1, L=1, gpu="h200-k1")  # the K1 on the H200 it was fitted to, at 1x1
    p.add_argument(
        "--stream-tbps",
        type=float_type(None),  # finite; its range checked with the profile
        default=3.91,
        help="the best read of the weight measured on the GPU (TB/s, default 3.91)",
    )
    p.add_argument(
        "--visibility-ns",
        type=float_type(None),
        default=300.0,
        help="a store seen by another CTA, at the least (ns, default 300)",
    )
    p.add_argument(
        "--poll-ns",
        type=float_type(None),
        default=190.0,
        help="one poll's round trip (ns, default 190)",
    )
    p.add_argument("--out", type=Path, help="write the report as JSON")
    p.add_argument("--png", type=Path, help="write the ladder as a figure")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out or --png")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    def make() -> dict:
        figs = Figures(args.stream_tbps * 1e3, args.visibility_ns, args.poll_ns)
        return ladder(launch_config(args), gpu_profile(args), figs, args.occupancy)

    write_report(make, table, plot, args.out, args.png, args.force)
    return 0  # a floor is information, not a verdict
