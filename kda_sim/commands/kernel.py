"""``kda-sim kernel run``: the real Triton K1 on a CUDA GPU (``kernel/run.py``).

Exit codes: 0 ran (and matched with --check), 1 the check failed or the watchdog gave up,
2 no GPU / invalid input / a launch the pre-flight refused.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kda_sim.commands.common import refuse_overwrite
from kernel.faults import FAULTS


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("kernel", help="run the real Triton K1 on a CUDA GPU")
    ksub = p.add_subparsers(dest="kernel_command", required=True)
    r = ksub.add_parser("run", help="one launch (or --graph: CUDA-graph steps) of K1")
    r.add_argument("--R", type=int, default=1, help="requests")
    r.add_argument("--L", type=int, default=1, help="tokens a request")
    r.add_argument("--nb", type=int, default=8, help="AttnRes blocks")
    r.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0")
    r.add_argument("--trace", type=Path, help="write the measured timeline (traces/*.json)")
    r.add_argument("--force", action="store_true", help="overwrite an existing --trace file")
    r.add_argument("--check", action="store_true", help="compare with the torch reference")
    r.add_argument("--graph", action="store_true", help="replay a 3-launch step in a CUDA graph")
    r.add_argument("--replays", type=int, default=20, help="graph replays with --graph")
    r.add_argument(
        "--warmup",
        type=int,
        default=0,
        help="eager steps before the one measured and traced (a warm launch; not with --graph)",
    )
    r.add_argument("--watchdog-ms", type=float, help="bound every wait (watchdog build)")
    r.add_argument("--inject", choices=FAULTS, help="plant one fault (implies the watchdog)")
    r.add_argument(
        "--prefetch-weights",
        type=int,
        choices=range(5),
        default=0,
        metavar="MODE",
        help="also ask L2 for gemv weights before the XRDY poll: 1 a prefetch "
        "a line; 2, 3, 4 the copy engine's bulk prefetch of the first group, "
        "and the second after the poll, or before it too (kernel.launch."
        "Build.prefetch; 0, the default: every mode measured slower on the "
        "H200)",
    )
    r.add_argument(
        "--nw-first",
        choices=("on", "off"),
        default=None,
        help="ask for in_nw with the slice's loads (on) or after the MSQ poll, the "
        "seed's order (off); default: Triton's Build.NW_FIRST (on at L = 1, "
        "2), off for FlyDSL",
    )
    r.add_argument("--json", action="store_true", help="print the result as JSON")
    r.add_argument(
        "--backend",
        choices=("triton", "flydsl"),
        default="triton",
        help="triton (CUDA; ROCm untested) or flydsl (needs a ROCm GPU)",
    )
    r.add_argument("--arch", default=None, help="with --backend flydsl: gfx942 or gfx950")
    r.set_defaults(run=run)


def run_flydsl(args: argparse.Namespace) -> int:
    """The FlyDSL K1 runs only where a ROCm GPU exists; here it says there is none."""
    from kda_sim.kernels.k1.config import LaunchConfig
    from kernel.flydsl.run import run_k1

    cfg = LaunchConfig(args.R, args.L, args.nb, args.kda0, nw_first=args.nw_first == "on")
    run_k1(cfg.validate(), args.arch)
    return 0


def build_options(args: argparse.Namespace) -> dict[str, object]:
    """The Build fields the flags set (kernel.launch.Build); the rest keep their defaults."""
    out: dict[str, object] = {}
    if args.prefetch_weights:
        out["prefetch"] = args.prefetch_weights
    if args.nw_first is not None:
        out["nw_first"] = args.nw_first == "on"
    return out


def run(args: argparse.Namespace) -> int:
    if args.backend == "flydsl":
        return run_flydsl(args)  # InvalidInput (no ROCm GPU) -> exit 2 in kda_sim.cli
    refuse_overwrite(args.trace, args.force)  # before any GPU work
    try:
        from kernel.run import KernelUnavailable
        from kernel.run import run as krun
    except ImportError as e:  # torch / triton not installed: same answer as no GPU
        print(f"kda-sim kernel run: needs torch and triton ({e.name} missing)", file=sys.stderr)
        return 2
    from kernel.preflight import UnsafeLaunch
    from kernel.run import CheckFailed
    from kernel.watchdog import KernelStuck

    try:
        res = krun(
            args.R,
            args.L,
            args.nb,
            args.kda0,
            trace_path=args.trace,
            check=args.check,
            graph=args.graph,
            watchdog_ms=args.watchdog_ms,
            inject=args.inject,
            replays=args.replays,
            warmup=args.warmup,
            build=build_options(args) or None,
        )
    except KernelUnavailable as e:
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return 2
    except UnsafeLaunch as e:
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return 2
    except (KernelStuck, CheckFailed) as e:
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return 1
    except ValueError as e:
        print(f"kda-sim kernel run: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, indent=1, default=str))
    else:
        for k, v in res.items():
            print(f"{k}: {v}")
    return 0
