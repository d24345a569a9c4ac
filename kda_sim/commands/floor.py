"""``kda-sim floor``: how fast the protocol could run on a GPU, as a table, a JSON report
and a figure: :mod:`kda_sim.checks.floor`'s ladder of what-ifs (the profile with its costs
taken away a step at a time) at one shape; ``--kernel NAME`` and its own flags after it
price another kernel's launch (on the H200 with that kernel's costs by default).

The figures' defaults are the H200's: the fastest read of the in_proj weight measured by
any kernel (3.91 TB/s, ``lab/hbm_ceiling.py``), a store seen by another CTA 0.3 us after it
and one acquire poll round trip of 0.19 us (single-thread atomics on the H200).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kda_sim.checks.floor import Figures, ladder
from kda_sim.checks.floor_report import plot, table
from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_kernel_flag,
    add_launch_flags,
    float_type,
    kernel_and_config,
    write_report,
)
from kda_sim.kernels.registry import DEFAULT_KERNEL
from kda_sim.machine.profile import MIN_POLL_NS, PROFILE_SCHEMA, load_profile
from kda_sim.machine.residency import check_occupancy
from kda_sim.text import plain

# the K1 on the H200 it was fitted to, at 1x1; another kernel: the H200 with its own costs
K1_GPU, OTHER_GPU = "h200-k1", "h200"


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "floor",
        help=COMMANDS["floor"],
        description=plain(__doc__),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_kernel_flag(p)
    add_launch_flags(p)
    p.set_defaults(gpu=None)  # K1_GPU, or OTHER_GPU for another kernel
    p.add_argument(
        "--stream-tbps",
        # finite, at least the profile's least bandwidth; its peak checked with the profile
        type=float_type(PROFILE_SCHEMA["properties"]["hbm_bytes_per_ns"]["minimum"] / 1e3),
        default=3.91,
        help="the best read of the weight measured on the GPU (TB/s, default 3.91)",
    )
    p.add_argument(
        "--visibility-ns",
        type=float_type(0.0),
        default=300.0,
        help="a store seen by another CTA, at the least (ns, default 300)",
    )
    p.add_argument(
        "--poll-ns",
        type=float_type(MIN_POLL_NS),  # the engine divides by it
        default=190.0,
        help="one poll's round trip (ns, default 190)",
    )
    p.add_argument("--out", type=Path, help="write the report as JSON")
    p.add_argument("--png", type=Path, help="write the ladder as a figure")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out or --png")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    spec, cfg = kernel_and_config(args, {"R": 1, "L": 1})
    gpu = args.gpu or (K1_GPU if spec.name == DEFAULT_KERNEL else OTHER_GPU)
    prof = load_profile(args.profile or gpu, kernel=spec)
    check_occupancy(cfg, prof, args.occupancy)

    def make() -> dict:
        figs = Figures(args.stream_tbps * 1e3, args.visibility_ns, args.poll_ns)
        return ladder(cfg, prof, figs, args.occupancy)

    write_report(make, table, plot, args.out, args.png, args.force)
    return 0  # a floor is information, not a verdict
