"""``kda-sim spread``: how far apart real launches of one shape land, and the model
against each of them (:mod:`kda_sim.compare.spread`), from a folder of traced launches
(``k1_R{R}_L{L}_{i}.json``, two or more a shape; ``python -m lab.trace_spread record``
makes them on the GPU; ``--kernel NAME``: ``NAME_{a}*_{b}*_*.json``, its ``sweep_axes`` a
and b). The report is JSON on stdout (and ``--out``), a table on stderr."""

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
from kda_sim.compare.spread import name_of, report, table
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.text import plain


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "spread",
        help=COMMANDS["spread"],
        description=plain(__doc__),
    )
    p.add_argument("dir", type=Path, help="a folder of k1_R*_L*_*.json traced launches")
    p.add_argument(
        "--profile",
        help="the model to set against the launches (name or file; default: the one each "
        "trace's GPU and kernel name, as compare takes it)",
    )
    add_trace_kernel_flag(p)
    add_input_caps(p)
    p.add_argument("--out", type=Path, help="write the report as JSON")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    no_kernel_flags(args)
    kernel = get(args.kernel or DEFAULT_KERNEL).name
    name_of(kernel)  # a kernel whose launches have no file names is refused before any work
    write_report(
        lambda: report(args.dir, args.profile, kernel), table, None, args.out, None, args.force
    )
    return 0  # a spread is information, not a verdict
