"""``kda-sim calibrate``: fit a kernel's costs (and the few GPU parameters they need) to
real traces, written as an overlay on the GPU profile; test it on held-out ones."""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from functools import partial
from pathlib import Path
from typing import Any

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    add_jobs_flag,
    check_outputs,
    float_type,
    int_type,
    jobs_of,
    write_output,
)
from kda_sim.commands.compare import add_shape_flags, read_any
from kda_sim.compare.calibrate import (
    Trace,
    check_seeds,
    evaluate,
    fit_profile,
    fitted_overlay,
    pinned,
    prepare,
    searched,
    shape_of,
    shape_text,
    with_seeds,
    write_overlay,
)
from kda_sim.compare.launch import profile_of
from kda_sim.errors import InvalidInput
from kda_sim.parallel import Jobs, Workers, start_method
from kda_sim.timeline.summary import missing_part

# the report table's narrowest trace and shape columns (K1's names, "R=1 L=1", fill them)
TRACE_WIDTH, SHAPE_WIDTH = 28, 9


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("calibrate", help=COMMANDS["calibrate"])
    p.add_argument("traces", nargs="+", type=Path, help="traces to fit on")
    p.add_argument(
        "--out",
        type=Path,
        required=True,
        help="the fitted overlay .json: kernel costs, GPU overrides, provenance (load it "
        "with --profile)",
    )
    p.add_argument("--holdout", nargs="*", type=Path, default=[], help="traces to test it on")
    p.add_argument("--gpu", default=None, help="profile to start from (default: the traces' GPU)")
    p.add_argument("--profile", default=None, help="a profile .json to start from")
    p.add_argument("--budget", type=int_type(0), default=60, help="search evaluations (default 60)")
    p.add_argument(
        "--cost-passes", type=int_type(0), default=3, help="cost corrections (default 3)"
    )
    p.add_argument(
        "--max-makespan-err",
        type=float_type(0),
        default=0.10,
        help="largest makespan error the fit may leave on a trace, a fraction (default 0.10)",
    )
    p.add_argument(
        "--max-start-err", type=float_type(0), default=0.10, help="median, of the makespan"
    )
    p.add_argument(
        "--switch",
        action="append",
        default=[],
        metavar="STAGE:UNITS",
        help="a stage cost whose code changes above UNITS of work, fitted as two forms "
        "(the Triton K1: gemv:3, FMA loop for S <= 3, tensor-core dots above)",
    )
    p.add_argument(
        "--pin",
        action="append",
        default=[],
        metavar="NAME=VALUE",
        help="a machine parameter set to a measured value and left out of the search "
        "(e.g. hbm_bytes_per_ns=3720: the H200's best measured stream, B/ns)",
    )
    p.add_argument(
        "--search",
        action="append",
        default=[],
        metavar="NAME",
        help="a machine parameter searched too, one the search leaves alone by default "
        "(retry, poll_lane, backoff, the first try's and a put's figures, put_crowd)",
    )
    p.add_argument(
        "--unit-share",
        action="append",
        default=[],
        metavar="STAGE",
        help="a stage cost that runs longer while another CTA on its unit computes it too "
        "(the Triton K1 on the H200: gemv), by a factor taken from the traces",
    )
    p.add_argument(
        "--unit-share-from",
        type=float,
        default=0.0,
        metavar="UNITS",
        help="with --unit-share: only a compute of at least this many units is slowed, and "
        "only such traces give the factor (the K1's gemv on the H200: 2 tokens; at one, two "
        "gemv CTAs on an SM end together)",
    )
    p.add_argument(
        "--unit-share-by-order",
        action="store_true",
        help="with --unit-share: the CTA dispatched first to a shared unit is slowed less "
        "than a later one, by a skew taken from the traces (the K1's gemv on the H200: the "
        "later of two gemv CTAs on an SM ends 2 us after the first)",
    )
    p.add_argument(
        "--cost-growth",
        action="append",
        default=[],
        metavar="STAGE",
        help="a stage cost that grows with the launch's work beside it (the Triton K1 on the "
        "H200: k.recur, with the launch's tokens S), its growth and line read from the "
        "traces; --search growth_STAGE searches it too",
    )
    p.add_argument(
        "--stage-weight",
        type=float_type(0),
        default=0.0,
        metavar="W",
        help="fit the stage durations too: the loss adds W times the mean over stage kinds "
        "of (simulated / real median duration - 1)^2 (default 0: makespans and starts only)",
    )
    p.add_argument(
        "--seeds",
        type=int_type(0),
        default=0,
        metavar="K",
        help="with a profile that sets cta_spread (a spread between CTAs): score each trace as "
        "the mean over K seeded runs, the same seeds at every evaluation (default 0: one "
        "nominal run, which draws no spread); each costs a simulated launch",
    )
    add_jobs_flag(p, "the simulations (the traces are independent)")
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    p.add_argument("--json", action="store_true", help="print a machine-readable report")
    p.add_argument("--no-progress", action="store_true", help="print no progress on stderr")
    add_shape_flags(p)
    p.set_defaults(run=run)


def _whole(path: Path, args: argparse.Namespace) -> Any:
    """A trace read as ``compare`` reads it, refused when it lacks CTAs: a fit to part of
    a launch would price the rest from nothing."""
    tl = read_any(path, args)
    missing = missing_part(tl)
    if missing:
        raise InvalidInput(
            f"a partial trace ({missing}); a fit needs every CTA", what="trace", where=str(path)
        )
    return tl


def _prepared(
    args: argparse.Namespace, clk: dict[str, str | None], path: Path
) -> tuple[Trace | None, InvalidInput | None]:
    """One trace read, checked and prepared for the fit, or why it cannot be."""
    try:
        return prepare(_whole(path, args), path.name, **clk), None
    except InvalidInput as e:
        return None, e


def _size(path: Path) -> int:
    try:
        return os.path.getsize(path)
    except OSError:
        return 0  # its reading says what is wrong with it


def prepared_traces(
    paths: list[Path], args: argparse.Namespace, clk: dict[str, str | None], jobs: Jobs
) -> list[Trace]:
    """``paths`` read, checked and prepared (aligned, from their origin), in order; the
    first that cannot be is refused. They are independent: ``jobs`` processes share them,
    the largest files first, where the workers fork (a fork costs milliseconds; a spawned
    worker's interpreter start and imports, more than a few traces' reading), and only on
    this machine (a cluster's workers may not see these files)."""
    here = not isinstance(jobs, int | None) or start_method() != "fork"
    with Workers(1 if here else jobs, progress=False) as workers:
        got = workers.map(partial(_prepared, args, clk), paths, cost=_size)
    for _, err in got:
        if err is not None:
            raise err
    return [t for t, _ in got if t is not None]


def run(args: argparse.Namespace) -> int:
    check_outputs(args.force, out=args.out)
    if args.budget < 0 or args.cost_passes < 0:
        raise InvalidInput("--budget and --cost-passes must be >= 0", what="budget")
    check_seeds(args.seeds)  # before the traces: a bad count costs nothing
    if not args.unit_share_from >= 0 or (args.unit_share_from and not args.unit_share):
        raise InvalidInput(
            f"--unit-share-from {args.unit_share_from:g}: a count of units >= 0, with --unit-share",
            what="unit_share_from",
        )
    if args.unit_share_by_order and not args.unit_share:
        raise InvalidInput("--unit-share-by-order: with --unit-share", what="unit_share_by_order")
    clk = {"clock_mode": args.clock_mode, "clock_group": args.clock_group}
    switches: dict[str, float] = {}
    for sw in args.switch:
        key, _, units = sw.rpartition(":")
        try:
            switches[key] = float(units)
        except ValueError:
            raise InvalidInput(f"--switch {sw!r}: STAGE:UNITS", what="switch") from None
    pins: dict[str, float] = {}
    for pn in args.pin:
        name, eq, value = pn.partition("=")
        try:
            pins[name] = float(value) if eq else float("nan")
        except ValueError:
            raise InvalidInput(f"--pin {pn!r}: NAME=VALUE", what="pin") from None
        if not math.isfinite(pins[name]):
            raise InvalidInput(f"--pin {pn!r}: NAME=VALUE, a finite value", what="pin")
    names = searched(args.search, pins)  # before the traces: a bad name costs nothing
    jobs = jobs_of(args)  # before the traces: a cluster that is not there costs nothing
    both = prepared_traces([*args.traces, *args.holdout], args, clk, jobs)
    train, hold = both[: len(args.traces)], both[len(args.traces) :]
    gpus = {t.tl.meta.gpu for t in train + hold}
    if len(gpus) > 1:
        raise InvalidInput(f"traces of several GPUs: {sorted(gpus)}", what="gpu")
    stock = profile_of(train[0].tl, args.profile or args.gpu)
    base, search = pinned(stock, pins, names)
    train, hold = with_seeds(train, base, args.seeds), with_seeds(hold, base, args.seeds)
    if base.cta_spread and not args.seeds:
        # a spread fitted off and run on makes every launch late (the last of many CTAs)
        print(
            f"note: {base.name} sets cta_spread, but without --seeds the fit runs nominal "
            "launches, which draw no spread; --seeds K fits with it",
            file=sys.stderr,
        )
    before = evaluate(stock, train + hold, jobs)
    res = fit_profile(
        base,
        train,
        search=search,
        budget=args.budget,
        cost_passes=args.cost_passes,
        progress=not args.no_progress and sys.stderr.isatty(),
        log=None if args.json else (lambda m: print(m, file=sys.stderr)),
        switches=switches,
        unit_shared=args.unit_share,
        unit_share_from=args.unit_share_from,
        unit_share_by_order=args.unit_share_by_order,
        stage_weight=args.stage_weight,
        cost_growth=args.cost_growth,
        jobs=jobs,
        seeds=args.seeds,
    )
    after = evaluate(res.profile, hold, jobs) if hold else {}
    d = fitted_overlay(res, stock, train, pins=pins, out=args.out)
    write_output(args.out, lambda tmp: write_overlay(d, tmp), args.force, "--out")
    rows = []
    for t in train + hold:
        a = res.train.get(t.name) or after[t.name]
        b = before[t.name]
        rows.append(
            {
                "trace": t.name,
                **shape_of(t.cfg),
                "shape": shape_text(t.cfg),
                "set": "fit" if t in train else "held out",
                "real_makespan_ns": t.makespan,
                "makespan_err_before": b.makespan_err,
                "makespan_err": a.makespan_err,
                "start_err_median_before": b.start_err_median,
                "start_err_median": a.start_err_median,
                "start_err_p90": a.start_err_p90,
                "stage_err_before": b.stage_err,
                "stage_err": a.stage_err,
            }
        )
    ok = all(
        abs(r["makespan_err"]) <= args.max_makespan_err
        and r["start_err_median"] <= args.max_start_err
        for r in rows
        if r["set"] == "held out"
    )
    report = {
        "out": str(args.out),
        "base": base.name,
        # which kernel costs the fit started from ("err before" is theirs)
        "base_costs": base.costs_from,
        "launches": res.launches,
        "seconds": res.seconds,
        "rows": rows,
        "holdout_ok": ok,
        "switches": switches,
        "pins": pins,
        "search": list(search),  # the parameters the search moved (the pins' left out)
        "criteria": {"makespan_err": args.max_makespan_err, "start_err_median": args.max_start_err},
    }
    if args.json:
        print(json.dumps(report, indent=2))
    else:
        print(f"started from {base.name}: {base.costs_from}")
        print(report_table(rows))
        print(f"wrote {args.out}  ({res.launches} simulated launches, {res.seconds:.0f} s)")
        if hold:
            print(
                "held-out shapes within the criteria" if ok else "HELD-OUT SHAPES MISS THE CRITERIA"
            )
    return 0 if ok else 1


def report_table(rows: list[dict[str, Any]]) -> str:
    """The report's rows as a text table, its trace and shape columns as wide as their
    longest entry (at least the widths K1's short names fill), so that a kernel's
    longer names (``ctas=8 rounds=2 broken=False last_resets=False``) keep the columns
    lined up."""
    tw = max([TRACE_WIDTH, *(len(r["trace"]) for r in rows)])
    sw = max([SHAPE_WIDTH, *(len(r["shape"]) for r in rows)])
    lines = [
        f"{'trace':{tw}} {'shape':>{sw}} {'set':9} {'makespan':>10} "
        f"{'err before':>10} {'err':>7} {'start med':>9} {'start p90':>9} {'stages':>7}"
    ]
    for r in rows:
        lines.append(
            f"{r['trace']:{tw}} {r['shape']:>{sw}} {r['set']:9} "
            f"{r['real_makespan_ns'] / 1e3:8.2f}us {100 * r['makespan_err_before']:+9.1f}% "
            f"{100 * r['makespan_err']:+6.1f}% {100 * r['start_err_median']:8.2f}% "
            f"{100 * r['start_err_p90']:8.2f}% {100 * r['stage_err']:6.1f}%"
        )
    return "\n".join(lines)
