"""A build variant checked against the reference before it is timed, and its kda tasks'
stages by task slot.

``record`` (GPU): at each shape, the default build and the variant each run a CUDA-graph
step of several launches replayed many times, checked against the reference, and then one
traced launch, checked too, written to ``DIR/R{R}_L{L}_{default|variant}.json``.
``report`` (any machine): each trace's median stage durations by task slot (a CTA's first
kda task, its second, ...). At R = 4 half the CTAs run two tasks, and how the second
slot's code was compiled (unrolled or a loop) shows there (docs/kernel-h200.md,
run 56, where this script checked and traced the loop, a switch since reverted).

Usage:
    python -m lab.variant_check record --variant '{"sleep_ns": 0}' --shapes 4x4 --dir D
    python -m lab.variant_check report D [--out JSON]
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import CONFIG_KEYS, parse_shapes
from kda_sim.timeline import Timeline
from kda_sim.timeline.summary import slot_stats
from lab.gpu_jobs import before_launches, report_to

KEYS = ("errors", "resources", "makespan_us")


def record(
    shapes: list[tuple[int, int]], variant: dict[str, Any], out: Path, force: bool = False
) -> list[dict[str, Any]]:
    """Raises InvalidInput (before any launch, lab.gpu_jobs.before_launches) where a
    variant field is unknown, a trace of this name is there (unless ``force``) or no GPU is
    here; kda_kernel.triton.run.CheckFailed where a build's outputs differ from the reference."""
    from kda_kernel.triton.launch import Build, split_fields

    known = {f.name for f in fields(Build)} - {"cfg", "trace", "watchdog"}
    known |= set(CONFIG_KEYS) - {"R", "L", "blocks"}
    bad = sorted(set(variant) - known)
    if bad:
        raise InvalidInput(
            f"neither LaunchConfig variants nor Build options a variant may set: {bad}",
            where="--variant",
        )
    builds = (("default", {}), ("variant", variant))
    jobs = [
        (R, L, name, kw, out / f"R{R}_L{L}_{name}.json") for R, L in shapes for name, kw in builds
    ]
    before_launches([job[-1] for job in jobs], force)
    from kda_kernel.triton.run import run

    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for R, L, name, kw, path in tqdm(jobs, desc="builds", unit="build"):
        cfg = Build.default(R, L, **kw).cfg  # the variants kw leaves unsaid: recommended
        opts = split_fields(kw)[1]
        replayed = run(cfg, check=True, graph=True, build=opts)
        traced = run(cfg, check=True, trace_path=path, build=opts)
        rows.append(
            {
                "R": R,
                "L": L,
                "build": name,
                "variant": kw,
                "config": cfg.to_dict(),
                "replayed": {k: replayed[k] for k in KEYS if k in replayed},
                "traced": {k: traced[k] for k in KEYS if k in traced},
            }
        )
        print(json.dumps(rows[-1]), flush=True)
    return rows


def slot_stages(tl: Timeline) -> list[dict[str, float]]:
    """Median duration (ns) of each kda stage, one dict a task slot: slot n holds every
    CTA's n-th task."""
    out: list[dict[str, float]] = []
    for s in slot_stats(tl):
        while len(out) <= s.slot:
            out.append({})
        out[s.slot][s.stage] = s.median_ns
    return out


def report(folder: Path) -> dict[str, Any]:
    paths = sorted(folder.glob("R*_L*_*.json"))
    if not paths:
        raise FileNotFoundError(f"no R*_L*_*.json traces in {folder}")
    out: dict[str, Any] = {}
    for p in paths:
        tl = read_kernel_trace(p)
        out[p.stem] = {
            "makespan_us": (tl.makespan or 0.0) / 1e3,
            "slots_us": [{k: v / 1e3 for k, v in s.items()} for s in slot_stages(tl)],
        }
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record", help="check and trace the builds on the GPU")
    r.add_argument(
        "--variant", required=True, help="JSON dict of LaunchConfig variants and Build options"
    )
    r.add_argument("--shapes", default="4x4,4x1,1x1,2x2")
    r.add_argument("--dir", type=Path, required=True)
    r.add_argument("--force", action="store_true", help="overwrite traces of the same names")
    p = sub.add_parser("report", help="stage medians by task slot (CPU)")
    p.add_argument("dir", type=Path)
    p.add_argument("--out", type=Path)
    p.add_argument("--force", action="store_true", help="overwrite an existing --out")
    a = ap.parse_args(argv)
    try:
        if a.cmd == "record":
            variant = json.loads(a.variant)
            if not isinstance(variant, dict):
                raise InvalidInput(
                    "not a JSON object of LaunchConfig variants and Build options",
                    where="--variant",
                )
            record(list(parse_shapes(a.shapes)), variant, a.dir, a.force)
        else:
            report_to(lambda: report(a.dir), a.out, a.force)
    except json.JSONDecodeError as e:
        print(f"variant_check: --variant: {e}", file=sys.stderr)
        return 2
    except (FileNotFoundError, InvalidInput) as e:
        print(f"variant_check: {e}", file=sys.stderr)
        return 2
    except AssertionError as e:  # kda_kernel.triton.run.CheckFailed: a build's outputs are wrong
        print(f"variant_check: outputs differ from the reference: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
