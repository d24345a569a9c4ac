"""Every flag of every subcommand says what it does in ``--help``."""

import argparse
import ast
import os
import re
import subprocess
import sys

from kda_sim.cli import COMMANDS, build_parser, top_parser


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def test_every_option_has_help() -> None:
    bare: list[str] = []
    for name, sub in _subparsers(build_parser()).items():
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction) or not action.option_strings:
                continue
            if not (action.help or "").strip() or action.help == argparse.SUPPRESS:
                bare.append(f"{name} {'/'.join(action.option_strings)}")
    assert not bare, "flags without help text: " + ", ".join(bare)


def test_a_subcommand_alone_parses_and_helps_as_in_the_whole_parser() -> None:
    whole = _subparsers(build_parser())
    assert list(whole) == list(COMMANDS)
    for name in COMMANDS:
        alone = _subparsers(build_parser(name))
        assert list(alone) == [name]
        assert alone[name].format_help() == whole[name].format_help()


def test_no_help_shows_docstring_markup() -> None:
    # the descriptions are the commands' module docstrings, written in reST for the code's
    # readers; a terminal shows ``x`` and :mod:`y` as they are typed
    pages = {"kda-sim": top_parser().format_help()}
    pages |= {n: p.format_help() for n, p in _subparsers(build_parser()).items()}
    marked = [n for n, page in pages.items() if "``" in page or re.search(r":[a-z]+:`", page)]
    assert not marked, "help with reST markup: " + ", ".join(marked)


def _loaded_by_check_parser(fresh_python, prefix: str) -> set[str]:
    """The modules under ``prefix`` a new interpreter holds once it built `check`'s parser."""
    code = (
        "import sys; from kda_sim.cli import build_parser; build_parser('check'); "
        f"print(sorted(m for m in sys.modules if m.startswith({prefix!r})))"
    )
    return set(ast.literal_eval(fresh_python(code)))


def test_a_subcommand_imports_no_other_commands_module(fresh_python) -> None:
    # main given a subcommand builds its parser alone: the others' imports (trace
    # readers, the ISA analysis and networkx) are not paid by `kda-sim check`
    loaded = _loaded_by_check_parser(fresh_python, "kda_sim.commands.")
    others = {f"kda_sim.commands.{n}" for n in COMMANDS} - {"kda_sim.commands.check"}
    assert "kda_sim.commands.check" in loaded and not loaded & others


def test_the_top_level_helps_as_the_whole_parser_without_a_commands_module() -> None:
    assert top_parser().format_help() == build_parser().format_help()


def test_top_level_help_imports_no_command_and_nothing_heavy() -> None:
    # `kda-sim --help` lists the commands from cli.COMMANDS: no command's module, so none
    # of their imports (numpy, networkx, the ISA analysis, trace readers, the engine)
    code = (
        "import sys\nfrom kda_sim.cli import main\ntry:\n    main(['--help'])\n"
        "except SystemExit as e:\n    assert e.code == 0\n"
        "print(sorted(sys.modules), file=sys.stderr)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "simulate one launch" in out.stdout
    loaded = set(ast.literal_eval(out.stderr))
    heavy = {"numpy", "networkx", "simpy", "kda_sim.isa", "kda_sim.importers", "kda_sim.engine"}
    assert not {m for m in loaded if m.split(".")[0] in heavy or m in heavy}
    assert not {m for m in loaded if m.startswith(("kda_sim.commands", "kda_sim.isa."))}
    assert "kda_sim.cli" in loaded  # (the check itself sees what main imported)


def test_the_common_flags_import_no_trace_reader(fresh_python) -> None:
    # every command's flags name the readers' caps (importers.caps): a command that reads
    # no trace (check, sweep) pays for neither the readers nor the timeline schema, which
    # is compiled on import
    loaded = _loaded_by_check_parser(fresh_python, "kda_sim.")
    assert "kda_sim.importers.caps" in loaded  # the flags are there
    readers = {"kda_sim.timeline.schema", "kda_sim.importers.chrome", "kda_sim.importers.ktrace"}
    assert not loaded & readers


def test_the_gpu_flag_lists_the_bundled_names_only_when_help_is_shown(fresh_python) -> None:
    # listing them imports every built-in kernel (their fitted overlays): a command's
    # parser, built for every run, imports the default kernel alone
    code = (
        "from kda_sim.cli import build_parser; from kda_sim.kernels import registry\n"
        "build_parser('sweep'); print(sorted(registry._loaded))"
    )
    assert fresh_python(code) == "['k1']"
    from kda_sim.machine.profile import bundled_names

    wide = {**os.environ, "COLUMNS": "1000"}  # no line breaks (argparse breaks at hyphens)
    cmd = [sys.executable, "-m", "kda_sim.cli", "sweep", "--help"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=wide)
    assert f"fitted ones ({', '.join(bundled_names())}), or a profile .json" in out.stdout
