"""Single faults injected into any launch's programs, one CTA at a time, each with the
data-flow category that must catch it and the CTA and ops that must be named.

Generic: the injectors look only at the ops (:mod:`kda_sim.protocol.ops`) and the
launch's cells, never at a kernel's names, so the property test
(``tests/checks/test_dataflow_property.py``) runs them on random protocols of every
example kernel and K1 alike. An injector returns None where the launch has no site for
its fault (a kernel of counter words has no poll to drop a cell from); the sites it
picks are ones where the fault is observable (a dropped poll cell that a later op of the
CTA reads, a removed put whose cells someone polls).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, sites_in
from kda_sim.checks.findings import Category, Finding
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.access import NO_UNIT, Accesses, accesses
from kda_sim.protocol.ops import (
    Begin,
    Compute,
    End,
    Load,
    Op,
    Poll,
    Publish,
    Put,
    Store,
    read_parts,
)
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.tickets import TicketLoop


class FaultKind(StrEnum):
    DROP_POLL_CELL = "drop-poll-cell"  # a poll waits for one cell fewer than the CTA reads
    NEXT_REGION = "next-region"  # a put's cell lies past its region's end
    DUPLICATE_ITEM = "duplicate-item"  # a work item (Begin .. End of a task) on a second CTA
    PUT_BEFORE_POLL = "put-before-poll"  # a put moved before the poll of its inputs
    NO_DRAIN = "no-drain"  # Publish(drain=False) after stores of flagged data
    PERMUTE = "permute"  # two units' puts swap their cells: each written once, wrongly
    REMOVE_PUT = "remove-put"  # a put whose cells someone polls or reads is gone


@dataclass(frozen=True)
class Fault:
    kind: FaultKind
    launch: Launch = field(repr=False)  # the mutated launch
    category: Category  # the failing category that must name the culprit
    cta: int  # the mutated program's CTA
    ops: range  # op positions (in the mutated program) a finding may name as the culprit
    unit: str = ""  # REMOVE_PUT: the unit (in the checks' words) that should have put it
    also: frozenset[Category] = frozenset()  # further failing categories it may cause

    def names_culprit(self, f: Finding) -> bool:
        """Whether ``f`` points at this fault's CTA and op (a missing put: at the unit
        that should have put it)."""
        if self.kind is FaultKind.REMOVE_PUT:
            return f.details.get("expected") == self.unit
        return any(
            s.get("cta") == self.cta and s.get("op") in self.ops for s in sites_in(f.details)
        )


def _set_ops(launch: Launch, k: int, ops: list[Op]) -> Launch:
    progs = list(launch.programs)
    progs[k] = replace(progs[k], ops=tuple(ops))
    return replace(launch, programs=tuple(progs))


def _reads(op: Op) -> list[np.ndarray]:
    """The produced cells an op reads (its data reads and a put's inputs)."""
    if isinstance(op, (Compute, Put, Publish)):
        return [np.asarray(c, dtype=np.int64).ravel() for c in read_parts(op.reads)]
    if isinstance(op, Load) and op.reads:
        return [np.asarray(op.reads, dtype=np.int64)]
    return []


def _guards(acc: Accesses) -> dict[int, set[int]]:
    """flag cell -> the flagged data cells its Publish guards."""
    out: dict[int, set[int]] = {}
    for cell in np.flatnonzero(acc.guard >= 0).tolist():
        for flag in np.asarray(acc.ops[int(acc.guard[cell])].cells).ravel().tolist():
            out.setdefault(int(flag), set()).add(cell)
    return out


def _written_by(prog: CtaProgram) -> set[int]:
    out: set[int] = set()
    for op in prog.ops:
        if isinstance(op, (Put, Publish)):
            out.update(np.asarray(op.cells).ravel().tolist())
        elif isinstance(op, Store):
            out.update(op.cells)
    return out


# -- the injectors ----------------------------------------------------------------------------
def _first_readers(prog: CtaProgram, flags_of: dict[int, list[int]]) -> dict[int, list[int]]:
    """cell -> the positions of the program's ops that read it (a flag: that read the
    data it guards), in program order."""
    out: dict[int, list[int]] = {}
    for r, op in enumerate(prog.ops):
        for cells in _reads(op):
            for c in set(cells.tolist()):
                out.setdefault(c, []).append(r)
                for f in flags_of.get(c, ()):
                    out.setdefault(f, []).append(r)
    return out


def drop_poll_cell(launch: Launch, rng: random.Random) -> Fault | None:
    acc = accesses(launch)
    flags_of: dict[int, list[int]] = {}
    for flag, data in _guards(acc).items():
        for d in data:
            flags_of.setdefault(d, []).append(flag)
    sites: list[tuple[int, int, int, int]] = []  # program, poll, cell, first reader
    for k, prog in enumerate(launch.programs):
        polls = [(j, op) for j, op in enumerate(prog.ops) if isinstance(op, Poll)]
        if not polls:
            continue
        count: dict[int, int] = {}
        for _, p in polls:
            for c in p.cells.tolist():
                count[c] = count.get(c, 0) + 1
        own = _written_by(prog)
        readers = _first_readers(prog, flags_of)
        for j, p in polls:
            for c in p.cells.tolist():
                if count[c] > 1 or c in own:
                    continue  # another poll (or its own write) still orders the reads
                at = readers.get(c, [])
                n = bisect.bisect_right(at, j)
                if n < len(at):
                    sites.append((k, j, c, at[n]))
    if not sites:
        return None
    k, j, c, reader = rng.choice(sites)
    prog = launch.programs[k]
    p = prog.ops[j]
    assert isinstance(p, Poll)
    ops = list(prog.ops)
    if p.cells.size == 1:  # a poll of no cell is no poll: drop it
        del ops[j]
        reader -= 1
    else:
        ops[j] = p.without(c)
    return Fault(
        FaultKind.DROP_POLL_CELL,
        _set_ops(launch, k, ops),
        Category.COVERAGE,
        prog.cta,
        range(reader, reader + 1),
        also=frozenset({Category.UNREAD}),
    )


def next_region(launch: Launch, rng: random.Random) -> Fault | None:
    space = launch.space
    sites = [
        (k, j)
        for k, prog in enumerate(launch.programs)
        for j, op in enumerate(prog.ops)
        if isinstance(op, (Put, Publish)) and np.asarray(op.cells).size
    ]
    if not sites:
        return None
    k, j = rng.choice(sites)
    prog = launch.programs[k]
    op = prog.ops[j]
    assert isinstance(op, (Put, Publish))
    cells = np.array(op.cells, dtype=np.int64).ravel()
    r = int(op.region)
    # the index one past the region's last: the next region's first cell (or, after
    # the last region, no cell of the launch)
    cells[rng.randrange(cells.size)] = space.offsets[r] + space.sizes[r]
    ops = list(prog.ops)
    ops[j] = replace(op, cells=cells)
    return Fault(
        FaultKind.NEXT_REGION,
        _set_ops(launch, k, ops),
        Category.BOUNDS,
        prog.cta,
        range(j, j + 1),
        # the cell it should have written is now missing, and the next region's one
        # written twice; a flag moved off its cell no longer orders the data behind it
        also=frozenset({Category.WRITERS, Category.COVERAGE}),
    )


def _spans(ops: tuple[Op, ...]) -> list[tuple[int, int]]:
    """[first Begin, last End] positions of each task's run (task >= 0): every stage of
    the task, so a copy holds the loads its later stages use."""
    lo: dict[int, int] = {}
    hi: dict[int, int] = {}
    for k, op in enumerate(ops):
        if isinstance(op, Begin) and op.task >= 0:
            lo.setdefault(op.task, k)
        elif isinstance(op, End) and op.task >= 0:
            hi[op.task] = k
    return [(lo[t], hi[t]) for t in lo if t in hi and hi[t] > lo[t]]


def _writes(ops: tuple[Op, ...]) -> bool:
    return any(
        (isinstance(op, (Put, Publish)) and np.asarray(op.cells).size)
        or (isinstance(op, Store) and op.cells)
        for op in ops
    )


def duplicate_item(launch: Launch, rng: random.Random) -> Fault | None:
    """A copy of one work item (every stage of one task), appended to another CTA's
    program: caught as an item run twice where the kernel names its work items, else as
    cells written twice."""
    if len(launch.programs) < 2:
        return None
    items = hook(spec_for(launch.cfg), "work_items")
    named = {} if items is None else {s: set(t) for s, t in items(launch.cfg).items()}
    bodies: list[tuple[int, tuple[Op, ...]]] = [(p.cta, p.ops) for p in launch.programs]
    for prog in launch.programs:
        for op in prog.ops:
            if isinstance(op, TicketLoop):
                bodies += [(-1, b) for b in op.bodies]
    sites = []
    for src, ops in bodies:
        for lo, hi in _spans(ops):
            span = ops[lo : hi + 1]
            if any(isinstance(op, Begin) and op.task in named.get(op.stage, ()) for op in span):
                sites.append((src, span, Category.ITEMS))
            elif _writes(span):
                sites.append((src, span, Category.WRITERS))
    if not sites:
        return None
    src, span, category = rng.choice(sites)
    k = rng.choice([k for k, p in enumerate(launch.programs) if p.cta != src])
    prog = launch.programs[k]
    at = len(prog.ops)
    return Fault(
        FaultKind.DUPLICATE_ITEM,
        _set_ops(launch, k, [*prog.ops, *span]),
        category,
        prog.cta,
        range(at, at + len(span)),
        # its cells are written twice; its reads may rest on polls its own CTA made
        # before the item began, which the copy's CTA never made
        also=frozenset(
            {Category.ITEMS, Category.WRITERS, Category.COVERAGE, Category.ORDER, Category.UNREAD}
        ),
    )


def put_before_poll(launch: Launch, rng: random.Random) -> Fault | None:
    """A put computed from polled cells, moved to just before the first poll of its
    inputs in its stage."""
    acc = accesses(launch)
    guards = _guards(acc)
    sites = []
    for k, prog in enumerate(launch.programs):
        stage_lo = 0
        for j, op in enumerate(prog.ops):
            if isinstance(op, Begin):
                stage_lo = j
            if not isinstance(op, Put):
                continue
            inputs = [c for cells in _reads(op) for c in cells.tolist()]
            if not inputs:
                continue
            first = next(
                (
                    p
                    for p in range(stage_lo, j)
                    if isinstance(prog.ops[p], Poll)
                    and any(
                        c in inputs or guards.get(c, set()) & set(inputs)
                        for c in prog.ops[p].cells.tolist()
                    )
                ),
                None,
            )
            if first is not None:
                sites.append((k, j, first))
    if not sites:
        return None
    k, j, first = rng.choice(sites)
    prog = launch.programs[k]
    ops = list(prog.ops)
    put = ops.pop(j)
    ops.insert(first, put)
    return Fault(
        FaultKind.PUT_BEFORE_POLL,
        _set_ops(launch, k, ops),
        Category.ORDER,
        prog.cta,
        range(first, first + 1),
    )


def no_drain(launch: Launch, rng: random.Random) -> Fault | None:
    sites = []
    for k, prog in enumerate(launch.programs):
        stored = False
        for j, op in enumerate(prog.ops):
            if isinstance(op, Store) and op.cells:
                stored = True
            elif isinstance(op, Publish):
                if stored and op.drain:
                    sites.append((k, j))
                stored = False
    if not sites:
        return None
    k, j = rng.choice(sites)
    prog = launch.programs[k]
    ops = list(prog.ops)
    ops[j] = replace(ops[j], drain=False)
    return Fault(
        FaultKind.NO_DRAIN, _set_ops(launch, k, ops), Category.VISIBILITY, prog.cta, range(j, j + 1)
    )


def permute(launch: Launch, rng: random.Random) -> Fault | None:
    """Two puts of one region and size, on units the kernel's layout tells apart, swap
    their cells: every cell is still put once (nothing hangs), by the wrong unit."""
    acc = accesses(launch)
    expected = Namer(acc, launch.cfg).expected()
    if expected is None:
        return None
    units = acc.unit_of_op()
    groups: dict[tuple[int, int], dict[int, tuple[int, int]]] = {}
    row = 0
    for k, prog in enumerate(launch.programs):
        for j, op in enumerate(prog.ops):
            if isinstance(op, Put) and op.cells.size:
                u = int(units[row])
                cells = np.asarray(op.cells).ravel()
                if np.all(expected[cells] == u) and u != NO_UNIT:
                    groups.setdefault((int(op.region), cells.size), {}).setdefault(u, (k, j))
            row += 1
    choices = [g for g in groups.values() if len(g) > 1]
    if not choices:
        return None
    group = rng.choice(choices)
    ua, ub = rng.sample(sorted(group), 2)
    (ka, ja), (kb, jb) = group[ua], group[ub]
    a, b = launch.programs[ka].ops[ja], launch.programs[kb].ops[jb]
    assert isinstance(a, Put) and isinstance(b, Put)
    progs = [list(p.ops) for p in launch.programs]
    progs[ka][ja] = replace(a, cells=b.cells)
    progs[kb][jb] = replace(b, cells=a.cells)  # (two units: never the same op)
    mutated = launch
    for k in {ka, kb}:
        mutated = _set_ops(mutated, k, progs[k])
    return Fault(
        FaultKind.PERMUTE,
        mutated,
        Category.WRITERS,
        launch.programs[ka].cta,
        range(ja, ja + 1),
    )


def remove_put(launch: Launch, rng: random.Random) -> Fault | None:
    acc = accesses(launch)
    namer = Namer(acc, launch.cfg)
    read = np.zeros(acc.total, dtype=bool)
    inside = (acc.r_cell >= 0) & (acc.r_cell < acc.total)
    read[acc.r_cell[inside]] = True
    units = acc.unit_of_op()
    sites = []
    row = 0
    for k, prog in enumerate(launch.programs):
        for j, op in enumerate(prog.ops):
            if isinstance(op, Put) and op.cells.size and read[np.asarray(op.cells)].any():
                sites.append((k, j, row))
            row += 1
    if not sites:
        return None
    k, j, row = rng.choice(sites)
    prog = launch.programs[k]
    expected = namer.expected()
    cells = np.asarray(prog.ops[j].cells).ravel()  # type: ignore[union-attr]
    owner = NO_UNIT if expected is None else int(expected[cells[read[cells]][0]])
    return Fault(
        FaultKind.REMOVE_PUT,
        _set_ops(launch, k, [op for i, op in enumerate(prog.ops) if i != j]),
        Category.WRITERS,
        prog.cta,
        range(j, j + 1),
        # the words the checks use for the unit that should have put it ("" unknown)
        unit=namer.unit(owner) if owner != NO_UNIT and owner == int(units[row]) else "",
        also=frozenset({Category.UNREAD}),
    )


INJECTORS: dict[FaultKind, Callable[[Launch, random.Random], Fault | None]] = {
    FaultKind.DROP_POLL_CELL: drop_poll_cell,
    FaultKind.NEXT_REGION: next_region,
    FaultKind.DUPLICATE_ITEM: duplicate_item,
    FaultKind.PUT_BEFORE_POLL: put_before_poll,
    FaultKind.NO_DRAIN: no_drain,
    FaultKind.PERMUTE: permute,
    FaultKind.REMOVE_PUT: remove_put,
}


def inject(kind: FaultKind, launch: Launch, rng: random.Random) -> Fault | None:
    """One fault of ``kind`` at a site of ``launch`` ``rng`` picks; None where it has none."""
    return INJECTORS[kind](launch, rng)
