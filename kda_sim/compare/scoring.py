"""Scoring a profile on many traces, in worker processes where asked.

The fit's search simulates every training trace once an evaluation (``budget`` x traces
launches, 0.1 to 1.5 s each): the traces are independent, so ``jobs`` processes share
them. Each worker receives the prepared traces once, when it starts; an evaluation then
sends only the profile. The simulation is deterministic, so the scores do not depend on
``jobs``.
"""

from __future__ import annotations

import multiprocessing as mp
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from types import TracebackType
from typing import TYPE_CHECKING, Any

from kda_sim.errors import InvalidInput

if TYPE_CHECKING:  # the calibration module imports this one
    from kda_sim.compare.calibrate import Score, Trace
    from kda_sim.machine.profile import GpuProfile

_TRACES: list[Any] = []  # a worker's traces, set once by _adopt
_SCORE: Callable[[Any, Any], Any] | None = None


def _adopt(traces: list[Any], scorer: Callable[[Any, Any], Any]) -> None:
    global _TRACES, _SCORE
    _TRACES, _SCORE = traces, scorer


def _score_one(job: tuple[Any, int]) -> Any:
    prof, i = job
    assert _SCORE is not None
    return _SCORE(prof, _TRACES[i])


class Scorer:
    """``scorer(prof)``: {trace name: score}; a context manager (its workers end on exit)."""

    def __init__(
        self,
        traces: Sequence[Trace],
        score_one: Callable[[GpuProfile, Trace], Score],
        jobs: int = 1,
    ) -> None:
        if jobs < 1:
            raise InvalidInput(f"--jobs {jobs}: at least 1", what="jobs")
        self.traces = list(traces)
        self.score_one = score_one
        self.jobs = min(jobs, len(self.traces)) or 1
        self._pool: ProcessPoolExecutor | None = None
        if self.jobs > 1:
            # spawn, not fork: a worker must not inherit the parent's threads (tqdm's,
            # Streamlit's) half-held
            self._pool = ProcessPoolExecutor(
                self.jobs,
                mp_context=mp.get_context("spawn"),
                initializer=_adopt,
                initargs=(self.traces, score_one),
            )

    def __call__(self, prof: GpuProfile) -> dict[str, Score]:
        if self._pool is None:
            return {tr.name: self.score_one(prof, tr) for tr in self.traces}
        jobs = [(prof, i) for i in range(len(self.traces))]
        scores = self._pool.map(_score_one, jobs)
        return {tr.name: s for tr, s in zip(self.traces, scores, strict=True)}

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None

    def __enter__(self) -> Scorer:
        return self

    def __exit__(
        self,
        _t: type[BaseException] | None,
        _e: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()
