"""What the dynamic checks read of one engine run, small enough to send between processes.

A K1 run's :class:`~kda_sim.engine.SimResult` (every CTA's stages, polls, puts and loads)
pickles to about 0.7 MB, and sending it back from a worker cost about as much as the run
itself. The deadlock, visibility and late-load checks and the report read only whether
the run finished, its makespan, the waits it stopped in, when each CTA started and ended,
the residency and the stale reads: a :class:`RunSummary` holds those, computed where the
run was made. The whole result stays with the summary in the process that made it (the
app's charts, the role rule and the report's further sections read the nominal run's),
and is left out when the summary is pickled: a worker's summary arrives without it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kda_sim.engine import SimResult, StaleRead
from kda_sim.machine.residency import Residency
from kda_sim.timeline.model import StuckWait


@dataclass
class RunSummary:
    deadlock: bool
    makespan: float | None  # None: the run did not finish
    stuck: list[StuckWait]  # the waits it stopped in (the timeline's, in its order)
    spans: list[tuple[float | None, float | None]]  # each CTA's start and end (None: never)
    residency: Residency
    stale_reads: list[StaleRead] = field(default_factory=list)
    result: SimResult | None = None  # the whole run: only in the process that made it

    def __getstate__(self) -> dict[str, Any]:
        # the point of a summary: a worker sends it back without the whole run
        return {**self.__dict__, "result": None}


def summarize(res: SimResult) -> RunSummary:
    """The summary of ``res``, which it keeps (see the module docstring)."""
    tl = res.timeline
    return RunSummary(
        res.deadlock,
        tl.makespan,
        list(tl.stuck),
        [(c.start, c.end) for c in tl.ctas],
        res.residency,
        list(res.stale_reads),
        res,
    )
