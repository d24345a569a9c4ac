"""``kda-sim simulate``: one launch on a GPU profile -> makespan, stage table, files."""

from __future__ import annotations

import argparse
import json
from dataclasses import asdict
from pathlib import Path

from kda_sim.commands.common import (
    add_launch_flags,
    gpu_profile,
    launch_config,
    refuse_overwrite,
)
from kda_sim.engine import SimResult, simulate
from kda_sim.errors import InvalidInput
from kda_sim.timeline.chrome import write_chrome
from kda_sim.timeline.gantt import save_gantt
from kda_sim.timeline.summary import format_table, stage_stats


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("simulate", help="simulate one launch")
    add_launch_flags(p)
    p.add_argument("--seed", type=int, default=None, help="jitter latencies with this seed")
    p.add_argument("--jitter", type=float, default=0.15, help="relative jitter with --seed")
    p.add_argument("--out", type=Path, help="write the timeline (Chrome trace JSON, Perfetto)")
    p.add_argument("--png", type=Path, help="write a Gantt figure")
    p.add_argument("--force", action="store_true", help="overwrite existing --out / --png files")
    p.add_argument("--json", action="store_true", help="print a machine-readable summary")
    p.set_defaults(run=run)


def summary(res: SimResult) -> dict:
    tl = res.timeline
    return {
        "gpu": tl.meta.gpu,
        "config": tl.meta.config().to_dict(),
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
    cfg = launch_config(args)
    prof = gpu_profile(args)
    if args.jitter < 0 or args.jitter >= 1:
        raise InvalidInput(f"--jitter {args.jitter}: must be in [0, 1)", what="jitter")
    refuse_overwrite(args.out, args.force)
    refuse_overwrite(args.png, args.force)
    res = simulate(cfg, prof, occupancy=args.occupancy, seed=args.seed, jitter=args.jitter)
    tl = res.timeline
    if args.out:
        write_chrome(tl, args.out)
    if args.png:
        save_gantt(tl, args.png)
    if args.json:
        print(json.dumps(summary(res), indent=2))
    else:
        print(
            f"{prof.name}  {cfg.label()}  occupancy {res.residency.per_unit} a "
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
