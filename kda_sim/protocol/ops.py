"""What a CTA does, one operation at a time, in program order.

A CTA is modelled as a whole (its threads move together between barriers); where
threads poll different pairs, a :class:`Poll` keeps every thread's batch.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any, TypeVar

import numpy as np

from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.counters import Atomic, Reset, Wait
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.tagexpr import TagExpr
from kda_sim.protocol.tickets import TakeAhead, TicketLoop


class LoadKind(StrEnum):
    WEIGHT = "weight"  # w_in rows streamed by gemv CTAs
    STAGING = "staging"  # inputs that need no hand-off
    FLAGGED = "flagged"  # x rows, read after their XRDY flag


@dataclass(frozen=True, slots=True)
class Begin:
    stage: str
    task: int = -1  # kda task index, -1 for role stages


@dataclass(frozen=True, slots=True)
class End:
    stage: str
    task: int = -1


@dataclass(frozen=True, slots=True)
class Load:
    """Issue a load; it completes asynchronously (see :class:`Use`)."""

    name: str
    kind: LoadKind
    nbytes: int
    what: str
    hbm: bool = True  # False: served from L2 (x rows re-read by every gemv CTA)
    reads: tuple[int, ...] = ()  # flagged cells (X) this load reads


@dataclass(frozen=True, slots=True)
class Use:
    """Wait until the named loads have returned (``s_waitcnt`` on them)."""

    names: tuple[str, ...]


NO_CELLS = np.zeros(0, dtype=np.int64)  # an op that names no cells (shared, read-only)
NO_CELLS.setflags(write=False)

# cells an op reads: one array of global ids, or several (a stage that reads what three
# polls loaded names their three arrays, so a reader of exactly a poll's array is seen)
Reads = np.ndarray | tuple[np.ndarray, ...]


def _no_cells() -> np.ndarray:
    return NO_CELLS


def read_parts(reads: Reads) -> tuple[np.ndarray, ...]:
    """``reads`` as a tuple of arrays."""
    return reads if isinstance(reads, tuple) else (reads,)


@dataclass(frozen=True, slots=True)
class Compute:
    """Work on what the CTA holds; ``reads``: the produced cells (global ids) whose
    values it consumes, where the kernel says (the data-flow checks,
    :mod:`kda_sim.protocol.access`)."""

    cost: str  # a key of the profile's stage costs
    units: float = 1.0
    reads: Reads = field(default_factory=_no_cells, compare=False)
    # the launch's work beside which this compute runs, in the kernel's units (K1's
    # k.recur: the launch's tokens S = R x L): a profile's ``cost_growth`` for the cost
    # makes it grow with it (GpuProfile.grown). 0: a cost that does not
    launch_units: float = 0.0


PAIR_BYTES = 8  # a pair: a 64-bit (value, tag) word, what a put stores a cell


@dataclass(frozen=True, slots=True)
class Put:
    """Device-scope 64-bit (value, tag) stores of the pairs ``cells`` (global ids), the
    tag ``tag`` computes (:mod:`kda_sim.protocol.tagexpr`)."""

    region: int  # the region's id in the launch's CellSpace
    cells: np.ndarray = field(compare=False)
    # the produced cells the value put is computed from (the data-flow checks: its polls
    # of them come first); empty where the kernel does not say
    reads: Reads = field(default_factory=_no_cells, compare=False)
    # the tag it writes (None: the kernel does not say; the tag check then reasons from
    # its scheme alone)
    tag: TagExpr | None = None


@dataclass(frozen=True, slots=True)
class Poll:
    """Every thread's batch (rows of ``batches``, -1 padded, at most the kernel's batch width),
    re-loaded until every tag matches; the CTA goes on when all are satisfied."""

    label: str
    batches: np.ndarray = field(compare=False)  # [n_batches, width] global cell ids
    cells: np.ndarray = field(compare=False)  # unique cells, sorted
    tag: TagExpr | None = None  # the tag it waits for (None: the kernel does not say)
    # what a try costs beyond the round trip, as the kernel's code writes the poll: the
    # pairs each thread holds (a try counts the stale ones CTA-wide one register slot at a
    # time, a barrier each) and whether the loop backs off (sleeps) between tries. The
    # profile's latency_ns.poll_lane and .backoff price them (0 unless fitted)
    lanes: int = 1
    backoff: bool = False

    def without(self, drop: np.ndarray | int) -> Poll:
        """This poll with the pairs ``drop`` left out of every thread's batch (-1 where
        they stood)."""
        batches = np.where(np.isin(self.batches, drop), -1, self.batches)
        batches.setflags(write=False)
        cells = self.cells[~np.isin(self.cells, drop)]
        cells.setflags(write=False)
        return Poll(self.label, batches, cells, self.tag, self.lanes, self.backoff)


@dataclass(frozen=True, slots=True)
class Store:
    """Plain stores (no tag): written data, or flagged data (``cells`` in X)."""

    what: str
    nbytes: int
    cells: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class Publish:
    """Flag after plain stores: drain the CTA's stores, barrier, then put the flag."""

    region: int  # the region's id in the launch's CellSpace
    cells: np.ndarray = field(compare=False)
    drain: bool = True
    reads: Reads = field(default_factory=_no_cells, compare=False)  # as Put's
    tag: TagExpr | None = None  # the flag's tag, as Put's


@dataclass(frozen=True, slots=True)
class Barrier:
    pass


Op = (
    Begin
    | End
    | Load
    | Use
    | Compute
    | Put
    | Poll
    | Store
    | Publish
    | Barrier
    | Atomic
    | Wait
    | Reset
    | TicketLoop
    | TakeAhead
    | OnOld
    | ResetPairs
)

T = TypeVar("T")


def positional(cls: type[T]) -> Callable[..., T]:
    """A constructor of ``cls`` (a dataclass with slots and no ``__post_init__``) taking
    every field in order, positionally: the object made and each slot set through its
    descriptor. The same object as ``cls(...)``, in about half the time of a frozen
    dataclass's ``__init__`` (an ``object.__setattr__`` a field); for the kernels' builders
    that make thousands of ops of one kind a launch."""
    if hasattr(cls, "__post_init__") or not hasattr(cls, "__slots__"):
        raise TypeError(f"{cls.__name__}: not a slotted dataclass without __post_init__")
    names = [f.name for f in fields(cls)]  # type: ignore[arg-type]
    scope: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    scope.update({f"_set_{n}": getattr(cls, n).__set__ for n in names})
    sets = "".join(f"    _set_{n}(op, {n})\n" for n in names)
    exec(f"def make({', '.join(names)}):\n    op = _new(_cls)\n{sets}    return op\n", scope)
    make = scope["make"]
    make.__qualname__ = f"positional({cls.__name__})"
    return make
