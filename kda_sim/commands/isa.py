"""``kda-sim isa FILE``: which polls wait behind which loads, and which flags lack
their drain, read from a kernel's final ISA (or a code object).

Exit 0: no finding; 1: a poll behind weight loads the model thinks clear, a flag
store without its drain, a poll the compiler deleted, or (``--bounded``) a poll with no
clock bound; 2: the file is not ISA.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from kda_sim.cli import COMMANDS
from kda_sim.commands.common import add_input_caps, add_kernel_flag, no_kernel_flags
from kda_sim.errors import InvalidInput
from kda_sim.isa import analyze_path
from kda_sim.isa.classes import CLASSES
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import require_hook


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("isa", help=COMMANDS["isa"])
    p.add_argument(
        "file", type=Path, help="a FlyDSL NN_final_isa.s, any AMDGPU .s, or a .hsaco/.co"
    )
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add_kernel_flag(p)
    add_input_caps(p, events=False)
    p.add_argument(
        "--preset",
        help="argument classes and accepted polls of a build of the --kernel, from its "
        "isa_presets (k1's: k1, our FlyDSL K1; probe, the analyzer's probes)",
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
    p.add_argument(
        "--ktrace-names",
        type=Path,
        default=None,
        metavar="FILE",
        help="FlyDSL's ktrace name table of the build (event name -> id, JSON), which names "
        "its ktrace ranges (default: FILE.ktrace.json beside the ISA, where there is one)",
    )
    p.add_argument(
        "--bounded",
        action="store_true",
        help="the file is a bounded-wait (debug) build: every poll loop must read a clock "
        "that a compare uses, so it gives up in time; a poll without is a finding",
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


def preset_of(args: argparse.Namespace) -> tuple[tuple[tuple[str, str], ...], set[str]]:
    """The argument layout and accepted polls of ``--preset`` (none: nothing), from the
    kernel's ``isa_presets``: each (layout, accepted labels, a configuration whose
    model's polls behind weights are accepted too, or None)."""
    if args.preset is None:
        return (), set()
    spec = get(args.kernel)
    presets = require_hook(spec, "isa_presets", "the argument classes of its builds")
    if args.preset not in presets:
        raise InvalidInput(
            f"{spec.name} has no ISA preset {args.preset!r} (its: {', '.join(sorted(presets))})",
            what="preset",
        )
    layout, accepted, model_cfg = presets[args.preset]
    out = set(accepted)
    if model_cfg is not None:
        from kda_sim.isa.model import polls_behind_weights

        out |= polls_behind_weights(model_cfg)
    return tuple(layout), out


def run(args: argparse.Namespace) -> int:
    no_kernel_flags(args)
    # FlyDSL writes no argument names: a preset names and classes them by position
    layout, accepted = preset_of(args)
    path: Path = args.file
    if not path.exists():
        raise InvalidInput("no such file", what="isa", where=str(path))
    if not path.is_file():
        raise InvalidInput(
            "not a file (give the .s or code object itself)", what="isa", where=str(path)
        )
    report = analyze_path(
        path,
        arg_classes=_arg_classes(args),
        arg_layout=layout,
        accept=accepted | set(args.accept),
        ktrace_table=args.ktrace_names,
        bounded=args.bounded,
    )
    print(report.to_json() if args.json else report.render())
    return 1 if report.findings else 0
