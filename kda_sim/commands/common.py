"""What several subcommands share: the launch configuration and GPU flags, the rule that
an output file the user already has is kept, and a report's JSON, table and figure."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import VARIANT_HELP, VARIANTS, LaunchConfig
from kda_sim.kernels.registry import get
from kda_sim.machine.profile import GpuProfile, bundled_names, load_profile


def add_launch_flags(p: argparse.ArgumentParser, *, shape: bool = True) -> None:
    p.add_argument(
        "--gpu",
        default="mi355x",
        help=f"a bundled profile ({', '.join(bundled_names())}) or a profile .json",
    )
    p.add_argument("--profile", default=None, help="a fitted profile .json (overrides --gpu)")
    if shape:
        p.add_argument("--R", type=int, default=2, help="requests (default 2)")
        p.add_argument("--L", type=int, default=2, help="tokens a request (default 2)")
    p.add_argument("--nb", type=int, default=8, help="AttnRes blocks (default 8)")
    p.add_argument("--kda0", type=int, default=0, help="CTA of kda task 0 (default 0)")
    p.add_argument(
        "--occupancy",
        type=int,
        default=None,
        help="CTAs a CU/SM (default: from threads, registers and LDS)",
    )
    add_variant_flags(p)


def add_variant_flags(p: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """A flag for each of the protocol's variants (``--gate-local``, ``--nw-first``, ...)."""
    for name in VARIANTS:
        p.add_argument(f"--{name.replace('_', '-')}", action="store_true", help=VARIANT_HELP[name])


def variant_flags(args: argparse.Namespace) -> dict[str, bool]:
    return {name: getattr(args, name) for name in VARIANTS}


# Without --kernel a command runs K1 with its own flags (add_launch_flags) and checks: the
# one place the commands layer names its default kernel
DEFAULT_KERNEL = "k1"


def other_kernel(args: argparse.Namespace) -> Any:
    """The kernel ``--kernel`` names when it is not the default (None when it is; then
    no flag was left for it)."""
    spec = get(args.kernel)
    if spec is get(DEFAULT_KERNEL):
        rest = getattr(args, "kernel_args", [])
        if rest:
            raise InvalidInput(f"unrecognized arguments: {' '.join(rest)}")
        return None
    return spec


def add_kernel_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--kernel",
        default=DEFAULT_KERNEL,
        help="the kernel: a registered name (k1, pingpong, installed ones) or a .py file "
        "defining KERNEL; its own flags follow (default k1)",
    )


class _KernelFlags(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # the kernel's flags are the user's input
        raise InvalidInput(f"{self.prog}: {message}", what="kernel flags")


def kernel_config(spec: Any, argv: list[str]) -> Any:
    """A configuration of ``spec`` from its own flags (``argv``), validated."""
    p = _KernelFlags(prog=f"--kernel {spec.name}", add_help=False)
    spec.add_flags(p)
    return spec.validate(spec.config_from_args(p.parse_args(argv)))


def launch_config(args: argparse.Namespace) -> LaunchConfig:
    return LaunchConfig(args.R, args.L, args.nb, args.kda0, **variant_flags(args)).validate()


def gpu_profile(args: argparse.Namespace) -> GpuProfile:
    return load_profile(args.profile or args.gpu)


def refuse_overwrite(path: Path | None, force: bool) -> None:
    """Checked before any work: nothing the user gave us is overwritten unless --force."""
    if path is not None and path.exists() and not force:
        raise InvalidInput("exists; pass --force to overwrite it", where=str(path))


def write_report(
    make: Callable[[], dict[str, Any]],
    table: Callable[[dict[str, Any]], str],
    plot: Callable[[dict[str, Any], Path], None] | None,
    out: Path | None,
    png: Path | None,
    force: bool,
) -> dict[str, Any]:
    """A report as JSON on stdout (and to ``out``), its table on stderr and its figure to
    ``png``; both files are checked before ``make()`` runs, so an existing one (without
    ``force``) costs no work and is kept."""
    refuse_overwrite(out, force)
    refuse_overwrite(png, force)
    report = make()
    text = json.dumps(report, indent=1)
    if out is not None:
        out.write_text(text + "\n")
    print(text)
    print(table(report), file=sys.stderr)
    if png is not None and plot is not None:
        plot(report, png)
    return report
