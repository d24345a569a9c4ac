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
from kda_sim.gcpause import freeze_at_exit

# the subcommands, each a module of kda_sim.commands of its name, in the order --help
# lists them, and what each does (its line in --help: the top level's lists them without
# importing a command's module)
COMMANDS = {
    "simulate": "simulate one launch",
    "check": "check a launch (deadlock, visibility, role rule) or, with --tags, tag uniqueness",
    "sweep": "safety map over R x L for one GPU",
    "kernel": "run the real Triton K1 on a CUDA GPU",
    "compare": "a real trace against the model",
    "calibrate": "fit a kernel's costs on a GPU to real traces",
    "isa": "analyze a kernel's ISA: polls behind loads, undrained flags",
    "floor": "how fast the protocol could run: the model's costs taken away step by step",
    "spread": "real launches of one shape against each other and against the model",
    "variants": "a kernel bench's measured variant differences beside the model's",
}

DESCRIPTION = "Simulate, check and compare the mailbox protocols of GPU persistent kernels."
EPILOG = (
    "Exit codes: 0 fine, 1 a property fails, 2 invalid input. kda-sim COMMAND --help: its flags."
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
    parser, sub = _top()
    for name in COMMANDS if only is None else (only,):
        command_module(name).add_parser(sub)
    return parser


def top_parser() -> argparse.ArgumentParser:
    """The top level alone: each subcommand named, with its line of help, and none of
    its flags, so no command's module is imported (``kda-sim --help``: building every
    command's parser imported them all, about a second of imports)."""
    parser, sub = _top()
    for name, line in COMMANDS.items():
        sub.add_parser(name, help=line)
    return parser


def _top() -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    parser = _Parser(prog="kda-sim", description=DESCRIPTION, epilog=EPILOG)
    return parser, parser.add_subparsers(dest="command", required=True, parser_class=_Parser)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    freeze_at_exit()  # the interpreter's exit skips collecting what a command left
    # a subcommand named first (the top level has no flag but --help): its parser alone;
    # else the top level's (its help, or its error), and the command's parser where the
    # command came later after all
    parser = build_parser(argv[0]) if argv and argv[0] in COMMANDS else top_parser()
    args, rest = parser.parse_known_args(argv)
    if not hasattr(args, "run"):
        parser = build_parser(args.command)
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
