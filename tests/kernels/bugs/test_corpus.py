"""The bug corpus both ways: each bug's ``kda-sim check`` run fails with the finding of
its category naming its culprit and a ``fix:``; the fix's run passes. The runs are the CLI's
own; a case says only which command lines to run and what the finding must name."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.host.shortest import unrolled
from kda_sim.host.spec_text import parse
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.corpus import cases
from kda_sim.kernels.registry import get

CASES = cases()
BUGS_DIR = Path(importlib.import_module("kda_sim.kernels.bugs").__file__).parent
MAX_LINES = 125  # the longest description a bug may take (issue 33), its size hook included


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def _findings(out: str) -> list[tuple[str, str, str]]:
    """(category, message, fix) of each finding the report prints."""
    lines = out.splitlines()
    found = []
    for i, line in enumerate(lines):
        m = re.match(r"\[([\w-]+)\] (.*)", line)
        if m:
            nxt = lines[i + 1] if i + 1 < len(lines) else ""
            fix = nxt.strip().removeprefix("fix: ") if nxt.strip().startswith("fix: ") else ""
            found.append((m.group(1), m.group(2), fix))
    return found


@pytest.mark.parametrize("case", CASES, ids=[c.kernel for c in CASES])
def test_the_bug_is_found_with_its_culprit_and_a_fix(
    case: BugCase, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _run(case.argv(fixed=False), capsys)
    assert code == 1, out
    mine = [f for f in _findings(out) if f[0] == case.category]
    assert mine, f"no [{case.category}] finding in:\n{out}"
    named = [f for f in mine if case.culprit in f[1]]
    assert named, f"no [{case.category}] finding names {case.culprit!r}:\n{out}"
    assert all(f[2] for f in named), f"a finding without a fix: line:\n{out}"


@pytest.mark.parametrize("case", CASES, ids=[c.kernel for c in CASES])
def test_the_fix_passes(case: BugCase, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(case.argv(fixed=True), capsys)
    assert code == 0, out
    assert not _findings(out), out


@pytest.mark.parametrize("case", CASES, ids=[c.kernel for c in CASES])
def test_each_description_cites_its_threads_within_the_line_budget(case: BugCase) -> None:
    path = BUGS_DIR / f"{case.kernel}.py"
    text = path.read_text()
    assert len(text.splitlines()) <= MAX_LINES
    doc = " ".join((ast.get_docstring(ast.parse(text)) or "").split())
    assert case.threads and all(url in doc for url in case.threads)
    assert get(case.kernel).name == case.kernel  # registered by name


def test_the_corpus_holds_ten_bugs_from_five_projects() -> None:
    assert len(CASES) >= 10
    assert len({c.project for c in CASES}) >= 5
    assert len({c.kernel for c in CASES}) == len(CASES)


def test_a_bug_runs_from_its_file_path(capsys: pytest.CaptureFixture[str]) -> None:
    case = next(c for c in CASES if not c.sequence)
    argv = case.argv(fixed=False)
    argv[argv.index("--kernel") + 1] = str(BUGS_DIR / f"{case.kernel}.py")
    code, out = _run(argv, capsys)
    assert code == 1 and any(f[0] == case.category for f in _findings(out)), out


SEQUENCE_CASES = [c for c in CASES if c.sequence]


@pytest.mark.parametrize("case", SEQUENCE_CASES, ids=[c.kernel for c in SEQUENCE_CASES])
def test_the_shortest_sequence_reported_is_no_longer_and_still_fails(
    case: BugCase, capsys: pytest.CaptureFixture[str]
) -> None:
    _, out = _run(case.argv(fixed=False), capsys)
    line = next(ln.strip() for ln in out.splitlines() if ln.strip().startswith("shortest: "))
    least = line.removeprefix("shortest: ").split(" (")[0]
    assert len(unrolled(parse(least))) <= len(unrolled(parse(case.sequence)))
    argv = case.argv(fixed=False)
    argv[argv.index("--sequence") + 1] = least
    code, again = _run(argv, capsys)
    assert code == 1 and any(f[0] == case.category for f in _findings(again)), again


def test_grids_sharing_sms_by_footprint_hang_in_one_order_only(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """mirage#761: 80 one-warp scheduler blocks placed after the 128 workers pack into the
    20 spare SMs; placed first they spread over 80 SMs and strand 60 workers."""
    base = ["check", "--kernel", "mirage_b200", "--gpu", "b200", "--sequence"]
    code, out = _run([*base, "launch grid=scheduler & launch grid=worker"], capsys)
    assert code == 1 and "60 CTAs (grid 1) never became resident" in out, out
    assert "LDS short on 148 SMs" in out
    code, out = _run([*base, "launch grid=worker & launch grid=scheduler"], capsys)
    assert code == 0, out
