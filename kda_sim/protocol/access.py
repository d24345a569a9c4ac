"""What each op of a launch reads and writes, as global cell ids of its CellSpace.

Derived from the ops (the one source of truth): a Put or Publish writes its cells, a Store
its flagged cells (``Store.cells``); a Poll reads the tags of its cells, a Load its
``reads`` (flagged data), a Compute its ``reads``; a Put or Publish *depends* on its
``reads`` (the cells its value is computed from).

A launch is walked once: each program in program order, then each ticket loop's bodies
once (item i of a loop runs once, whichever CTA takes it, from its first op: its own
program order). Each of these orders is a *sequence*; the data-flow checks
(:mod:`kda_sim.checks.dataflow`) order accesses within one. A flagged cell a sequence
stores is guarded by the flags of the next Publish of that sequence (it drains the stores,
then puts the flags).

Every access is a row of flat arrays (K1 has ~20k ops and ~10^5 accesses a launch), so
the checks are numpy passes, not loops over cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import IntEnum
from functools import cached_property, lru_cache
from typing import Any

import numpy as np

from kda_sim.protocol.handoffs import loop_numbers
from kda_sim.protocol.ops import (
    Begin,
    Compute,
    End,
    Load,
    Op,
    Poll,
    Publish,
    Put,
    Reads,
    Store,
    read_parts,
)
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import MAX_ITEMS, TicketLoop


class Kind(IntEnum):
    """What an access is."""

    PUT = 0  # a Put's (value, tag) pairs
    PUBLISH = 1  # a Publish's flags
    STORE = 2  # a Store's flagged data
    POLL = 3  # a Poll's tags
    LOAD = 4  # a Load's flagged data
    COMPUTE = 5  # a Compute's reads
    DEPEND = 6  # a Put's or Publish's reads: what its value is computed from


NO_UNIT = np.iinfo(np.int64).min  # "no unit": the kernel names no writer for a cell
NO_STAGE = ""  # an op outside every Begin .. End


TASK_UNIT0 = -(1 << 40)  # task keys lie at and below this, item keys above it


def item_unit(loop: int, item: int) -> Any:
    """The unit key of item ``item`` of the launch's loop number ``loop`` (a CTA's key is
    its number): negative, so it never meets a CTA's (``item`` may be an array)."""
    return -1 - (loop * MAX_ITEMS + item)


def task_unit(task: Any) -> Any:
    """The unit key of task ``task`` (a ``Begin``'s task): an op in a task's stage is the
    task's work, wherever it is placed (``task`` may be an array)."""
    return TASK_UNIT0 - task


@dataclass(frozen=True)
class Seq:
    """One program order: a CTA's program (``loop`` -1) or one item of a ticket loop."""

    cta: int  # -1 for an item: whichever CTA takes it
    role: str
    loop: int = -1  # the loop's number (:func:`kda_sim.protocol.handoffs.loop_numbers`)
    item: int = -1
    label: str = ""  # the loop's label

    @property
    def unit(self) -> int:
        return self.cta if self.loop < 0 else item_unit(self.loop, self.item)


@dataclass(frozen=True)
class Accesses:
    """Every access of a launch: one row an op (``op_*``), one row a cell read (``r_*``)
    or written (``w_*``); ``*_op`` is the op's row."""

    launch: Launch
    seqs: tuple[Seq, ...]
    ops: tuple[Op, ...] = field(repr=False)
    op_seq: np.ndarray = field(repr=False)
    op_pos: np.ndarray = field(repr=False)  # place in its sequence (its op index)
    op_stage: np.ndarray = field(repr=False)  # index into ``stages``
    op_task: np.ndarray = field(repr=False)  # the task its stage's Begin names, -1 none
    stages: tuple[str, ...]
    w_cell: np.ndarray = field(repr=False)
    w_op: np.ndarray = field(repr=False)
    w_kind: np.ndarray = field(repr=False)
    w_region: np.ndarray = field(repr=False)  # the region the op names, -1 (a Store) none
    r_cell: np.ndarray = field(repr=False)
    r_op: np.ndarray = field(repr=False)
    r_kind: np.ndarray = field(repr=False)
    guard: np.ndarray = field(repr=False)  # flagged cell -> its Publish's row, -1 none
    loops: tuple[TicketLoop, ...] = field(repr=False)  # by loop number, as walked
    clashes: tuple[tuple[int, int], ...] = ()  # (loop number, CTA) of another loop's counter
    reread: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)
    shortcut_reads: int = 0  # reads of a poll's own array, not rows (see _Builder.read)

    @property
    def total(self) -> int:
        return self.launch.space.total

    def seq_of(self, row: int) -> Seq:
        return self.seqs[int(self.op_seq[row])]

    def stage_of(self, row: int) -> str:
        return self.stages[int(self.op_stage[row])]

    def declares_reads(self) -> bool:
        """Whether any op says what it reads beyond its polls (else coverage is vacuous)."""
        return self.shortcut_reads > 0 or bool(np.any(self.r_kind != Kind.POLL))

    @cached_property
    def writes(self) -> tuple[np.ndarray, np.ndarray]:
        """(cell, op row) of every write inside the space, an op naming a cell once."""
        total = self.total
        ok = (self.w_cell >= 0) & (self.w_cell < total)
        key = np.sort(self.w_op[ok] * total + self.w_cell[ok])  # (np.unique hashes: slower)
        key = key[np.r_[True, key[1:] != key[:-1]]] if key.size else key
        return key % total, key // total

    @cached_property
    def write_count(self) -> np.ndarray:
        """Writers of each cell (ops, an op counted once)."""
        return np.bincount(self.writes[0], minlength=self.total)

    def unit_of_op(self) -> np.ndarray:
        """Each op's unit key: its task's (:func:`task_unit`) inside a stage of a task,
        else its CTA, or its item's (:func:`item_unit`)."""
        units = np.array([s.unit for s in self.seqs], dtype=np.int64)[self.op_seq]
        return np.where(self.op_task >= 0, task_unit(self.op_task), units)


class _Builder:
    def __init__(self) -> None:
        self.ops: list[Op] = []
        self.op_seq: list[int] = []
        self.op_pos: list[int] = []
        self.op_stage: list[int] = []
        self.op_task: list[int] = []
        self.stages: dict[str, int] = {NO_STAGE: 0}
        self.w: list[tuple[np.ndarray, int, int, int]] = []  # cells, row, kind, region
        self.r: list[tuple[np.ndarray, int, int]] = []
        self.guards: list[tuple[np.ndarray, int]] = []  # flagged cells, publish row
        self.reread: list[int] = []  # polls whose very cells array a later op reads
        self.shortcut = 0  # cells read so (each after its poll by construction)

    def read(self, reads: Reads, row: int, kind: Kind, polled: dict[int, int]) -> None:
        """A read, unless it is the very array an earlier poll of the sequence loaded
        (a kernel that reads what it polls says so by sharing the array): every cell of
        it is then polled before, so only the poll is kept, marked read."""
        for cells in read_parts(reads):
            poll = polled.get(id(cells))
            if poll is not None:
                self.reread.append(poll)
                self.shortcut += cells.size
            elif cells.size:
                self.r.append((cells, row, kind))

    def walk(self, seq: int, ops: tuple[Op, ...]) -> None:
        stage, task = 0, -1
        stored: list[np.ndarray] = []  # flagged cells stored since the last publish
        polled: dict[int, int] = {}  # id of a poll's cells array -> the poll's row
        for pos, op in enumerate(ops):
            row = len(self.ops)
            t = type(op)
            if t is Begin:
                stage = self.stages.setdefault(op.stage, len(self.stages))
                task = op.task
            self.ops.append(op)
            self.op_seq.append(seq)
            self.op_pos.append(pos)
            self.op_stage.append(stage)
            self.op_task.append(task)
            if t is Put:
                self.w.append((op.cells, row, Kind.PUT, int(op.region)))
                self.read(op.reads, row, Kind.DEPEND, polled)
            elif t is Publish:
                self.w.append((op.cells, row, Kind.PUBLISH, int(op.region)))
                self.read(op.reads, row, Kind.DEPEND, polled)
                if stored:
                    self.guards.append((np.concatenate(stored), row))
                    stored = []
            elif t is Poll:
                self.r.append((op.cells, row, Kind.POLL))
                polled[id(op.cells)] = row
            elif t is Store:
                if op.cells:
                    cells = np.asarray(op.cells, dtype=np.int64)
                    self.w.append((cells, row, Kind.STORE, -1))
                    stored.append(cells)
            elif t is Load:
                if op.reads:
                    self.r.append((np.asarray(op.reads, dtype=np.int64), row, Kind.LOAD))
            elif t is Compute:
                self.read(op.reads, row, Kind.COMPUTE, polled)
            elif t is End:
                stage, task = 0, -1


def _flat(parts: list[tuple], extra: int) -> tuple[np.ndarray, ...]:
    """Cells and, repeated a cell, each part's further fields (``extra`` of them)."""
    if not parts:
        return tuple(np.zeros(0, dtype=np.int64) for _ in range(extra + 1))
    cells = [np.asarray(p[0], dtype=np.int64).ravel() for p in parts]
    sizes = np.array([c.size for c in cells], dtype=np.int64)
    out = [np.concatenate(cells)]
    for k in range(1, extra + 1):
        out.append(np.repeat(np.array([p[k] for p in parts], dtype=np.int64), sizes))
    return tuple(out)


def accesses(launch: Launch) -> Accesses:
    """Every read and write of ``launch``'s ops (see the module's docstring)."""
    numbers = loop_numbers(launch)
    b = _Builder()
    seqs: list[Seq] = []
    loops: dict[int, TicketLoop] = {}
    clashes: list[tuple[int, int]] = []
    for prog in launch.programs:
        b.walk(len(seqs), prog.ops)
        seqs.append(Seq(prog.cta, str(prog.role)))
        for op in prog.ops:
            if isinstance(op, TicketLoop):
                first = loops.setdefault(op.cell, op)
                if first is not op and first != op:  # one counter, two different queues
                    clashes.append((numbers[op.cell], prog.cta))
    for cell, loop in loops.items():
        for i, body in enumerate(loop.bodies):
            b.walk(len(seqs), body)
            seqs.append(Seq(-1, "", numbers[cell], i, loop.label))
    w_cell, w_op, w_kind, w_region = _flat(b.w, 3)
    r_cell, r_op, r_kind = _flat(b.r, 2)
    total = launch.space.total
    guard = np.full(total, -1, dtype=np.int64)
    g_cell, g_op = _flat(b.guards, 1)
    inside = (g_cell >= 0) & (g_cell < total)
    guard[g_cell[inside]] = g_op[inside]
    return Accesses(
        launch,
        tuple(seqs),
        tuple(b.ops),
        np.array(b.op_seq, dtype=np.int64),
        np.array(b.op_pos, dtype=np.int64),
        np.array(b.op_stage, dtype=np.int64),
        np.array(b.op_task, dtype=np.int64),
        tuple(b.stages),
        w_cell,
        w_op,
        w_kind,
        w_region,
        r_cell,
        r_op,
        r_kind,
        guard,
        tuple(loops.values()),
        tuple(clashes),
        np.unique(np.array(b.reread, dtype=np.int64)),
        b.shortcut,
    )


@lru_cache(maxsize=16)
def accesses_of(cfg: Any) -> Accesses:
    """The accesses of the launch its kernel builds for ``cfg`` (cached, as its hand-offs)."""
    from kda_sim.kernels.registry import spec_for

    return accesses(spec_for(cfg).build(cfg))
