"""Scoring a profile on many traces, in worker processes where asked.

The fit's search simulates every training trace once an evaluation (``budget`` x traces
launches, 0.1 to 1.5 s each): the traces are independent, so ``jobs`` processes share
them. Each worker receives the prepared traces once, when it starts; an evaluation then
sends only the profile (with each item), to the same workers for the whole fit. The
simulation is deterministic, so the scores do not depend on ``jobs`` (processes, or a
:class:`kda_sim.cluster.Cluster`).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from kda_sim.parallel import Closing, Jobs, Workers, resolve_jobs

if TYPE_CHECKING:  # the calibration module imports this one
    from kda_sim.compare.calibrate import Score, Trace
    from kda_sim.machine.profile import GpuProfile

# each Scorer's traces and scoring function, by its key: set once in each process that
# scores for it (its workers, and this one where it takes items itself); a key unique
# across processes, as a cluster's workers serve several clients' Scorers
_ADOPTED: dict[str, tuple[list[Any], Callable[[Any, Any], Any]]] = {}


def _adopt(key: str, traces: list[Any], scorer: Callable[[Any, Any], Any]) -> None:
    _ADOPTED[key] = (traces, scorer)


def _release(key: str) -> None:
    _ADOPTED.pop(key, None)


def _score_one(key: str, item: tuple[Any, int]) -> Any:
    """One trace's score: ``item`` is (the profile, the trace's index)."""
    prof, i = item
    traces, scorer = _ADOPTED[key]
    return scorer(prof, traces[i])


class Scorer(Closing):
    """``scorer(prof)``: {trace name: score}; a context manager (its workers end on exit).
    ``jobs``: None, the cores; or a cluster."""

    def __init__(
        self,
        traces: Sequence[Trace],
        score_one: Callable[[GpuProfile, Trace], Score],
        jobs: Jobs = 1,
    ) -> None:
        self.traces = list(traces)
        self.score_one = score_one
        if jobs is None or isinstance(jobs, int):  # no more processes than traces
            jobs = min(resolve_jobs(jobs), len(self.traces)) or 1
        self._key = uuid.uuid4().hex
        # no bar of its own: the fit draws one over its evaluations
        self._workers = Workers(
            jobs,
            progress=False,
            initializer=_adopt,
            initargs=(self._key, self.traces, score_one),
            finalizer=_release,
            finalargs=(self._key,),
        )
        # one function for every evaluation, the profile in the items: the workers forked
        # for the first evaluation serve the whole search (Workers keeps a forked pool
        # while the function is the same object), where a function of the profile made
        # them fork again each time
        self._one = partial(_score_one, self._key)

    def __call__(self, prof: GpuProfile) -> dict[str, Score]:
        if self._workers.in_process:
            scores = [self.score_one(prof, tr) for tr in self.traces]
        else:  # the workers hold the traces: only the profile travels
            scores = self._workers.map(self._one, [(prof, i) for i in range(len(self.traces))])
        return {tr.name: s for tr, s in zip(self.traces, scores, strict=True)}

    def close(self) -> None:
        self._workers.close()
        _release(self._key)
