"""Clears racing their waiters: a counter or flag word set back to 0 (a ``Reset``, a ticket
loop's last-ticket clear, an exchange or CAS of 0) while another CTA or item may still wait
on its previous value, or while another's add to it may land first and be wiped out.

Static and exact over the launch's happens-before order, whatever the timing: program
order; a put (or a publish's flag) before every poll of its pair (one writer a launch, so a
satisfied poll saw that put); a wait on a word after the writes it cannot pass without (on
a word only positive adds and clears write, the last add of a CTA whose adds from there on
the others' cannot make up for: a clear only lowers the word, which never exceeds the adds
landed; on a word no add writes, the one CTA that stores a value the wait
accepts); a last-ticket clear after every item of its loop and after every taker reached
the loop. A clear C and a wait X of another unit race when the clear can make X's predicate
false and neither is ordered before the other; C and an add A race when neither is ordered.

A wait that the clear itself releases (``== 0``) is no race; nor is a clear that comes
after every waiter passed (the waiters' arrivals at a later barrier its CTA waits for).
Launches in one stream are ordered by the kernel boundary, so a clear at the end of one
launch and the next launch's first add race only where grids run together (a host
sequence's ``a & b``): their programs are one launch here, and the same check applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.words import clearing_op, uses_words
from kda_sim.protocol.access import Accesses, Kind
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.counters import Atomic, AtomicKind, Reset, Wait
from kda_sim.protocol.handoffs import loop_numbers
from kda_sim.protocol.tickets import TicketLoop

RESET_FIX = (
    "clear the word only once every waiter has passed (after a later barrier every waiter "
    "arrives at, on another word), or never clear it: wait on a value that only grows "
    "(count arrivals over every round, or a generation word the last arriver bumps)"
)
_SHOWN = 3  # waiters and adds a finding names one by one

_NONE = -1  # a vector clock's "no op of that sequence"


@dataclass(frozen=True)
class _Clear:
    """One clear of one word: an op row, or a loop's last-ticket clear (``row`` its
    TicketLoop in the first taker's program, ``after`` the rows it comes after)."""

    cell: int
    row: int
    loop: bool = False
    after: tuple[int, ...] = ()
    branch: str = ""  # a clear in a branch on an atomic's old value: its condition


def _flat(acc: Accesses) -> Iterator[tuple[int, object, str]]:
    """(row, op, branch condition) of every op, a branch's ops at their ``OnOld``'s row
    (each may run: the CTA that takes the branch is decided while the launch runs)."""
    for row, op in enumerate(acc.ops):
        if isinstance(op, OnOld):
            for b, sub in op.branches():
                yield row, sub, op.cond(b)
        else:
            yield row, op, ""


def clears_of(acc: Accesses) -> list[_Clear]:
    """Every clear of the launch: its word and where it is."""
    if not uses_words(acc.launch):  # no reset, atomic, ticket loop or branch: no clear
        return []
    out: list[_Clear] = []
    loops: dict[int, list[int]] = {}  # ticket counter -> the takers' TicketLoop rows
    for row, op, cond in _flat(acc):
        if isinstance(op, Reset):
            out += [_Clear(int(c), row, branch=cond) for c in op.cells]
        elif clearing_op(op):
            out.append(_Clear(int(op.cell), row, branch=cond))  # type: ignore[union-attr]
        elif isinstance(op, TicketLoop) and op.takers > 0:
            loops.setdefault(op.cell, []).append(row)
    if not loops:
        return out
    numbers = loop_numbers(acc.launch)
    last = np.full(len(acc.seqs), -1, dtype=np.int64)  # each sequence's last op row
    np.maximum.at(last, acc.op_seq, np.arange(acc.op_seq.size, dtype=np.int64))
    for cell, rows in loops.items():
        loop = acc.ops[rows[0]]
        assert isinstance(loop, TicketLoop)
        # after every item (its last op) and every taker's arrival at the loop
        ends = [
            int(last[k]) for k, s in enumerate(acc.seqs) if s.loop == numbers[cell] and last[k] >= 0
        ]
        words = [loop.cell] + [int(c) for r in loop.clears for c in r.cells]
        out += [_Clear(w, rows[0], True, tuple(rows + ends)) for w in words]
    return out


class Order:
    """Happens-before between ops of a launch, as vector clocks at the ops that receive
    an edge from another sequence (a poll, a wait): ``clock[i][s]`` is the last position
    of sequence ``s`` ordered before that op."""

    def __init__(self, acc: Accesses, edges: dict[int, set[int]]) -> None:
        self.acc = acc
        n = len(acc.seqs)
        self.targets: list[np.ndarray] = []  # a sequence's receiving rows, in its order
        self.tpos: list[np.ndarray] = []
        by_seq: dict[int, list[int]] = {}
        for row in sorted(edges, key=lambda r: (int(acc.op_seq[r]), int(acc.op_pos[r]))):
            by_seq.setdefault(int(acc.op_seq[row]), []).append(row)
        self.clocks: list[np.ndarray] = []
        for s in range(n):
            rows = np.array(by_seq.get(s, []), dtype=np.int64)
            self.targets.append(rows)
            self.tpos.append(acc.op_pos[rows] if rows.size else rows)
            self.clocks.append(np.full((rows.size, n), _NONE, dtype=np.int64))
        # a fixpoint: clocks only grow and are bounded by the positions, so it ends (a
        # cycle of edges is a hang the deadlock checks report; here it only stops growing)
        changed = True
        while changed:
            changed = False
            for s in range(n):
                prev = np.full(n, _NONE, dtype=np.int64)
                for i, row in enumerate(self.targets[s].tolist()):
                    vc = prev.copy()
                    for src in edges[row]:
                        np.maximum(vc, self.at(src), out=vc)
                    vc[s] = max(vc[s], int(acc.op_pos[row]))
                    if not np.array_equal(vc, self.clocks[s][i]):
                        self.clocks[s][i] = vc
                        changed = True
                    prev = vc

    def at(self, row: int) -> np.ndarray:
        """The clock of op ``row``: what is ordered before it, itself included."""
        s, pos = int(self.acc.op_seq[row]), int(self.acc.op_pos[row])
        i = int(np.searchsorted(self.tpos[s], pos, side="right")) - 1
        vc = self.clocks[s][i].copy() if i >= 0 else np.full(len(self.acc.seqs), _NONE)
        vc[s] = max(vc[s], pos)
        return vc

    def of_clear(self, c: _Clear) -> np.ndarray:
        if not c.loop:
            return self.at(c.row)
        vc = np.full(len(self.acc.seqs), _NONE, dtype=np.int64)
        for row in c.after:
            np.maximum(vc, self.at(row), out=vc)
        return vc

    def before(self, row: int, clock: np.ndarray) -> bool:
        """Whether op ``row`` is ordered before the op whose clock is ``clock``."""
        return int(clock[int(self.acc.op_seq[row])]) >= int(self.acc.op_pos[row])


_Words = dict[int, list[tuple[int, object]]]  # word -> (row, op) of its writes or waits


def _word_ops(acc: Accesses) -> tuple[_Words, _Words]:
    """word -> (row, op) of its non-clearing writes (atomics), word -> (row, op) of its
    waits; a branch's at its row. A ticket loop's takes are a write with row -1."""
    writes: _Words = {}
    waits: _Words = {}
    for row, op, _ in _flat(acc):
        if isinstance(op, Atomic) and not clearing_op(op):
            writes.setdefault(op.cell, []).append((row, op))
        elif isinstance(op, Wait):
            waits.setdefault(op.cell, []).append((row, op))
        elif isinstance(op, TicketLoop):
            writes.setdefault(op.cell, []).append((-1, op))  # takes: no edges from this word
    return writes, waits


def _edges(acc: Accesses) -> dict[int, set[int]]:
    """target row -> source rows: the cross-sequence edges (see the module's docstring)."""
    edges: dict[int, set[int]] = {}
    # pairs: the one put of a pair before each poll of it
    cell, row = acc.writes
    once = acc.write_count[cell] == 1
    writer = np.full(acc.total, -1, dtype=np.int64)
    writer[cell[once]] = row[once]
    ok = (acc.r_kind == Kind.POLL) & (acc.r_cell >= 0) & (acc.r_cell < acc.total)
    src, dst = writer[acc.r_cell[ok]], acc.r_op[ok]
    keep = (src >= 0) & (acc.op_seq[np.maximum(src, 0)] != acc.op_seq[dst])
    for s, d in set(zip(src[keep].tolist(), dst[keep].tolist(), strict=True)):
        edges.setdefault(d, set()).add(s)
    # words: the writes a wait cannot pass without
    writes, waits = _word_ops(acc)
    for word, rows in waits.items():
        ws = writes.get(word, [])
        # a take, or a write in a branch (it may not run), gives no count to order by
        if any(w < 0 or isinstance(acc.ops[w], OnOld) for w, _ in ws):
            continue
        ops: dict[int, Atomic] = {w: o for w, o in ws}  # type: ignore[misc]
        adds = all(o.kind is AtomicKind.ADD and o.value > 0 for o in ops.values())
        for x, op in rows:
            assert isinstance(op, Wait)
            if op.plus or isinstance(acc.ops[x], OnOld):
                continue  # a wait in a branch may be skipped: it orders nothing
            if adds:  # clears only lower the word: it never exceeds the adds landed
                need = _needed_adds(acc, ops, op)
            elif not any(o.kind is AtomicKind.ADD for o in ops.values()):  # type: ignore[union-attr]
                need = _one_setter(acc, ops, op)
            else:
                need = []
            for w in need:
                if acc.op_seq[w] != acc.op_seq[x]:
                    edges.setdefault(x, set()).add(w)
    return edges


def _needed_adds(acc: Accesses, ops: dict[int, Atomic], wait: Wait) -> list[int]:
    """Each sequence's add from which on its adds are needed: the others' adds (and its
    own before it) fall short of the target without them (adds only grow the word)."""
    total = sum(o.value for o in ops.values())
    by_seq: dict[int, list[int]] = {}
    for w in sorted(ops, key=lambda r: int(acc.op_pos[r])):
        by_seq.setdefault(int(acc.op_seq[w]), []).append(w)
    out = []
    for rows in by_seq.values():
        suffix = 0
        for w in reversed(rows):  # the latest add whose suffix is needed
            suffix += ops[w].value
            if total - suffix < wait.value:
                out.append(w)
                break
    return out


def _one_setter(acc: Accesses, ops: dict[int, Atomic], wait: Wait) -> list[int]:
    """On a word no add writes: where 0 fails the wait and one sequence alone stores a
    value it accepts, that sequence's first such store."""
    if wait.pred.holds(0, wait.value):
        return []
    setters = [w for w, o in ops.items() if wait.pred.holds(o.value, wait.value)]
    if len({int(acc.op_seq[w]) for w in setters}) != 1:
        return []
    return [min(setters, key=lambda r: int(acc.op_pos[r]))]


def falsified_by_clear(wait: Wait) -> bool:
    """Whether a store of 0 can turn the wait's satisfied predicate false."""
    if wait.plus:
        return True  # a target past a register: 0 may fall short of it
    return not wait.pred.holds(0, wait.value)


def happens_before(acc: Accesses) -> Order:
    """The launch's happens-before order (see the module's docstring)."""
    return Order(acc, _edges(acc))


def check_resets(acc: Accesses, namer: Namer) -> list[Finding]:
    clears = clears_of(acc)
    if not clears:
        return []
    writes, waits = _word_ops(acc)
    if not any(waits.get(c.cell) or writes.get(c.cell) for c in clears):
        return []
    order = happens_before(acc)
    found: list[Finding] = []
    branched: dict[tuple[int, int, str], Finding] = {}  # one finding for a branch's clear
    for c in clears:
        # a loop's clear is made by whichever taker takes the last ticket: no own order
        mine = set() if c.loop else {int(acc.op_seq[c.row])}
        clock = order.of_clear(c)
        racing: list[tuple[int, Wait]] = []
        for x, op in waits.get(c.cell, []):
            if int(acc.op_seq[x]) in mine:
                continue
            assert isinstance(op, Wait)
            if not falsified_by_clear(op) or order.before(x, clock):
                continue
            if not c.loop and order.before(c.row, order.at(x)):
                continue  # a later use: it waits on what comes after the clear
            racing.append((x, op))
        lost: list[int] = []
        for a, op in writes.get(c.cell, []):
            if a < 0 or int(acc.op_seq[a]) in mine:
                continue
            if not (isinstance(op, Atomic) and op.kind is AtomicKind.ADD):
                continue
            if order.before(a, clock) or (not c.loop and order.before(c.row, order.at(a))):
                continue
            lost.append(a)
        if not (racing or lost):
            continue
        key = (c.cell, int(acc.op_pos[c.row]), c.branch)
        if c.branch and key in branched:  # whichever CTA takes the branch clears: said once
            branched[key].details["ctas"] += 1
            continue
        found.append(_finding(acc, namer, c, racing, lost))
        if c.branch:
            found[-1].details["ctas"] = 1
            branched[key] = found[-1]
    for f in branched.values():
        f.message += f" (the same branch in {f.details['ctas']} CTAs: whichever takes it clears)"
    return capped(found, lambda m: rest(Category.RESET_RACE, Severity.FAIL, m, "clears"))


def _who(acc: Accesses, namer: Namer, c: _Clear) -> str:
    if c.branch:
        return f"{namer.site(c.row)} ({c.branch})"
    if not c.loop:
        return namer.site(c.row)
    loop = acc.ops[c.row]
    assert isinstance(loop, TicketLoop)
    return f"the last ticket's taker of the ticket loop '{loop.label}'"


def _finding(
    acc: Accesses, namer: Namer, c: _Clear, racing: list[tuple[int, Wait]], lost: list[int]
) -> Finding:
    word = namer.cell(c.cell)
    who = _who(acc, namer, c)
    parts = []
    if racing:
        shown = "; ".join(
            f"{namer.site(x)}, waiting for {op.describe(word)}" for x, op in racing[:_SHOWN]
        )
        more = f"; and {len(racing) - _SHOWN} more" if len(racing) > _SHOWN else ""
        n = len(racing)
        parts.append(
            f"{n} wait{'s' if n != 1 else ''} of other units not ordered before it ({shown}"
            f"{more}): a waiter that reads the 0 instead of the value it waits for waits "
            "forever"
        )
    if lost:
        shown = "; ".join(namer.site(a) for a in lost[:_SHOWN])
        more = f"; and {len(lost) - _SHOWN} more" if len(lost) > _SHOWN else ""
        n = len(lost)
        parts.append(
            f"{n} add{'s' if n != 1 else ''} not ordered before it ({shown}{more}): an add "
            "that lands first is wiped out"
        )
    first = racing[0][0] if racing else lost[0]
    other = namer.unit(int(acc.seqs[int(acc.op_seq[first])].unit))
    at = int(acc.op_pos[first])
    edge = (
        f"missing edge: {other}'s op {at} -> the clear ({who} waits for no count that "
        f"needs an add {other} makes after op {at}, and polls no pair it puts after it)"
    )
    msg = f"{who} clears {word} with " + "; and ".join(parts) + f". {edge}"
    details = {
        **namer.cell_details(c.cell),
        "clearer": None if c.loop else namer.site_details(c.row),
        "waiters": [namer.site_details(x) for x, _ in racing],
        "adds": [namer.site_details(a) for a in lost],
    }
    return Finding(Category.RESET_RACE, Severity.FAIL, msg, RESET_FIX, details)
