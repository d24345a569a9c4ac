"""The Scorer: the same scores for any jobs, and one set of workers for a whole search."""

from __future__ import annotations

import multiprocessing
import os
from dataclasses import dataclass

import pytest

from kda_sim import parallel
from kda_sim.compare.scoring import Scorer

_FORKS = [0]  # this process's forks (a hook cannot be removed: one for the module)
os.register_at_fork(after_in_parent=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))


@dataclass
class _Trace:
    name: str
    weight: int


def _score(prof: float, tr: _Trace) -> tuple[float, int]:
    return prof * tr.weight, os.getpid()


def test_a_search_forks_its_workers_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every evaluation maps the same function (the profile travels in the items): the
    workers forked for the first serve the rest, and end with the Scorer."""
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    traces = [_Trace(f"t{i}", i) for i in range(4)]
    before = _FORKS[0]
    with Scorer(traces, _score, jobs=2) as scorer:
        got = [scorer(p) for p in (1.0, 2.5, -3.0)]
        assert _FORKS[0] == before + 1, "an evaluation forked its own workers"
    for p, scores in zip((1.0, 2.5, -3.0), got, strict=True):
        assert {k: v[0] for k, v in scores.items()} == {t.name: p * t.weight for t in traces}
    pids = {pid for scores in got for _, pid in scores.values()} - {os.getpid()}
    assert len(pids) <= 1  # one worker at most, for all three evaluations
    assert not multiprocessing.active_children()
