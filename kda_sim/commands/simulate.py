"""``kda-sim simulate``: one launch on a GPU profile -> makespan, stage table, files.

``--like TRACE`` simulates the launch a measured trace ran (our K1's: its configuration,
variants, build resources and CTAs an SM, on its GPU's fitted profile; another kernel's,
such as the bundled grid barrier's: its kernel and configuration, each CTA on the SM it
recorded, on its GPU's profile): the trace's simulated counterpart, kept in the user's
cache (:mod:`kda_sim.compare.counterpart`)."""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import (
    JITTER,
    SEED,
    add_kernel_flag,
    add_launch_flags,
    check_outputs,
    gpu_profile,
    k1_flags_given,
    kernel_config,
    launch_config,
    other_kernel,
    write_output,
)
from kda_sim.engine import SimResult, simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL, get
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.machine.residency import Residency, check_occupancy
from kda_sim.timeline.chrome import write_chrome
from kda_sim.timeline.gantt import save_gantt
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.summary import format_table, stage_stats


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help=COMMANDS["simulate"])
    add_kernel_flag(p)
    add_launch_flags(p)
    p.add_argument(
        "--like",
        type=Path,
        metavar="TRACE",
        help="simulate the launch a measured trace ran (its kernel, shape, variants, build "
        "and GPU's profile; cached); no shape or variant flags with it",
    )
    # None marks a flag the user did not give: --like refuses them; else the defaults
    p.set_defaults(gpu=None, R=None, L=None, nb=None, kda0=None)
    p.add_argument("--seed", type=SEED, default=None, help="jitter latencies with this seed")
    p.add_argument("--jitter", type=JITTER, default=0.15, help="relative jitter with --seed")
    p.add_argument("--out", type=Path, help="write the timeline (Chrome trace JSON, Perfetto)")
    p.add_argument("--png", type=Path, help="write a Gantt figure")
    p.add_argument("--force", action="store_true", help="overwrite existing --out / --png files")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    p.set_defaults(run=run)


DEFAULTS = {"gpu": "mi355x", "R": 2, "L": 2, "nb": 8, "kda0": 0}


def summary(res: SimResult) -> dict:
    tl = res.timeline
    spec = get(tl.meta.kernel)
    return {
        "kernel": spec.name,
        "gpu": tl.meta.gpu,
        "config": spec.config_to_dict(tl.meta.config()),
        "makespan_ns": tl.makespan,
        "deadlock": tl.deadlock,
        "ctas": len(tl.ctas),
        "occupancy": res.residency.per_unit,
        "slots": res.residency.slots,
        "occupancy_limited_by": res.residency.limited_by,
        "hbm_bytes": res.hbm_bytes,
        "stages": [asdict(s) for s in stage_stats(tl)],
        "stuck": [asdict(s) for s in tl.stuck[:20]],
        "stuck_count": len(tl.stuck),
    }


def run(args: argparse.Namespace) -> int:
    check_outputs(args.force, out=args.out, png=args.png)
    if args.like is not None:  # any kernel's trace: --kernel only checks it
        return run_like(args)
    spec = other_kernel(args)
    if spec is not None:
        return run_kernel(spec, args)
    for k, v in DEFAULTS.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    cfg = launch_config(args)
    prof = gpu_profile(args)
    check_occupancy(cfg, prof, args.occupancy)
    res = simulate(cfg, prof, occupancy=args.occupancy, seed=args.seed, jitter=args.jitter)
    return report(res, prof, args)


def run_kernel(spec: Any, args: argparse.Namespace) -> int:
    """A launch of another kernel than K1, its configuration from its own flags."""
    given = k1_flags_given(args)
    if given:
        raise InvalidInput(f"{', '.join(given)}: K1's, not {spec.name}'s flags", what="kernel")
    cfg = kernel_config(spec, getattr(args, "kernel_args", []))
    prof = load_profile(args.profile or args.gpu or DEFAULTS["gpu"], kernel=spec)
    check_occupancy(cfg, prof, args.occupancy)
    res = simulate(cfg, prof, occupancy=args.occupancy, seed=args.seed, jitter=args.jitter)
    return report(res, prof, args)


def run_like(args: argparse.Namespace) -> int:
    from kda_sim.compare.counterpart import (
        counterpart,
        like_profile,
        read_like_trace,
        simulate_like,
    )
    from kda_sim.compare.model import config_of
    from kda_sim.importers.claimed_launch import check_claimed_launch

    rest = getattr(args, "kernel_args", [])  # another kernel's flags and their values
    given = k1_flags_given(args) + ([a for a in rest if a.startswith("-")] or rest)
    if given:
        raise InvalidInput(
            f"{', '.join(given)}: --like takes the configuration from the trace", what="like"
        )
    real = read_like_trace(args.like)
    if args.kernel != DEFAULT_KERNEL and real.meta.kernel != get(args.kernel).name:
        raise InvalidInput(
            f"a {real.meta.kernel} launch, not one of --kernel {args.kernel}",
            what="kernel",
            where=str(args.like),
        )
    check_claimed_launch(real, str(args.like))
    prof = like_profile(real, args.profile or args.gpu)
    check_occupancy(config_of(real), prof, args.occupancy)
    if args.seed is None and args.occupancy is None:  # the nominal counterpart: cached
        tl = counterpart(args.like, args.profile or args.gpu, real)
        res = _from_cache(tl)
    else:
        res = simulate_like(real, prof, args.occupancy, args.seed, args.jitter, args.like.name)
    if not args.json:
        m = real.makespan
        print(f"like {args.like}: measured makespan {m / 1e3:.3f} us" if m else f"like {args.like}")
    return report(res, prof, args)


def _from_cache(tl: Timeline) -> SimResult:
    """A :class:`SimResult` from a cached counterpart: what its meta recorded."""
    sim = tl.meta.extra.get("simulation", {}) if isinstance(tl.meta.extra, dict) else {}
    res = Residency(
        int(sim.get("occupancy", 0)),
        int(sim.get("slots", 0)),
        str(sim.get("limited_by", "")),
        False,
    )
    return SimResult(tl, res, hbm_bytes=int(sim.get("hbm_bytes", 0)))


def report(res: SimResult, prof: GpuProfile, args: argparse.Namespace) -> int:
    cfg = res.timeline.meta.config()
    label = get(res.timeline.meta.kernel).label(cfg)
    tl = res.timeline
    said = tl.meta.extra.get("costs") if isinstance(tl.meta.extra, dict) else None
    if said:  # which kernel costs the GPU profile ran with
        print(f"costs: {said}", file=sys.stderr)
    if args.out:
        write_output(args.out, lambda tmp: write_chrome(tl, tmp), args.force, "--out")
    if args.png:
        write_output(args.png, lambda tmp: save_gantt(tl, tmp), args.force, "--png")
    if args.json:
        print(json.dumps(summary(res), indent=2))
    else:
        print(
            f"{prof.name}  {label}  occupancy {res.residency.per_unit} a "
            f"{prof.unit_name} ({res.residency.slots} slots, by {res.residency.limited_by})"
        )
        if tl.makespan is not None:
            print(
                f"makespan {tl.makespan / 1e3:.3f} us  (HBM bytes {res.hbm_bytes / 1e6:.1f} MB, "
                f"bound {res.hbm_bytes / prof.hbm_bytes_per_ns / 1e3:.3f} us)"
            )
        print(format_table(stage_stats(tl)))
        if tl.deadlock:
            print(f"\nDEADLOCK: {len(tl.stuck)} CTAs cannot go on; first ones:")
            for s in tl.stuck[:8]:
                at = f" on {s.region}[{s.index}]" if s.region else ""
                print(f"  CTA {s.cta} in {s.stage}{at}: {s.reason}")
        for f in (args.out, args.png):
            if f:
                print(f"wrote {f}")
    return 1 if tl.deadlock else 0
