"""The static data-flow checks against the engine's stale-read record
(:mod:`kda_sim.checks.visibility`): where they disagree, one of the two models is wrong.

The two can legitimately miss in one direction only:

- the engine is timing-dependent: it records a read of flagged data only where a run's
  timing lets the reader outrun the writer's stores, so a fault the static checks prove
  (a publish without its drain, a read with no poll of its flag) can pass every run
  (``unconfirmed``: reported, never a failure), and it sees only ``Load`` reads of
  flagged data (a (value, tag) pair read without its poll is the static checks' alone);
- the static checks are exact over the program order: every stale read the engine
  records is of a cell whose write some static finding says is not ordered before the
  read (a missing drain, an unguarded read, a missing or misplaced write). A stale read
  no static finding explains (``unexplained``) means the static model calls ordered a
  read the engine shows is not: a modelling error, a failure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kda_sim.checks.dataflow.naming import sites_in
from kda_sim.checks.findings import Category, Finding
from kda_sim.engine import StaleRead
from kda_sim.protocol.ops import Load
from kda_sim.protocol.program import Launch

# the static findings that say a write is not ordered before its reads
EXPLAINS: frozenset[Category] = frozenset(
    {Category.VISIBILITY, Category.COVERAGE, Category.WRITERS, Category.BOUNDS}
)
# the static findings the engine's record can show (a read of flagged data too early)
SHOWABLE: frozenset[Category] = frozenset({Category.VISIBILITY, Category.COVERAGE})


@dataclass
class Agreement:
    unexplained: list[StaleRead] = field(default_factory=list)  # a modelling error
    unconfirmed: list[Finding] = field(default_factory=list)  # timing: no run showed it

    @property
    def ok(self) -> bool:
        return not self.unexplained


def _explains(f: Finding, read: StaleRead) -> bool:
    """Whether ``f`` says why ``read`` can see old data: it names the cell, or the reader
    or the writer, or counts further findings of its kind (``and N more``)."""
    if f.category not in EXPLAINS or not f.fails:
        return False
    if "more" in f.details or f.details.get("cell") == read.cell:
        return True
    return any(s.get("cta") in (read.cta, read.producer) for s in sites_in(f.details))


def flagged_cells(launch: Launch) -> set[int]:
    """The cells the launch's loads of flagged data read: what the engine checks."""
    return {c for p in launch.programs for op in p.ops if isinstance(op, Load) for c in op.reads}


def agree(launch: Launch, static: list[Finding], stale: list[StaleRead]) -> Agreement:
    """``static``: the data-flow findings of ``launch``; ``stale``: the engine's stale
    reads over its runs of ``launch``."""
    failing = [f for f in static if f.fails]
    unexplained = [r for r in stale if not any(_explains(f, r) for f in failing)]
    seen = {r.cell for r in stale}
    flagged = flagged_cells(launch)
    unconfirmed = [
        f for f in failing if f.category in SHOWABLE and f.details.get("cell") in flagged - seen
    ]
    return Agreement(unexplained, unconfirmed)
