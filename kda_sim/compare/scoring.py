"""Scoring a profile on many traces, in worker processes where asked.

The fit's search simulates every training trace once an evaluation (``budget`` x traces
launches, 0.1 to 1.5 s each): the traces are independent, so ``jobs`` processes share
them. Each worker receives the prepared traces once, when it starts; an evaluation then
sends only the profile. The simulation is deterministic, so the scores do not depend on
``jobs``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from kda_sim.parallel import Closing, Workers, resolve_jobs

if TYPE_CHECKING:  # the calibration module imports this one
    from kda_sim.compare.calibrate import Score, Trace
    from kda_sim.machine.profile import GpuProfile

# each Scorer's traces and scoring function, by its number: set once in each process that
# scores for it (its workers, and this one where it takes items itself)
_ADOPTED: dict[int, tuple[list[Any], Callable[[Any, Any], Any]]] = {}
_NUMBERS = itertools.count()


def _adopt(number: int, traces: list[Any], scorer: Callable[[Any, Any], Any]) -> None:
    _ADOPTED[number] = (traces, scorer)


def _score_one(number: int, prof: Any, i: int) -> Any:
    traces, scorer = _ADOPTED[number]
    return scorer(prof, traces[i])


class Scorer(Closing):
    """``scorer(prof)``: {trace name: score}; a context manager (its workers end on exit).
    ``jobs``: None, the cores."""

    def __init__(
        self,
        traces: Sequence[Trace],
        score_one: Callable[[GpuProfile, Trace], Score],
        jobs: int | None = 1,
    ) -> None:
        self.traces = list(traces)
        self.score_one = score_one
        self.jobs = min(resolve_jobs(jobs), len(self.traces)) or 1
        self._number = next(_NUMBERS)
        # no bar of its own: the fit draws one over its evaluations
        self._workers = Workers(
            self.jobs,
            progress=False,
            initializer=_adopt,
            initargs=(self._number, self.traces, score_one),
        )

    def __call__(self, prof: GpuProfile) -> dict[str, Score]:
        if self.jobs == 1:
            scores = [self.score_one(prof, tr) for tr in self.traces]
        else:  # the workers hold the traces: only the profile travels
            one = partial(_score_one, self._number, prof)
            scores = self._workers.map(one, range(len(self.traces)))
        return {tr.name: s for tr, s in zip(self.traces, scores, strict=True)}

    def close(self) -> None:
        self._workers.close()
        _ADOPTED.pop(self._number, None)
