"""``kda-sim sweep``: the safety map of one GPU over the kernel's two sweep axes (K1:
R in 1..8 and L in 1..4; finishes / deadlocks / invalid, and the predicted time), as a
table and a figure. ``--kernel NAME`` maps another kernel that defines ``sweep_axes``,
its other configuration fields from its own flags after it."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from kda_sim.checks.sweep import DEADLOCK, format_table, save_png, sweep
from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_jobs_flag,
    add_kernel_flag,
    add_launch_flags,
    check_outputs,
    jobs_of,
    k1_flags_given,
    kernel_config,
    other_kernel,
    variant_flags,
    write_output,
)
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL
from kda_sim.kernels.spec import require_hook
from kda_sim.machine.profile import load_profile
from kda_sim.text import plain


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help=COMMANDS["sweep"], description=plain(__doc__))
    add_kernel_flag(p)
    add_launch_flags(p, shape=False)
    p.add_argument("--png", type=Path, help="write the map as a figure")
    p.add_argument("--force", action="store_true", help="overwrite an existing --png file")
    p.add_argument("--json", action="store_true", help="print the map as JSON")
    add_jobs_flag(p, "the shapes")
    p.set_defaults(run=run)


def fields_of(args: argparse.Namespace) -> tuple[str, tuple[str, str], dict[str, Any]]:
    """The kernel and its configuration fields other than the two axes, the same in
    every cell."""
    spec = other_kernel(args)
    if spec is None:
        return (
            DEFAULT_KERNEL,
            ("R", "L"),
            {
                "nb": 8 if args.nb is None else args.nb,
                "kda0": 0 if args.kda0 is None else args.kda0,
                **variant_flags(args),
            },
        )
    given = k1_flags_given(args)
    if given:
        raise InvalidInput(f"{', '.join(given)}: K1's, not {spec.name}'s flags", what="kernel")
    axes = require_hook(spec, "sweep_axes", "the two configuration fields a safety map spans")
    cfg = kernel_config(spec, getattr(args, "kernel_args", []))
    fields = {k: v for k, v in spec.config_to_dict(cfg).items() if k not in axes}
    return spec.name, tuple(axes), fields


def run(args: argparse.Namespace) -> int:
    kernel, axes, fields = fields_of(args)  # before the profile: a refused kernel costs nothing
    prof = load_profile(args.profile or args.gpu, kernel=kernel)
    check_outputs(args.force, png=args.png)
    cells = sweep(prof, kernel=kernel, occupancy=args.occupancy, jobs=jobs_of(args), **fields)
    if args.png is not None:
        write_output(
            args.png, lambda tmp: save_png(cells, prof.name, tmp, axes), args.force, "--png"
        )
    if args.json:
        print(
            json.dumps(
                {
                    "kernel": kernel,
                    "axes": list(axes),
                    "gpu": prof.name,
                    "costs": prof.costs_from,
                    "cells": [c.to_dict() for c in cells],
                },
                indent=2,
            )
        )
    else:
        print(f"costs: {prof.costs_from}")
        print(format_table(cells, prof.name, axes))
        dead = [c for c in cells if c.verdict == DEADLOCK]
        if dead:
            c = dead[0]
            print(f"\nfirst deadlock, {axes[0]}={c.R} {axes[1]}={c.L}: {c.reason}")
        if args.png is not None:
            print(f"wrote {args.png}")
    # a map is information, not a verdict; only a static/engine disagreement is a failure
    return 0 if all(c.agree for c in cells) else 1
