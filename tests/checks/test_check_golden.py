"""``kda-sim check`` reports exactly what it reported before it was made faster: each
case's exit code and output, byte for byte, against the fixture the code before the
change wrote (``tests/checks/check_golden.py``; regenerate it there only for a change
meant to alter a report)."""

from __future__ import annotations

import json

import pytest
from check_golden import CASES, FIXTURE, run_check

GOLDEN = json.loads(FIXTURE.read_text())


def test_the_fixture_has_every_case() -> None:
    assert set(GOLDEN) == set(CASES)
    for name, args in CASES.items():
        assert GOLDEN[name]["args"] == args, name


@pytest.mark.parametrize("name", sorted(CASES))
def test_check_reports_as_before(name: str) -> None:
    rc, text = run_check(CASES[name])
    assert text == GOLDEN[name]["stdout"]
    assert rc == GOLDEN[name]["rc"]
