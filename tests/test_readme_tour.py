"""The README's five-minute tour runs as written on a fresh clone: every `kda-sim`
command of it, from a folder holding only the bundled traces."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from kda_sim.cli import main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
TOUR = README[README.index("## A five-minute tour") : README.index("## The command line")]
COMMANDS = [
    line
    for block in re.findall(r"```sh\n(.*?)```", TOUR, re.S)
    for line in block.splitlines()
    if line.startswith("kda-sim ")
]
EXIT = {"check": 1}  # the tour's check is the deadlock it explains


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_the_tour_has_its_commands() -> None:
    assert [shlex.split(c)[1] for c in COMMANDS] == ["simulate", "check", "sweep", "compare"]


@pytest.mark.parametrize("cmd", COMMANDS)
def test_a_tour_command_runs_as_written(
    cmd: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    (tmp_path / "traces").symlink_to(ROOT / "traces")
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(cmd)[1:]
    assert main(argv) == EXIT.get(argv[0], 0)
    out = capsys.readouterr().out
    for word in argv:
        if word.endswith((".png", ".json")) and not word.startswith("traces/"):
            assert (tmp_path / word).stat().st_size > 0, word
    if argv[0] == "check":
        # the README quotes the answer: its deadlock line is what the command prints
        quoted = re.search(r"```\n(\[deadlock\].*?)\n    fix:", TOUR, re.S)
        assert quoted and _flat(quoted.group(1)) in _flat(out)


TABLE = README[README.index("## The command line") :]


def test_the_command_tables_isa_example_runs_on_a_fresh_clone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    # the example names an ISA the clone holds (not a FlyDSL build's output it lacks)
    row = re.search(r"\| `(kda-sim isa [^`]*)` \|", TABLE)
    assert row, "the command table has a kda-sim isa example"
    argv = shlex.split(row.group(1))[1:]
    isa = next(a for a in argv if a.endswith(".s"))
    assert (ROOT / isa).is_file() and isa.startswith("docs/"), isa
    (tmp_path / "docs").symlink_to(ROOT / "docs")
    monkeypatch.chdir(tmp_path)
    assert main(argv) in (0, 1)  # 1: findings in the ISA, reported
    assert "poll" in capsys.readouterr().out
