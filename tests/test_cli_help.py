"""Every flag of every subcommand says what it does in ``--help``."""

import argparse

from kda_sim.cli import build_parser


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
