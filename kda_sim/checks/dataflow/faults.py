"""Single faults injected into any launch's programs, one CTA at a time, each with the
data-flow category that must catch it and the CTA and ops that must be named.

Generic: the injectors look only at the ops (:mod:`kda_sim.protocol.ops`) and the
launch's cells, never at a kernel's names, so the property test
(``tests/checks/test_dataflow_property.py``) runs them on random protocols of every
example kernel and K1 alike. An injector returns None where the launch has no site for
its fault (a kernel of counter words has no poll to drop a cell from); the sites it
lists are ones where the fault is observable (a dropped poll cell that a later op of the
CTA reads, a removed put whose cells someone polls, a clear a wait of another unit is not
ordered with). Each injector lists its sites (:func:`sites`: the CTA and stage it
changes) and applies one (:func:`apply`): ``kda-sim check --mutant NAME@CTA/stage`` and
K1's catalogue use the same two (:mod:`kda_sim.checks.mutations`).
"""

from __future__ import annotations

import bisect
import random
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from itertools import pairwise

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, sites_in
from kda_sim.checks.dataflow.resets import falsified_by_clear, happens_before
from kda_sim.checks.findings import Category, Finding
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.access import NO_UNIT, Accesses, accesses
from kda_sim.protocol.counters import Reset, Wait
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
    EARLY_CLEAR = "early-clear"  # a word cleared while another unit may still wait on it


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


# -- sites ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class FaultSite:
    """Where one fault goes: the CTA whose program it changes, the stage (and task) of the
    op it changes, the cell concerned (-1 none), and the injector's own coordinates."""

    kind: FaultKind
    cta: int
    stage: str
    task: int
    cell: int
    key: tuple[int, ...] = field(repr=False)

    @property
    def where(self) -> str:
        """``CTA/stage``: what ``kda-sim check --mutant NAME@CTA/stage`` names."""
        return f"{self.cta}/{self.stage}" if self.stage else str(self.cta)


def _stage_at(ops: tuple[Op, ...], j: int) -> tuple[str, int]:
    """The stage and task of op ``j`` (the last Begin at or before it that no End closed)."""
    for op in reversed(ops[: j + 1]):
        if isinstance(op, End):
            return "", -1
        if isinstance(op, Begin):
            return op.stage, op.task
    return "", -1


def _site(kind: FaultKind, launch: Launch, k: int, j: int, cell: int, *key: int) -> FaultSite:
    prog = launch.programs[k]
    stage, task = _stage_at(prog.ops, min(j, len(prog.ops) - 1)) if prog.ops else ("", -1)
    return FaultSite(kind, prog.cta, stage, task, cell, (k, j, *key))


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


def _drop_poll_cell_sites(launch: Launch) -> list[FaultSite]:
    """A poll's cell that no other poll of its CTA covers and a later op of it reads."""
    acc = accesses(launch)
    flags_of: dict[int, list[int]] = {}
    for flag, data in _guards(acc).items():
        for d in data:
            flags_of.setdefault(d, []).append(flag)
    sites: list[FaultSite] = []
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
                    sites.append(_site(FaultKind.DROP_POLL_CELL, launch, k, j, c, at[n]))
    return sites


def _drop_poll_cell(launch: Launch, site: FaultSite) -> Fault:
    k, j, reader = site.key
    prog = launch.programs[k]
    p = prog.ops[j]
    assert isinstance(p, Poll)
    ops = list(prog.ops)
    if p.cells.size == 1:  # a poll of no cell is no poll: drop it
        del ops[j]
        reader -= 1
    else:
        ops[j] = p.without(site.cell)
    return Fault(
        FaultKind.DROP_POLL_CELL,
        _set_ops(launch, k, ops),
        Category.COVERAGE,
        prog.cta,
        range(reader, reader + 1),
        also=frozenset({Category.UNREAD}),
    )


def _next_region_sites(launch: Launch) -> list[FaultSite]:
    """Every put or publish: its last cell moved one past its region's end."""
    return [
        _site(FaultKind.NEXT_REGION, launch, k, j, int(np.asarray(op.cells).ravel()[-1]))
        for k, prog in enumerate(launch.programs)
        for j, op in enumerate(prog.ops)
        if isinstance(op, (Put, Publish)) and np.asarray(op.cells).size
    ]


def _next_region(launch: Launch, site: FaultSite) -> Fault:
    space = launch.space
    k, j = site.key
    prog = launch.programs[k]
    op = prog.ops[j]
    assert isinstance(op, (Put, Publish))
    cells = np.array(op.cells, dtype=np.int64).ravel()
    r = int(op.region)
    # the index one past the region's last: the next region's first cell (or, after
    # the last region, no cell of the launch)
    cells[-1] = space.offsets[r] + space.sizes[r]
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


def _item_spans(launch: Launch) -> list[tuple[int, tuple[Op, ...], Category]]:
    """(source program index, -1 for a ticket item; the item's ops; the category its copy
    is caught as) of every work item (every stage of one task)."""
    items = hook(spec_for(launch.cfg), "work_items")
    named = {} if items is None else {s: set(t) for s, t in items(launch.cfg).items()}
    bodies: list[tuple[int, tuple[Op, ...]]] = [(k, p.ops) for k, p in enumerate(launch.programs)]
    for prog in launch.programs:
        for op in prog.ops:
            if isinstance(op, TicketLoop):
                bodies += [(-1, b) for b in op.bodies]
    out = []
    for src, ops in bodies:
        for lo, hi in _spans(ops):
            span = ops[lo : hi + 1]
            if any(isinstance(op, Begin) and op.task in named.get(op.stage, ()) for op in span):
                out.append((src, span, Category.ITEMS))
            elif _writes(span):
                out.append((src, span, Category.WRITERS))
    return out


def _duplicate_item_sites(launch: Launch) -> list[FaultSite]:
    """Each work item, copied onto the end of the next CTA's program (a ticket item: the
    first CTA's); the site is that CTA and the item's first stage."""
    n = len(launch.programs)
    if n < 2:
        return []
    sites = []
    for i, (src, span, _) in enumerate(_item_spans(launch)):
        k = (src + 1) % n
        first = span[0]
        assert isinstance(first, Begin)
        prog = launch.programs[k]
        sites.append(
            FaultSite(FaultKind.DUPLICATE_ITEM, prog.cta, first.stage, first.task, -1, (k, i))
        )
    return sites


def _duplicate_item(launch: Launch, site: FaultSite) -> Fault:
    """A copy of one work item, appended to another CTA's program: caught as an item run
    twice where the kernel names its work items, else as cells written twice."""
    k, i = site.key
    _, span, category = _item_spans(launch)[i]
    prog = launch.programs[k]
    at = len(prog.ops)
    return Fault(
        FaultKind.DUPLICATE_ITEM,
        _set_ops(launch, k, [*prog.ops, *span]),
        category,
        prog.cta,
        range(at, at + len(span)),
        # its cells are written twice; its reads may rest on polls its own CTA made
        # before the item began, which the copy's CTA never made; a clear in it races
        # the first run's waiters
        also=frozenset(
            {
                Category.ITEMS,
                Category.WRITERS,
                Category.COVERAGE,
                Category.ORDER,
                Category.UNREAD,
                Category.RESET_RACE,
            }
        ),
    )


def _put_before_poll_sites(launch: Launch) -> list[FaultSite]:
    """A put computed from polled cells, and the first poll of its inputs in its stage."""
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
                sites.append(_site(FaultKind.PUT_BEFORE_POLL, launch, k, j, -1, first))
    return sites


def _put_before_poll(launch: Launch, site: FaultSite) -> Fault:
    """The put moved to just before the first poll of its inputs in its stage."""
    k, j, first = site.key
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


def _no_drain_sites(launch: Launch) -> list[FaultSite]:
    """A draining publish after stores of flagged data."""
    sites = []
    for k, prog in enumerate(launch.programs):
        stored = False
        for j, op in enumerate(prog.ops):
            if isinstance(op, Store) and op.cells:
                stored = True
            elif isinstance(op, Publish):
                if stored and op.drain:
                    sites.append(_site(FaultKind.NO_DRAIN, launch, k, j, -1))
                stored = False
    return sites


def _no_drain(launch: Launch, site: FaultSite) -> Fault:
    k, j = site.key
    prog = launch.programs[k]
    ops = list(prog.ops)
    ops[j] = replace(ops[j], drain=False)
    return Fault(
        FaultKind.NO_DRAIN, _set_ops(launch, k, ops), Category.VISIBILITY, prog.cta, range(j, j + 1)
    )


def _permute_sites(launch: Launch) -> list[FaultSite]:
    """Two puts of one region and size, on units the kernel's layout tells apart (each
    with the next unit of its group): they swap their cells, so every cell is still put
    once (nothing hangs), by the wrong unit."""
    acc = accesses(launch)
    expected = Namer(acc, launch.cfg).expected()
    if expected is None:
        return []
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
    sites = []
    for group in groups.values():
        order = sorted(group)
        for ua, ub in pairwise(order):
            (ka, ja), (kb, jb) = group[ua], group[ub]
            cell = int(np.asarray(launch.programs[ka].ops[ja].cells).ravel()[0])  # type: ignore[union-attr]
            sites.append(_site(FaultKind.PERMUTE, launch, ka, ja, cell, kb, jb))
    return sites


def _permute(launch: Launch, site: FaultSite) -> Fault:
    ka, ja, kb, jb = site.key
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


def _remove_put_sites(launch: Launch) -> list[FaultSite]:
    """A put some op polls or reads."""
    acc = accesses(launch)
    read = np.zeros(acc.total, dtype=bool)
    inside = (acc.r_cell >= 0) & (acc.r_cell < acc.total)
    read[acc.r_cell[inside]] = True
    sites = []
    row = 0
    for k, prog in enumerate(launch.programs):
        for j, op in enumerate(prog.ops):
            if isinstance(op, Put) and op.cells.size and read[np.asarray(op.cells)].any():
                cells = np.asarray(op.cells).ravel()
                cell = int(cells[read[cells]][0])
                sites.append(_site(FaultKind.REMOVE_PUT, launch, k, j, cell, row))
            row += 1
    return sites


def _remove_put(launch: Launch, site: FaultSite) -> Fault:
    k, j, row = site.key
    acc = accesses(launch)
    namer = Namer(acc, launch.cfg)
    prog = launch.programs[k]
    expected = namer.expected()
    owner = NO_UNIT if expected is None else int(expected[site.cell])
    return Fault(
        FaultKind.REMOVE_PUT,
        _set_ops(launch, k, [op for i, op in enumerate(prog.ops) if i != j]),
        Category.WRITERS,
        prog.cta,
        range(j, j + 1),
        # the words the checks use for the unit that should have put it ("" unknown)
        unit=namer.unit(owner) if owner != NO_UNIT and owner == int(acc.unit_of_op()[row]) else "",
        also=frozenset({Category.UNREAD}),
    )


def _early_clear_sites(launch: Launch) -> list[FaultSite]:
    """A word another unit waits on (a wait a 0 turns false), cleared by one CTA right
    after its own wait on it (the leading CTA zeroing an arrival counter), or, where it
    has none, at the end of its program: where a wait of another unit is not ordered
    before that point, nor after it."""
    acc = accesses(launch)
    waits: dict[int, list[int]] = {}
    for row, op in enumerate(acc.ops):
        if isinstance(op, Wait) and falsified_by_clear(op):
            waits.setdefault(op.cell, []).append(row)
    if not waits:
        return []
    order = happens_before(acc)
    first_row = np.searchsorted(acc.op_seq, np.arange(len(acc.launch.programs)))
    sites = []
    for k, prog in enumerate(launch.programs):
        if not prog.ops:
            continue
        base = int(first_row[k])
        for word, rows in waits.items():
            own = [r for r in rows if acc.op_seq[r] == k]
            at = int(acc.op_pos[own[0]]) + 1 if own else len(prog.ops)  # the clear's place
            clock = order.at(base + at - 1)  # the clear comes right after that op
            if any(
                acc.op_seq[x] != k
                and not order.before(x, clock)
                and int(order.at(x)[k]) < at  # nor after it (a later use)
                for x in rows
            ):
                # named by the op it follows (the wait, or the program's last op)
                sites.append(_site(FaultKind.EARLY_CLEAR, launch, k, at - 1, word, at))
    return sites


def _early_clear(launch: Launch, site: FaultSite) -> Fault:
    k, _, at = site.key
    prog = launch.programs[k]
    region = int(launch.space.region_of(np.array([site.cell]))[0])
    clear = Reset(region, (site.cell,))
    return Fault(
        FaultKind.EARLY_CLEAR,
        _set_ops(launch, k, [*prog.ops[:at], clear, *prog.ops[at:]]),
        Category.RESET_RACE,
        prog.cta,
        range(at, at + 1),
    )


@dataclass(frozen=True)
class Injector:
    sites: Callable[[Launch], list[FaultSite]]
    apply: Callable[[Launch, FaultSite], Fault]
    description: str


INJECTORS: dict[FaultKind, Injector] = {
    FaultKind.DROP_POLL_CELL: Injector(
        _drop_poll_cell_sites,
        _drop_poll_cell,
        "a poll waits for one cell fewer than its CTA reads",
    ),
    FaultKind.NEXT_REGION: Injector(
        _next_region_sites, _next_region, "a put's last cell lies one past its region's end"
    ),
    FaultKind.DUPLICATE_ITEM: Injector(
        _duplicate_item_sites,
        _duplicate_item,
        "a work item runs again at the end of another CTA's program",
    ),
    FaultKind.PUT_BEFORE_POLL: Injector(
        _put_before_poll_sites,
        _put_before_poll,
        "a put moved before the poll of the inputs it is computed from",
    ),
    FaultKind.NO_DRAIN: Injector(
        _no_drain_sites, _no_drain, "a flag raised without draining the stores it flags"
    ),
    FaultKind.PERMUTE: Injector(
        _permute_sites,
        _permute,
        "two units' puts swap their cells (each cell still put once)",
    ),
    FaultKind.REMOVE_PUT: Injector(
        _remove_put_sites, _remove_put, "a put that someone polls or reads is gone"
    ),
    FaultKind.EARLY_CLEAR: Injector(
        _early_clear_sites,
        _early_clear,
        "a CTA clears a word another unit may still wait on",
    ),
}


def sites(kind: FaultKind, launch: Launch) -> list[FaultSite]:
    """Every site of ``launch`` where a fault of ``kind`` applies, in program order."""
    return INJECTORS[kind].sites(launch)


def apply(launch: Launch, site: FaultSite) -> Fault:
    """The fault of ``site`` (one of :func:`sites`) applied to ``launch``."""
    return INJECTORS[site.kind].apply(launch, site)


def inject(kind: FaultKind, launch: Launch, rng: random.Random) -> Fault | None:
    """One fault of ``kind`` at a site of ``launch`` ``rng`` picks; None where it has none."""
    found = sites(kind, launch)
    return apply(launch, rng.choice(found)) if found else None
