"""What the engine records for one op: the one home of the rule that the launch check
(:mod:`kda_sim.importers.claimed_launch`) and the model view (:mod:`kda_sim.compare.model`)
count and key a trace's records by.

A ``Poll`` or a counter ``Wait`` is a poll record; a ``Put``, ``Publish`` or ``Atomic`` a
put record; a ``Reset`` of words or a ``ResetPairs`` a put record a cell it writes. Other
ops record none (a branch on an atomic's old value records what its taken branch's ops
do: :class:`kda_sim.protocol.branches.OnOld`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from kda_sim.protocol.counters import Atomic, Reset, Wait
from kda_sim.protocol.ops import Poll, Publish, Put
from kda_sim.protocol.pair_resets import ResetPairs

Record = Literal["poll", "put"]


def recorded(op: Any) -> tuple[Record, int] | None:
    """``(kind, how many)`` records the engine makes for ``op``, None for none."""
    if isinstance(op, Poll | Wait):
        return "poll", 1
    if isinstance(op, Put | Publish | Atomic):
        return "put", 1
    if isinstance(op, Reset | ResetPairs):
        return "put", len(op.cells)
    return None


def counted(ops: Iterable[Any]) -> tuple[int, int]:
    """(poll records, put records) the engine makes for ``ops`` run once each."""
    counts = {"poll": 0, "put": 0}
    for op in ops:
        rec = recorded(op)
        if rec is not None:
            counts[rec[0]] += rec[1]
    return counts["poll"], counts["put"]
