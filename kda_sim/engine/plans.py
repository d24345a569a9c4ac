"""What the engine needs of a launch's polls that the launch alone fixes, computed for
every poll at once the first time one runs and kept with the hand-offs (a cached
protocol's later launches find it made)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kda_sim.protocol.handoffs import Handoffs, OpRef
from kda_sim.timeline.model import CellRange

_BUILT = ("poll plans",)  # the cache's mark that every poll of the launch has its plan
_PUTS = ("put records",)  # the cache's entry of put_fields
_READS = ("flagged reads",)  # the cache's entry of flagged_reads's tuples
_REFS = ("put refs",)  # the cache's entry of put_ref's tuples


@dataclass(slots=True)
class PollPlan:
    """A poll's cell ranges (shared by each of its records), its numbers of cells and
    batches, its put ops, whether one of its pairs is put by nobody, the number of its
    producer set (polls that wait on equal sets share one: the engine's joins are keyed by
    it, where hashing a tuple of 56 pairs at every poll cost) and the number of its cell
    set (``Handoffs.cell_sets``: polls of equal cells share one, and their ranges)."""

    ranges: list[CellRange]
    n_cells: int
    n_batches: int
    producers: tuple[OpRef, ...]
    unput: bool
    key: int
    cell_set: int


def poll_plan(ho: Handoffs, ref: OpRef) -> PollPlan:
    cache = ho.poll_cache
    hit = cache.get(ref)
    if hit is None:
        if _BUILT in cache:
            raise KeyError(f"poll {ref} is not one of the launch's polls")
        cache.update(_plans(ho))
        cache[_BUILT] = True
        hit = cache[ref]
    return hit


def flagged_reads(ho: Handoffs) -> dict[tuple[int, ...], tuple[int, ...]]:
    """The launch's flagged loads' cell tuples, each its own key: a flagged load's reads
    are ``flagged_reads(ho).setdefault(reads, reads)``, one tuple for every load of equal
    cells (the engine keeps which it has found all stored by the tuple's identity:
    ``CtaRun._check_flagged``)."""
    return ho.poll_cache.setdefault(_READS, {})


def put_ref(ho: Handoffs, ref: OpRef) -> OpRef:
    """The one tuple the plans' producers hold for put op ``ref`` (``ref`` itself for a put
    no poll waits on). A launch's ``World.put_done`` and ``put_events`` are keyed by the
    put's ref and read by the producers' (``World.join``, ``latest_visible``, a look-up
    a producer a poll): where the key is the very tuple the dict holds, a look-up ends at
    its identity, not at a compare of two equal tuples, int by int."""
    refs = ho.poll_cache.get(_REFS)
    if refs is None:
        if not ho.polls:  # no poll: no producers to share a tuple with
            return ref
        poll_plan(ho, ho.polls[0][0])  # (every plan made, and the refs with them)
        refs = ho.poll_cache[_REFS]
    return refs.get(ref, ref)


def put_fields(ho: Handoffs) -> dict[OpRef, tuple[str, int, int]]:
    """Put op -> its record's region name, pair count and first index, filled as puts run
    (reading a numpy element was a third of a put's cost)."""
    return ho.poll_cache.setdefault(_PUTS, {})


def put_record_fields(ho: Handoffs, ref: OpRef, op: Any) -> tuple[str, int, int]:
    """Put op ``op`` (``ref``)'s record's region name, pair count and first index, kept in
    ``put_fields``'s cache."""
    cache = put_fields(ho)
    fields = cache.get(ref)
    if fields is None:
        space = ho.launch.space
        first = int(op.cells[0]) - space.offsets[op.region] if len(op.cells) else -1
        fields = cache[ref] = (space.name(op.region), len(op.cells), first)
    return fields


def _plans(ho: Handoffs) -> dict[OpRef, PollPlan]:
    """Every poll's plan; the ranges of all in a few numpy calls, not several a poll, and
    once a distinct cell set (polls of one set share its ranges: its records share them)."""
    polls = ho.polls
    if not polls:
        return {}
    ranges, counts = _set_ranges(ho)
    sets: dict[tuple[OpRef, ...], int] = {}
    # polls of one cell set share its producers' tuple (Handoffs): known by identity, a
    # set is hashed (a tuple of up to 56 pairs, its hash not kept) once, not once a poll
    seen: dict[int, tuple[int, tuple[OpRef, ...]]] = {}
    # each put op's ref as one tuple in every set's producers (put_ref): in C, a set's
    # pairs mapped through the first of each's setdefault
    refs: dict[OpRef, OpRef] = {}
    out: dict[Any, Any] = {_REFS: refs}
    producers_of, unput = ho.producers, ho.unput
    for (ref, poll), d in zip(polls, ho.poll_set, strict=True):
        producers = producers_of[ref]
        hit = seen.get(id(producers))
        if hit is None:
            key = sets.setdefault(producers, len(sets))
            hit = seen[id(producers)] = (key, tuple(map(refs.setdefault, producers, producers)))
        key, own = hit
        out[ref] = PollPlan(
            ranges[d], counts[d], int(poll.batches.shape[0]), own, unput[ref], key, d
        )
    return out


def _set_ranges(ho: Handoffs) -> tuple[list[list[CellRange]], list[int]]:
    """Each distinct cell set's ranges (one a region it reads, in region order) and its
    number of cells."""
    space = ho.launch.space
    cells = ho.cell_sets
    sizes = np.fromiter((c.size for c in cells), np.int64, len(cells))
    flat = np.concatenate(cells)
    some = sizes > 0
    starts = (np.cumsum(sizes) - sizes)[some]
    lo = np.zeros(len(cells), dtype=np.int64)
    hi = np.zeros(len(cells), dtype=np.int64)
    if flat.size:  # empty sets take no part in the segments (their starts repeat)
        lo[some] = np.minimum.reduceat(flat, starts)
        hi[some] = np.maximum.reduceat(flat, starts)
    offsets = np.asarray(space.offsets, dtype=np.int64)
    r_lo = np.searchsorted(offsets, lo, side="right") - 1
    r_hi = np.searchsorted(offsets, hi, side="right") - 1
    one = (r_lo == r_hi).tolist()
    firsts = (lo - offsets[r_lo]).tolist()
    lasts = (hi - offsets[r_lo]).tolist()
    regions = r_lo.tolist()
    counts = sizes.tolist()
    several = [d for d in range(len(cells)) if counts[d] and not one[d]]
    split = dict(zip(several, _split(ho, [cells[d] for d in several]), strict=True))
    ranges: list[list[CellRange]] = []
    for d in range(len(cells)):
        if not counts[d]:
            ranges.append([])
        elif one[d]:  # regions are contiguous: lowest and highest in one, every cell is
            r = regions[d]
            ranges.append([CellRange(space.name(r), firsts[d], lasts[d], counts[d])])
        else:
            ranges.append(split[d])
    return ranges, counts


def _split(ho: Handoffs, polls: list[np.ndarray]) -> list[list[CellRange]]:
    """The ranges of polls that read several regions, one a region in region order: all
    at once, sorted by (poll, region, cell), each run of one (poll, region) a range."""
    if not polls:
        return []
    space = ho.launch.space
    cells = np.concatenate(polls)
    which = np.repeat(np.arange(len(polls), dtype=np.int64), [c.size for c in polls])
    regs = space.region_of(cells)
    key = which * (len(space.sizes) + 2) + regs + 1  # regs >= -1: one poll's keys apart
    order = np.lexsort((cells, key))
    key, cells, regs, which = key[order], cells[order], regs[order], which[order]
    starts = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
    ends = np.append(starts[1:], key.size) - 1
    offsets = np.asarray(space.offsets, dtype=np.int64)
    r = regs[starts]
    firsts = (cells[starts] - offsets[r]).tolist()
    lasts = (cells[ends] - offsets[r]).tolist()
    counts = (ends - starts + 1).tolist()
    out: list[list[CellRange]] = [[] for _ in polls]
    for j, (p, reg) in enumerate(zip(which[starts].tolist(), r.tolist(), strict=True)):
        out[p].append(CellRange(space.name(reg), firsts[j], lasts[j], counts[j]))
    return out
