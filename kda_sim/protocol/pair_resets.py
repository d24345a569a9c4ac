"""A reset of (value, tag) pairs: plain 64-bit stores of (0, 0) into pairs, so that a
pair holds no launch's tag until it is put again (a tag of 0 is no launch's: a host
sequence's epochs start at 1).

It is what a kernel does so that a graph replay, whose frozen arguments make its tag the
captured launch's, does not pass a poll on a pair an earlier replay put (DeepGEMM#451:
each rank clears its readiness flag after pulling). The CTA does not wait for the stores.

Within a launch a pair reset is taken to follow every poll of the pair (a consumer that
clears what it has read, the fix's order); what it changes is what the launch leaves for
the next one (:mod:`kda_sim.host.memory`), and the poll of a pair whose stale tag an
earlier launch left fails to pass on it once the reset has landed. The data-flow checks
do not count it as a writer of the pair (it hands nothing off).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ResetPairs:
    region: int  # the region's id in the launch's CellSpace
    cells: tuple[int, ...]  # the pairs' global ids
