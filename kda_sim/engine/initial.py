"""What memory holds when a launch starts, and what it holds when the launch ends: the
state a host sequence (:mod:`kda_sim.host`) carries from one launch to the next.

A single launch starts from zeroed words and no pair holding its tag (no
:class:`Initial`); a launch of a sequence may find words left non-zero and pairs that
already hold the tag it waits for (an earlier launch wrote the same tag: a graph replay
froze the epoch argument).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kda_sim.protocol.handoffs import OpRef
from kda_sim.timeline.model import PollRecord


@dataclass(frozen=True)
class Initial:
    words: dict[int, int] = field(default_factory=dict)  # word cell -> value (absent: 0)
    tagged: frozenset[int] = frozenset()  # pair cells that hold this launch's tag already


@dataclass
class StalePoll:
    """A poll that found some of its pairs already holding the tag it waits for."""

    cta: int
    ref: OpRef
    label: str
    cells: np.ndarray  # the pairs it did not wait for
    rec: PollRecord  # its record (``satisfied`` filled in when it passes)


@dataclass
class StaleWait:
    """A wait on a word that passed on a value the launch found there, not one it wrote."""

    cta: int
    label: str
    cell: int
    seen: int
    satisfied: float


@dataclass
class Final:
    """What a launch of a sequence leaves and how its waits passed."""

    put_done: dict[OpRef, tuple[float, int]]  # put op -> (time, CTA)
    words: dict[int, int]  # word cell -> its value after every write
    word_writer: dict[int, int]  # word cell -> the CTA that wrote it last
    stale_polls: list[StalePoll]
    stale_waits: list[StaleWait]
    pair_resets: dict[int, tuple[float, int]] = field(default_factory=dict)  # (time, CTA)
