"""The reports of ``kda-sim check`` on a few launches, kept as they were before the check
was made faster (issue 32): K1 at the benchmark's shape and smaller ones (text and JSON,
mutants, tickets, other seeds and jitter), example kernels and a bug kernel. The text and
JSON reports print every verdict and, in JSON, every engine run's makespan, so a change to
any result shows here.

``python tests/checks/check_golden.py`` rewrites the fixture from the ``kda_sim`` it
imports (run it with the tree whose reports are the reference on the path)."""

from __future__ import annotations

import contextlib
import io
import json
import sys
from pathlib import Path

FIXTURE = Path(__file__).resolve().parent / "fixtures" / "check_golden.json"

# name -> the arguments after ``kda-sim check``
CASES: dict[str, list[str]] = {
    "k1_h200_R4_L2": ["--gpu", "h200", "--R", "4", "--L", "2"],
    "k1_mi355x_R2_L1_json": ["--gpu", "mi355x", "--R", "2", "--L", "1", "--json"],
    "k1_h200_R1_L1_kda_tickets": ["--gpu", "h200", "--R", "1", "--L", "1", "--kda-tickets",
                                  "--seeds", "1"],
    "k1_mi300x_R1_L2_seeds5": ["--gpu", "mi300x", "--R", "1", "--L", "2", "--seeds", "5",
                               "--jitter", "0.5", "--json"],
    "k1_mutant_drop_poll_cell": ["--gpu", "mi355x", "--R", "1", "--L", "1", "--seeds", "1",
                                 "--mutant", "drop-poll-cell"],
    "k1_mutant_no_drain_json": ["--gpu", "mi355x", "--R", "1", "--L", "1", "--seeds", "2",
                                "--mutant", "no-drain", "--json"],
    "pingpong": ["--kernel", "pingpong"],
    "pingpong_json": ["--kernel", "pingpong", "--json"],
    "gridbarrier": ["--kernel", "gridbarrier"],
    "ticketqueue": ["--kernel", "ticketqueue"],
    "bug_flashmoe_h20": ["--kernel", "flashmoe_h20", "--gpu", "h20"],
    "bug_flashmoe_h20_json": ["--kernel", "flashmoe_h20", "--gpu", "h20", "--json"],
}  # fmt: skip


def run_check(args: list[str]) -> tuple[int, str]:
    """``kda-sim check ARGS`` in this process: its exit code and what it printed."""
    from kda_sim.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(["check", *args])
    return rc, out.getvalue()


def write() -> None:
    got = {}
    for name, args in CASES.items():
        rc, text = run_check(args)
        got[name] = {"args": args, "rc": rc, "stdout": text}
        print(f"{name}: exit {rc}, {len(text)} characters", file=sys.stderr)
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_text(json.dumps(got, indent=1) + "\n")


if __name__ == "__main__":
    write()
