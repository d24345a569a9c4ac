"""Who puts and who polls which pair: the static hand-off graph of a launch.

Derived once from the programs (the one source of truth) and used by the engine
(a poll waits on its producers' put operations), the checks and the kernels' tests.

An op in a ticket loop's body is named by :func:`kda_sim.protocol.tickets.item_ref`
(loop, item, op) in place of (CTA, op): its puts and polls join the graph like a
program's, with ``put_cta`` holding the (negative) loop reference for pairs an item puts.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from kda_sim.gcpause import gc_paused
from kda_sim.memo import memo
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.counters import Atomic, Reset, Wait
from kda_sim.protocol.ops import Begin, Poll, Publish, Put
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import ITEM_CTA0, TicketLoop, check_words, item_ref

# ops that name counter words, or pairs to reset, by cell: checked against their regions
# (a type test: K1 has 20k ops)
_WORD_OPS = frozenset({Atomic, Wait, Reset, OnOld, ResetPairs})

OpRef = tuple[int, int]  # (cta, op index in its program)
_OP_SPAN = 1 << 24  # op indices of one CTA stay below this

_OTHER, _PUT, _POLL, _WORD, _LOOP, _BEGIN = range(6)
_INT64 = np.dtype(np.int64)  # a builtin dtype is one object: told by identity
_NONE = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, slots=True)
class OpIndex:
    """Every op of a launch's programs end to end (its global op number), where each
    program's ops begin, and each op's class by its type (:func:`_kind`): made once a
    launch by :func:`derive` and read again by the wait graph, which looks for the same
    polls and also the stage begins (K1 R=4 L=2: 20,279 ops)."""

    ops: list[Any]
    start: np.ndarray  # [programs + 1]: a program's first global op number
    kinds: np.ndarray  # [ops] int8

    def polls(self) -> np.ndarray:
        """Global op numbers of the polls (``isinstance(op, Poll)``)."""
        return np.flatnonzero(self.kinds == _POLL)

    def begins(self) -> np.ndarray:
        """Global op numbers of the stage begins (``isinstance(op, Begin)``)."""
        return np.flatnonzero(self.kinds == _BEGIN)


def op_index(launch: Launch) -> OpIndex:
    """The launch's :class:`OpIndex`: every op's class looked up by its type in C
    (``map``; a Python loop's test an op was the cost)."""
    progs = launch.programs
    ops = list(chain.from_iterable(p.ops for p in progs))
    # bytes() packs the small ints in C; np.fromiter packs each through numpy's scalar path
    kinds = np.frombuffer(bytes(map(_KINDS.__getitem__, map(type, ops))), np.int8)
    start = np.zeros(len(progs) + 1, dtype=np.int64)
    np.cumsum(np.fromiter(map(len, (p.ops for p in progs)), np.int64, len(progs)), out=start[1:])
    return OpIndex(ops, start, kinds)


@dataclass(frozen=True)
class Handoffs:
    launch: Launch
    put_count: np.ndarray = field(repr=False)  # puts a cell receives in this launch
    put_cta: np.ndarray = field(repr=False)  # the (last) CTA that puts a cell, -1 none
    put_op: np.ndarray = field(repr=False)  # its op index, -1 none
    polls: tuple[tuple[OpRef, Poll], ...] = field(repr=False)
    producers: dict[OpRef, tuple[OpRef, ...]] = field(repr=False)  # poll -> put ops
    unput: dict[OpRef, bool] = field(repr=False)  # a poll waits on a pair nobody puts
    # a ticket loop's counter cell -> its number in item references (first seen first)
    loops: dict[int, int] = field(default_factory=dict, repr=False)
    # the distinct cell sets the polls wait on (each once, a flat int64 array) and each
    # poll's set, in ``polls`` order: what depends on a poll's cells alone is made once a
    # set (K1 R=4 L=2: 879 sets for 2,237 polls)
    cell_sets: tuple[np.ndarray, ...] = field(default=(), repr=False, compare=False)
    poll_set: tuple[int, ...] = field(default=(), repr=False, compare=False)
    # what the engine derives once a poll and keeps with the launch (engine.world.plan)
    poll_cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)
    # the programs' ops indexed (None: not made with the table)
    ops: OpIndex | None = field(default=None, repr=False, compare=False)

    def polled_cells(self) -> np.ndarray:
        if not self.polls:
            return np.zeros(0, dtype=np.int64)
        return np.unique(np.concatenate([p.cells for _, p in self.polls]))

    def unput_polled(self, ref: OpRef) -> np.ndarray:
        """Cells that poll ``ref`` waits on and no op of this launch puts."""
        poll = dict(self.polls)[ref]
        return poll.cells[self.put_count[poll.cells] == 0]


def loop_numbers(launch: Launch) -> dict[int, int]:
    """Each ticket loop (by its counter cell) -> its number, in order of first appearance."""
    out: dict[int, int] = {}
    for prog in launch.programs:
        for op in prog.ops:
            if isinstance(op, TicketLoop):
                out.setdefault(op.cell, len(out))
    return out


def _ops(launch: Launch, loops: dict[int, int]):
    """Every (reference, op) of the launch: programs' ops, then each loop's bodies once."""
    bodies: dict[int, TicketLoop] = {}
    for prog in launch.programs:
        for k, op in enumerate(prog.ops):
            if isinstance(op, TicketLoop):
                bodies.setdefault(op.cell, op)
            else:
                yield (prog.cta, k), op
    for cell, loop in bodies.items():
        for i, body in enumerate(loop.bodies):
            for k, op in enumerate(body):
                yield item_ref(loops[cell], i, k), op


def put_ops(launch: Launch):
    for ref, op in _ops(launch, loop_numbers(launch)):
        if isinstance(op, Put | Publish):
            yield ref, op


def _sorted_ops(
    index: OpIndex, launch: Launch
) -> tuple[list[tuple[OpRef, Put | Publish]], list[tuple[OpRef, Poll]], bool, dict[int, int]]:
    """The launch's puts and polls in :func:`_ops` order, whether it has a counter-word
    op, and its loops (:func:`loop_numbers`): the programs' from ``index`` (K1 has 20k
    ops, almost all of them none of these), then the loops' bodies."""
    ops, kinds, start = index.ops, index.kinds, index.start
    ctas = [p.cta for p in launch.programs]

    def of_kind(kind: int) -> list[tuple[OpRef, Any]]:
        at = np.flatnonzero(kinds == kind)
        prog = np.searchsorted(start, at, side="right") - 1
        refs = zip(map(ctas.__getitem__, prog.tolist()), (at - start[prog]).tolist(), strict=True)
        return list(zip(refs, map(ops.__getitem__, at.tolist()), strict=True))

    puts: list[tuple[OpRef, Put | Publish]] = of_kind(_PUT)
    polls: list[tuple[OpRef, Poll]] = of_kind(_POLL)
    words = bool((kinds == _WORD).any())
    loops: dict[int, int] = {}
    bodies: dict[int, TicketLoop] = {}
    for _, op in of_kind(_LOOP):  # its bodies follow the programs
        loops.setdefault(op.cell, len(loops))
        bodies.setdefault(op.cell, op)
    for cell, loop in bodies.items():
        n = loops[cell]
        for i, body in enumerate(loop.bodies):
            for k, op in enumerate(body):
                kind = _KINDS[type(op)]
                if kind == _PUT:
                    puts.append((item_ref(n, i, k), op))
                elif kind == _POLL:
                    polls.append((item_ref(n, i, k), op))
                elif kind == _WORD:
                    words = True
    return puts, polls, words, loops


def _kind(t: type) -> int:
    if issubclass(t, Put | Publish):
        return _PUT
    if issubclass(t, Poll):
        return _POLL
    if t in _WORD_OPS:
        return _WORD
    if issubclass(t, TicketLoop):
        return _LOOP
    return _BEGIN if issubclass(t, Begin) else _OTHER


class _Kinds(dict[type, int]):
    """An op type -> its class here (:func:`_kind`), found once a type."""

    def __missing__(self, t: type) -> int:
        kind = self[t] = _kind(t)
        return kind


_KINDS = _Kinds()


@gc_paused
def derive(launch: Launch) -> Handoffs:
    total = launch.space.total
    count = np.zeros(total, dtype=np.int64)
    cta = np.full(total, -1, dtype=np.int64)
    opi = np.full(total, -1, dtype=np.int64)
    index = op_index(launch)
    puts, polls, words, loops = _sorted_ops(index, launch)
    if loops or words:
        check_words(launch)
    # one call flattens and casts every put's cells (an asarray and a ravel a put cost more)
    put_cells = [op.cells for _, op in puts]
    flat = np.concatenate(put_cells, axis=None, dtype=np.int64, casting="unsafe") if puts else _NONE
    if flat.size and flat.min() >= 0 and flat.max() < total:
        count += np.bincount(flat, minlength=total)  # at once: np.add.at an op was slow
    else:  # empty, or ids outside the space (np.add.at says so, or wraps as it always did)
        for _, op in puts:
            np.add.at(count, op.cells, 1)
    if flat.size and count.max() == 1:  # each cell put once: every put's cells at once
        sizes = np.fromiter((c.size for c in put_cells), np.int64, len(put_cells))
        cta[flat] = np.repeat([c for (c, _), _ in puts], sizes)
        opi[flat] = np.repeat([k for (_, k), _ in puts], sizes)
    else:  # a cell put twice keeps the last put's CTA and op: one put at a time, in order
        for (c, k), op in puts:
            cta[op.cells] = c
            opi[op.cells] = k
    # keys stay >= 0 with item references' negative "CTAs" shifted up
    shift = len(loops) - ITEM_CTA0
    sets, of = _cell_sets(polls)
    producers, unput = _producers(polls, sets, of, count, (cta + shift) * _OP_SPAN + opi, shift)
    return Handoffs(
        launch,
        count,
        cta,
        opi,
        tuple(polls),
        producers,
        unput,
        loops,
        tuple(sets),
        tuple(of),
        ops=index,
    )


def _cell_sets(polls: list[tuple[OpRef, Poll]]) -> tuple[list[np.ndarray], list[int]]:
    """The polls' distinct cell sets (flat int64, first seen first) and each poll's: an
    array object held by several polls (a kernel shares read-only arrays) is compared by
    its bytes once."""
    distinct: dict[bytes, int] = {}
    by_id: dict[int, int] = {}  # the polls hold every array alive while this runs
    sets: list[np.ndarray] = []
    of: list[int] = []
    for _, op in polls:
        d = by_id.get(id(op.cells))
        if d is None:
            c = op.cells
            c = c.ravel() if c.dtype is _INT64 else np.asarray(c, dtype=np.int64).ravel()
            d = by_id[id(op.cells)] = distinct.setdefault(c.tobytes(), len(distinct))
            if d == len(sets):
                sets.append(c)
        of.append(d)
    return sets, of


def _producers(
    polls: list[tuple[OpRef, Poll]],
    sets: list[np.ndarray],
    of: list[int],
    count: np.ndarray,
    put_key: np.ndarray,
    shift: int,
) -> tuple[dict[OpRef, tuple[OpRef, ...]], dict[OpRef, bool]]:
    """Each poll's put ops (sorted by (cta, op)) and whether it waits on a pair nobody
    puts: every poll at once (a numpy call a poll was the cost), each distinct cell set
    once (K1 R=4 L=2: 2,237 polls, 879 sets; 400,024 cells, 89,644 in distinct sets)."""
    sizes = np.fromiter(map(len, sets), np.int64, len(sets))
    cells = np.concatenate(sets) if sets else np.zeros(0, dtype=np.int64)
    # a cell nobody puts keys 0, a put cell its put's key + 1: no mask over the cells
    key = np.where(count > 0, put_key + 1, 0)[cells]
    span = int(key.max()) + 1 if key.size else 1
    both = _sorted_unique(np.repeat(np.arange(len(sets), dtype=np.int64) * span, sizes) + key)
    where, keys = both // span, both % span  # by set, then by (cta, op); 0 first
    unput_set = np.zeros(len(sets), dtype=bool)
    unput_set[where[keys == 0]] = True
    put = keys > 0
    where, keys = where[put], keys[put] - 1
    pairs = list(zip((keys // _OP_SPAN - shift).tolist(), (keys % _OP_SPAN).tolist(), strict=True))
    bounds = np.searchsorted(where, np.arange(len(sets) + 1)).tolist()
    per_set = [tuple(pairs[bounds[d] : bounds[d + 1]]) for d in range(len(sets))]
    short = unput_set.tolist()
    refs = [ref for ref, _ in polls]
    producers = dict(zip(refs, map(per_set.__getitem__, of), strict=True))
    unput = dict(zip(refs, map(short.__getitem__, of), strict=True))
    return producers, unput


def _sorted_unique(v: np.ndarray) -> np.ndarray:
    """``np.unique(v)``, faster where runs repeat: a poll's neighbouring cells mostly come
    from one put op, so dropping repeats in a row first leaves a few percent to sort."""
    if v.size:
        v = v[np.concatenate(([True], v[1:] != v[:-1]))]
        v.sort()
        v = v[np.concatenate(([True], v[1:] != v[:-1]))]
    return v


# the launches ``derived`` keeps, the latest used last (their tables hold them alive: a few)
_DERIVED_KEPT = 8
_derived: OrderedDict[int, Handoffs] = OrderedDict()


def derived(launch: Launch) -> Handoffs:
    """``derive(launch)``, kept for the same launch object: a check runs a transformed
    launch (a mutant, a load moved) through the engine and the static checks many times,
    and each run derived it again (25 to 50 ms for K1). Launches are immutable; one is
    known by identity (hashing its programs would cost what deriving does)."""
    key = id(launch)
    hit = _derived.get(key)
    if hit is not None and hit.launch is launch:
        _derived.move_to_end(key)
        return hit
    hit = _derived[key] = derive(launch)
    while len(_derived) > _DERIVED_KEPT:
        _derived.popitem(last=False)
    return hit


@memo(64)
@gc_paused  # the kernel's build and the derivation (kda_sim.gcpause says why)
def handoffs_of(cfg) -> Handoffs:
    """The hand-off graph of the launch its kernel builds for ``cfg`` (cached)."""
    from kda_sim.kernels.registry import spec_for

    return derive(spec_for(cfg).build(cfg))
