"""``kda-sim variants``: a kernel benchmark's measured variant differences beside the
model's prediction of them (:mod:`kda_sim.compare.variants`), as a table, a JSON report and
a figure. BENCH is ``bench/kernel_bench.py --variants``'s JSON; ``--predict`` adds a
second profile's prediction alone (a GPU no measurement here can check)."""

from __future__ import annotations

import argparse
from pathlib import Path

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_input_caps,
    add_trace_kernel_flag,
    no_kernel_flags,
    write_report,
)
from kda_sim.compare.variants import axes, compare, load_rows, plot, table
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.text import plain


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "variants",
        help=COMMANDS["variants"],
        description=plain(__doc__),
    )
    p.add_argument("bench", type=Path, help="kernel_bench JSON with --variants rows")
    p.add_argument(
        "--profile", default="h200-k1", help="the profile of the measured GPU (default h200-k1)"
    )
    p.add_argument("--predict", default=None, help="a second profile: its prediction alone")
    add_trace_kernel_flag(p)
    p.add_argument("--out", type=Path, help="write the report as JSON")
    p.add_argument("--png", type=Path, help="write the differences as a figure")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out or --png")
    add_input_caps(p, events=False)  # the bench JSON and a --profile file are read under it
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    no_kernel_flags(args)
    kernel = get(args.kernel or DEFAULT_KERNEL).name
    axes(kernel)  # a kernel whose rows have no shape is refused before any work
    write_report(
        lambda: compare(load_rows(args.bench), args.profile, args.predict, kernel),
        table,
        plot,
        args.out,
        args.png,
        args.force,
    )
    return 0  # a comparison is information, not a verdict
