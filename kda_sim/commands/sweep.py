"""``kda-sim sweep``: the safety map of one GPU over R in 1..8 and L in 1..4 (finishes /
deadlocks / invalid, and the predicted time), as a table and a figure."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from kda_sim.checks.sweep import DEADLOCK, format_table, save_png, sweep
from kda_sim.commands.common import (
    add_launch_flags,
    check_outputs,
    gpu_profile,
    variant_flags,
    write_output,
)


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sweep", help="safety map over R x L for one GPU", description=__doc__)
    add_launch_flags(p, shape=False)
    p.add_argument("--png", type=Path, help="write the map as a figure")
    p.add_argument("--force", action="store_true", help="overwrite an existing --png file")
    p.add_argument("--json", action="store_true", help="print the map as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    prof = gpu_profile(args)
    check_outputs(args.force, png=args.png)
    cells = sweep(
        prof,
        occupancy=args.occupancy,
        nb=args.nb,
        kda0=args.kda0,
        **variant_flags(args),
    )
    if args.png is not None:
        write_output(args.png, lambda tmp: save_png(cells, prof.name, tmp), args.force, "--png")
    if args.json:
        print(json.dumps({"gpu": prof.name, "cells": [c.to_dict() for c in cells]}, indent=2))
    else:
        print(format_table(cells, prof.name))
        dead = [c for c in cells if c.verdict == DEADLOCK]
        if dead:
            c = dead[0]
            print(f"\nfirst deadlock, R={c.R} L={c.L}: {c.reason}")
        if args.png is not None:
            print(f"wrote {args.png}")
    # a map is information, not a verdict; only a static/engine disagreement is a failure
    return 0 if all(c.agree for c in cells) else 1
