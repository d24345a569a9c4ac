"""``kda-sim``: one entry point, a subcommand a module under :mod:`kda_sim.commands`.

Exit codes everywhere: 0 fine, 1 a property fails, 2 invalid input.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from types import ModuleType

from kda_sim.errors import KdaSimError

# the subcommands, each a module of kda_sim.commands of its name, in the order --help
# lists them
COMMANDS = (
    "simulate",
    "check",
    "sweep",
    "kernel",
    "compare",
    "calibrate",
    "isa",
    "floor",
    "spread",
    "variants",
)


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"kda_sim.commands.{name}")


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse's own exit code is 2 as well
        self.print_usage(sys.stderr)
        self.exit(2, f"kda-sim: error: {message}\n")


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The parser of every subcommand, or with ``only`` of that one alone: ``main`` given
    a subcommand imports no other's module (the commands' imports together take about
    twice what ``check``'s do: trace readers, the ISA analysis and its graph library)."""
    parser = _Parser(prog="kda-sim", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for name in COMMANDS if only is None else (only,):
        command_module(name).add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # a subcommand named first (the top level has no flag but --help): its parser alone
    parser = build_parser(argv[0] if argv and argv[0] in COMMANDS else None)
    args, rest = parser.parse_known_args(argv)
    if rest and not hasattr(args, "kernel"):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.kernel_args = rest  # the flags of the kernel --kernel names
    from kda_sim.commands.common import apply_input_caps

    try:
        apply_input_caps(args)  # before any reader runs
        return int(args.run(args))
    except KdaSimError as e:
        print(f"kda-sim {args.command}: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (``| head``) went away: stop quietly, as a Unix tool does
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    finally:
        # a cluster --cluster connected (or started: local) ends with the command
        cluster = sys.modules.get("kda_sim.cluster")
        if cluster is not None:
            cluster.close_all()


if __name__ == "__main__":
    sys.exit(main())
