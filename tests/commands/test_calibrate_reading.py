"""``kda-sim calibrate``'s traces read in several processes: the same traces as one
process reads, in order, and the first bad one refused by name."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kda_sim import parallel
from kda_sim.cli import build_parser
from kda_sim.commands import calibrate as command
from kda_sim.compare.calibrate import Trace
from kda_sim.errors import InvalidInput

TRACES = Path(__file__).resolve().parents[2] / "traces"
SHAPES = ("R1_L2", "R2_L1", "R1_L1")  # the largest file not first: the order is kept

_FORKS = [0]  # this process's forks (a hook cannot be removed: one for the module)
os.register_at_fork(after_in_parent=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))


def _args(paths: list[Path]):
    argv = ["calibrate", *map(str, paths), "--out", "unused.json"]
    return build_parser("calibrate").parse_args(argv)


def _read(paths: list[Path], jobs: int) -> list[Trace]:
    clk = {"clock_mode": None, "clock_group": None}
    return command.prepared_traces(paths, _args(paths), clk, jobs)


def _same(a: Trace, b: Trace) -> None:
    assert (a.name, a.cfg, a.tl, a.makespan, a.keys) == (b.name, b.cfg, b.tl, b.makespan, b.keys)
    assert np.array_equal(a.start, b.start)
    assert (a.busy, a.occupancy, a.resources) == (b.busy, b.occupancy, b.resources)
    assert a.kind_dur == b.kind_dur


def test_traces_read_in_two_processes_are_those_one_reads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    monkeypatch.setattr(command, "start_method", lambda: "fork")
    paths = [TRACES / f"k1_h200_{s}.json.gz" for s in SHAPES]
    before = _FORKS[0]
    two = _read(paths, 2)
    assert _FORKS[0] == before + 1  # a worker read some of them
    one = _read(paths, 1)
    assert [t.name for t in two] == [p.name for p in paths]
    for a, b in zip(one, two, strict=True):
        _same(a, b)


def test_the_first_bad_trace_in_order_is_refused(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    monkeypatch.setattr(command, "start_method", lambda: "fork")
    broken = tmp_path / "broken.json"
    broken.write_text("{")
    missing = tmp_path / "missing.json"
    good = TRACES / "k1_h200_R1_L1.json.gz"
    # the good trace is the largest file: handed out first, the bad ones read meanwhile
    with pytest.raises(InvalidInput, match=r"missing\.json"):
        _read([good, missing, broken], 2)
    with pytest.raises(InvalidInput, match=r"broken\.json"):
        _read([good, broken, missing], 2)
