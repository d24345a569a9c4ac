"""``kda-sim isa FILE``: which polls wait behind which loads, and which flags lack
their drain, read from a kernel's final ISA (or a code object).

Exit 0: no finding; 1: a poll behind weight loads the model thinks clear, a flag
store without its drain, or a poll the compiler deleted; 2: the file is not ISA.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kda_sim.errors import InvalidInput
from kda_sim.isa import analyze_path
from kda_sim.isa.classes import CLASSES
from kda_sim.isa.presets import PRESETS
from kda_sim.kernels.k1.config import LaunchConfig


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("isa", help="analyze a kernel's ISA: polls behind loads, undrained flags")
    p.add_argument(
        "file", type=Path, help="a FlyDSL NN_final_isa.s, any AMDGPU .s, or a .hsaco/.co"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--preset",
        choices=sorted(PRESETS),
        help="argument classes and accepted polls of a kernel we know (k1: our FlyDSL K1)",
    )
    p.add_argument(
        "--arg-class",
        action="append",
        default=[],
        metavar="ARG=CLASS",
        help=f"class of a kernel argument by name or index (argN); CLASS in {', '.join(CLASSES)}",
    )
    p.add_argument(
        "--accept",
        action="append",
        default=[],
        metavar="LABEL",
        help="a poll marker label allowed behind weights (e.g. 'load_x XRDY')",
    )
    p.set_defaults(run=run)


def _arg_classes(args: argparse.Namespace) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in args.arg_class:
        name, sep, cls = item.partition("=")
        if not sep or not name or cls not in CLASSES:
            raise InvalidInput(
                f"--arg-class {item!r}: expected ARG=CLASS with CLASS in {', '.join(CLASSES)}",
                what="arg-class",
            )
        out[name] = cls
    return out


def _accepted(preset: str | None, extra: list[str]) -> set[str]:
    accepted = set(extra)
    if preset == "k1":
        # the model's own answer (R=1 L=1 has every role), not only the preset's list
        from kda_sim.isa.model import polls_behind_weights

        accepted |= polls_behind_weights(LaunchConfig(1, 1))
    elif preset:
        accepted |= set(PRESETS[preset][1])
    return accepted


def run(args: argparse.Namespace) -> int:
    path: Path = args.file
    if not path.exists():
        raise InvalidInput("no such file", what="isa", where=str(path))
    if not path.is_file():
        raise InvalidInput(
            "not a file (give the .s or code object itself)", what="isa", where=str(path)
        )
    # FlyDSL writes no argument names: a preset names and classes them by position
    layout = PRESETS[args.preset][0] if args.preset else ()
    report = analyze_path(
        path,
        arg_classes=_arg_classes(args),
        arg_layout=layout,
        accept=_accepted(args.preset, args.accept),
    )
    print(report.to_json() if args.json else report.render())
    return 1 if report.findings else 0
