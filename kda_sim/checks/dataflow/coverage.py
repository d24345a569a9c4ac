"""Every read of a produced cell ordered after its write: in the reader's program order
a poll of the cell, or of the flag published after it, comes before the read (or the
reader wrote the cell itself, earlier). A put computed from cells it polls only later is
an order fault (the value is made before its inputs arrived); any other unguarded read a
coverage fault. A polled pair whose data the poller never reads is advice (a wait for
nothing), checked where the kernel declares its reads."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.protocol.access import Accesses, Kind

COVERAGE_FIX = (
    "poll the cell (or the flag its writer publishes after it) before the read: add it "
    "to the stage's poll, so the read is ordered after the put"
)
ORDER_FIX = "move the put after the poll of its inputs and the compute that reads them"
UNREAD_FIX = "drop the pair from the poll (a wait for data the stage never uses), or say the read"


@dataclass
class _Index:
    """min / max position of each (sequence, cell) key, sorted by key."""

    keys: np.ndarray
    lo: np.ndarray
    hi: np.ndarray

    @classmethod
    def of(cls, keys: np.ndarray, pos: np.ndarray) -> _Index:
        order = np.argsort(keys, kind="stable")
        k, p = keys[order], pos[order]
        if not k.size:
            return cls(k, p, p)
        starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
        return cls(k[starts], np.minimum.reduceat(p, starts), np.maximum.reduceat(p, starts))

    def find(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(found, lo, hi) of each key; lo and hi are -1 where it is not found."""
        none = np.full(keys.shape, -1, dtype=np.int64)
        if not self.keys.size:
            return np.zeros(keys.shape, dtype=bool), none, none
        at = np.minimum(np.searchsorted(self.keys, keys), self.keys.size - 1)
        found = self.keys[at] == keys
        return found, np.where(found, self.lo[at], -1), np.where(found, self.hi[at], -1)


def _candidates(acc: Accesses, cells: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(which, cell): each cell itself, and the flags of the Publish that guards it."""
    which = [np.arange(cells.size)]
    cand = [cells]
    guard = acc.guard[cells]
    for row in np.unique(guard[guard >= 0]).tolist():
        flags = np.asarray(acc.ops[row].cells, dtype=np.int64).ravel()
        flags = flags[(flags >= 0) & (flags < acc.total)]
        mine = np.flatnonzero(guard == row)
        which.append(np.repeat(mine, flags.size))
        cand.append(np.tile(flags, mine.size))
    return np.concatenate(which), np.concatenate(cand)


@dataclass
class _Reads:
    """The reads inside the space: cell, op row, kind, the op's sequence and place."""

    rc: np.ndarray
    ro: np.ndarray
    rk: np.ndarray
    seq: np.ndarray
    pos: np.ndarray

    @classmethod
    def of(cls, acc: Accesses) -> _Reads:
        ok = (acc.r_cell >= 0) & (acc.r_cell < acc.total)
        ro = acc.r_op[ok]
        return cls(acc.r_cell[ok], ro, acc.r_kind[ok], acc.op_seq[ro], acc.op_pos[ro])


def check_coverage(acc: Accesses, namer: Namer) -> list[Finding]:
    total = acc.total
    r = _Reads.of(acc)
    rc, rk, seq, pos = r.rc, r.rk, r.seq, r.pos
    wc, wo = acc.writes
    count = acc.write_count
    writer = np.full(total, -1, dtype=np.int64)
    writer[wc] = wo
    out: list[Finding] = []
    data = np.flatnonzero((rk != Kind.POLL) & (count[rc] > 0))
    # only the sequences that read beyond their polls' own arrays need their polls indexed
    reading = np.zeros(len(acc.seqs), dtype=bool)
    reading[seq[data]] = True
    p = (rk == Kind.POLL) & reading[seq]
    polls = _Index.of(seq[p] * total + rc[p], pos[p])
    w = reading[acc.op_seq[wo]]
    own = _Index.of(acc.op_seq[wo[w]] * total + wc[w], acc.op_pos[wo[w]])
    if data.size:
        out += _unguarded(acc, namer, r, data, polls, own, writer)
    if acc.declares_reads():
        out += _unread(acc, namer, r)
    return out


def _unguarded(
    acc: Accesses,
    namer: Namer,
    r: _Reads,
    data: np.ndarray,
    polls: _Index,
    own: _Index,
    writer: np.ndarray,
) -> list[Finding]:
    """Reads (``data``: indices into ``r``) that no earlier poll or own write orders."""
    total = acc.total
    rc, ro, rk, seq, pos = r.rc, r.ro, r.rk, r.seq, r.pos
    which, cand = _candidates(acc, rc[data])
    read = data[which]
    found, lo, hi = polls.find(seq[read] * total + cand)
    before = found & (lo < pos[read])
    later = found & (hi > pos[read])
    covered = np.bincount(which[before], minlength=data.size) > 0
    o_found, o_lo, _ = own.find(seq[data] * total + rc[data])
    covered |= o_found & (o_lo < pos[data])
    if covered.all():
        return []
    late_at = np.full(data.size, -1, dtype=np.int64)
    late_at[which[later]] = hi[later]
    bad = np.flatnonzero(~covered)
    rows = ro[data[bad]]
    order_fault = (rk[data[bad]] == Kind.DEPEND) & (late_at[bad] >= 0)
    found_list: dict[Category, list[Finding]] = {Category.COVERAGE: [], Category.ORDER: []}
    # one finding a reading sequence (a CTA or an item) and kind, at its first such read
    group = acc.op_seq[rows] * 2 + order_fault
    _, first, inverse = np.unique(group, return_index=True, return_inverse=True)
    for k in np.argsort(first, kind="stable"):
        i = int(bad[first[k]])
        row, gid = int(ro[data[i]]), int(rc[data[i]])
        mine = inverse == k
        n_cells = np.unique(rc[data[bad[mine]]]).size
        n_ops = np.unique(rows[mine]).size
        more = (f" and {n_cells - 1} more cells" if n_cells > 1 else "") + (
            f" (in {n_ops} ops, up to op {int(acc.op_pos[rows[mine]].max())})" if n_ops > 1 else ""
        )
        put_by = namer.site(int(writer[gid]))
        flag = int(acc.guard[gid])
        flagged = f" (flagged by {namer.cell(int(acc.ops[flag].cells[0]))})" if flag >= 0 else ""
        details = {
            **namer.cell_details(gid),
            "reader": namer.site_details(row),
            "writer": namer.site_details(int(writer[gid])),
            "polled_at": int(late_at[i]) if late_at[i] >= 0 else None,
            "cells": int(n_cells),
            "ops": int(n_ops),
        }
        if order_fault[first[k]]:
            found_list[Category.ORDER].append(
                Finding(
                    Category.ORDER,
                    Severity.FAIL,
                    f"{namer.site(row)} puts a value computed from {namer.cell(gid)}{more}, "
                    f"which it polls only later (op {int(late_at[i])}): the put is made "
                    f"before its input, put by {put_by}, arrived",
                    ORDER_FIX,
                    details,
                )
            )
        else:
            later_note = (
                f"; it polls it only later (op {int(late_at[i])})" if late_at[i] >= 0 else ""
            )
            found_list[Category.COVERAGE].append(
                Finding(
                    Category.COVERAGE,
                    Severity.FAIL,
                    f"{namer.site(row)} reads {namer.cell(gid)}{flagged}{more}, put by "
                    f"{put_by}, with no poll of it or its flag before: nothing orders the "
                    f"read after the put{later_note}",
                    COVERAGE_FIX,
                    details,
                )
            )
    out: list[Finding] = []
    for cat, fs in found_list.items():
        out += capped(fs, lambda m, c=cat: rest(c, Severity.FAIL, m, "reads"))
    return out


def _unread(acc: Accesses, namer: Namer, r: _Reads) -> list[Finding]:
    """Polled pairs whose data (the pair, or what its flag guards) is never read after."""
    total = acc.total
    rc, ro, rk, seq, pos = r.rc, r.ro, r.rk, r.seq, r.pos
    data = np.flatnonzero(rk != Kind.POLL)
    which, cand = _candidates(acc, rc[data])
    reads = _Index.of(seq[data[which]] * total + cand, pos[data[which]])
    reread = np.zeros(len(acc.ops), dtype=bool)
    reread[acc.reread] = True
    p = np.flatnonzero((rk == Kind.POLL) & ~reread[ro])
    found, _, hi = reads.find(seq[p] * total + rc[p])
    unread = p[~(found & (hi > pos[p]))]
    if not unread.size:
        return []
    rows = ro[unread]
    _, first, n = np.unique(rows, return_index=True, return_counts=True)
    fs = []
    for k in np.argsort(first, kind="stable"):
        row, gid = int(rows[first[k]]), int(rc[unread[first[k]]])
        more = f" and {int(n[k]) - 1} more pairs" if n[k] > 1 else ""
        fs.append(
            Finding(
                Category.UNREAD,
                Severity.ADVICE,
                f"{namer.site(row)} polls {namer.cell(gid)}{more} but never reads its data "
                "afterwards: a wait for nothing",
                UNREAD_FIX,
                {**namer.cell_details(gid), "poller": namer.site_details(row), "cells": int(n[k])},
            )
        )
    return capped(fs, lambda m: rest(Category.UNREAD, Severity.ADVICE, m, "polls"))
