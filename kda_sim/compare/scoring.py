"""Scoring a profile on many traces, in worker processes where asked.

The fit's search simulates every training trace once an evaluation (``budget`` x traces
launches, 0.1 to 1.5 s each): the traces are independent, so ``jobs`` processes share
them. Each worker receives the prepared traces once, when it starts; an evaluation then
sends only the profile. The simulation is deterministic, so the scores do not depend on
``jobs``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kda_sim.parallel import Workers, resolve_jobs

if TYPE_CHECKING:  # the calibration module imports this one
    from kda_sim.compare.calibrate import Score, Trace
    from kda_sim.machine.profile import GpuProfile

_TRACES: list[Any] = []  # a worker's traces, set once by _adopt
_SCORE: Callable[[Any, Any], Any] | None = None


def _adopt(traces: list[Any], scorer: Callable[[Any, Any], Any]) -> None:
    global _TRACES, _SCORE
    _TRACES, _SCORE = traces, scorer


def _score_one(prof: Any, i: int) -> Any:
    assert _SCORE is not None
    return _SCORE(prof, _TRACES[i])


class Scorer:
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
        # no bar of its own: the fit draws one over its evaluations
        self._workers = Workers(
            self.jobs, progress=False, initializer=_adopt, initargs=(self.traces, score_one)
        )

    def __call__(self, prof: GpuProfile) -> dict[str, Score]:
        if self.jobs == 1:
            scores = [self.score_one(prof, tr) for tr in self.traces]
        else:  # the workers hold the traces: only the profile travels
            scores = self._workers.map(partial(_score_one, prof), range(len(self.traces)))
        return {tr.name: s for tr, s in zip(self.traces, scores, strict=True)}

    def close(self) -> None:
        self._workers.close()

    def __enter__(self) -> Scorer:
        return self

    def __exit__(
        self,
        _t: type[BaseException] | None,
        _e: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()
