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


# text and JSON; a hang (tickets, the bug kernel), stale reads (no-drain), every run's
# makespan (seeds5): what a worker sends back covers each
JOBS_CASES = (
    "k1_h200_R4_L2",
    "k1_mi300x_R1_L2_seeds5",
    "k1_mutant_no_drain_json",
    "k1_h200_R1_L1_kda_tickets",
    "bug_flashmoe_h20",
    "bug_flashmoe_h20_json",
)


@pytest.mark.parametrize("name", JOBS_CASES)
def test_check_reports_the_same_for_two_jobs(name: str) -> None:
    """``--jobs 2``: the engine runs shared with a worker, which sends back their
    summaries; the report is the one job's (the fixture), byte for byte."""
    one = run_check(CASES[name])
    two = run_check([*CASES[name], "--jobs", "2"])
    assert two == one == (GOLDEN[name]["rc"], GOLDEN[name]["stdout"])
