"""Tags from the programs: each CTA's put and poll expressions, per hand-off.

Where a kernel's ops carry tag expressions (:mod:`kda_sim.protocol.tagexpr`), the tag each
CTA writes and each poll waits for is read from the program, not assumed from the scheme.
Every expression is read under the scheme asked about (:func:`exprs.under`); one that then
differs from the scheme's is a fault of the CTA that carries it, and every hand-off it
takes part in is evaluated, with the epoch values the host sequence gives:

- *never accepted* (a hang): in one launch, the pair a CTA puts and the tag the poll of
  that pair waits for differ at some epoch and slot;
- *stale pass*: a poll of launch n + 1 waits for the tag launch n left in its pair (an
  earlier slot of the same step, at the same epoch; the last slot of the step before,
  at the epoch before it; or the cleared value 0 where the scratch is zeroed before
  each step). A pair no launch of the step before wrote is the step model's (runs of
  steps of other shapes, never written since allocation).

The host sequence: the launches of a step share its epoch; the next step reads the
counter one higher (wrapping at the integer), or the same with a frozen epoch
(``FrozenEpoch``: at the value given, else at every value); a CTA that reads the
*captured* epoch reads, in the step after the graph was captured, the epoch before it.

Hand-offs whose put and poll both compute the scheme's expression are the step model's
(:mod:`kda_sim.checks.tags.analysis`): it answers them over every epoch and over runs of
steps of other shapes, which the programs of one launch cannot see. Expressions that
differ are compared at every epoch where their arithmetic can change: the first steps of
the run, and each side of every multiple of each modulus and of the integer's ends
(``_epochs``); each witness is evaluated exactly, as the device computes it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from functools import cached_property

import numpy as np

from kda_sim.checks.dataflow.naming import MAX_SHOWN, Namer
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.tags.device import wrap
from kda_sim.checks.tags.exprs import repair, under, value
from kda_sim.checks.tags.footprint import ProgramSteps
from kda_sim.checks.tags.schemes import CLEARED, FrozenEpoch, TagScheme
from kda_sim.protocol.access import Accesses, Kind, accesses
from kda_sim.protocol.ops import Poll, Publish, Put
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tagexpr import EpochWord, TagExpr
from kda_sim.protocol.tickets import TicketLoop

NONE = -1  # no expression / no writer at an address


# carried() of the launches last asked about, by identity (a launch is immutable; K1's
# are cached where they are built, so a step model asks about the same ones again)
_CARRIED: dict[int, tuple[Launch, frozenset[TagExpr | None]]] = {}
_CARRIED_MAX = 64


def carried(launch: Launch) -> frozenset[TagExpr | None]:
    """Every tag expression the launch's puts, flags and polls carry (None: an op that
    says none)."""
    got = _CARRIED.get(id(launch))
    if got is not None and got[0] is launch:
        return got[1]
    out = _carried(launch)
    if len(_CARRIED) >= _CARRIED_MAX:
        _CARRIED.pop(next(iter(_CARRIED)))
    _CARRIED[id(launch)] = (launch, out)
    return out


def _carried(launch: Launch) -> frozenset[TagExpr | None]:
    out: set[TagExpr | None] = set()
    for p in launch.programs:
        for op in p.ops:
            if isinstance(op, Put | Publish | Poll):
                out.add(op.tag)
            elif isinstance(op, TicketLoop):
                for body in op.bodies:
                    out.update(o.tag for o in body if isinstance(o, Put | Publish | Poll))
    return frozenset(out)


@dataclass
class _LaunchPairs:
    """One launch's hand-offs at buffer addresses, with their expressions (ids into the
    check's table of effective expressions)."""

    acc: Accesses
    namer: Namer
    w_addr: np.ndarray  # one row a pair put (Put or Publish)
    w_expr: np.ndarray
    w_row: np.ndarray  # the op's row in ``acc``
    w_cell: np.ndarray
    r_addr: np.ndarray  # one row a pair polled
    r_expr: np.ndarray
    r_row: np.ndarray
    r_cell: np.ndarray
    size: int  # addresses spanned (max + 1)

    @cached_property
    def wmap(self) -> np.ndarray:
        """Per address, the expression of its put (NONE: not put in this launch)."""
        out = np.full(self.size, NONE, dtype=np.int64)
        out[self.w_addr] = self.w_expr
        return out

    @cached_property
    def wfirst(self) -> np.ndarray:
        """Per address, the write row (index into ``w_*``) of its put (-1: none)."""
        out = np.full(self.size, -1, dtype=np.int64)
        out[self.w_addr[::-1]] = np.arange(self.w_addr.size)[::-1]
        return out


@dataclass
class _Check:
    steps: ProgramSteps
    scheme: TagScheme
    shapes: tuple[str, ...]
    nb: tuple[int, ...]
    policy_zeroed: bool
    epoch0: int
    every: bool = False  # evaluate hand-offs of the scheme's expression on both sides too
    table: list[TagExpr] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.table = [self.scheme.expr]  # id 0: the scheme's
        self._ids: dict[TagExpr | None, int] = {}

    @property
    def frozen(self) -> bool:
        return isinstance(self.scheme, FrozenEpoch)

    def eff(self, expr: TagExpr | None) -> int:
        """The id of ``expr`` read under the scheme."""
        got = self._ids.get(expr)
        if got is None:
            base = self.scheme.base.name if isinstance(self.scheme, FrozenEpoch) else None
            e = under(expr, self.steps.shipped, self.scheme.expr, base or self.scheme.name)
            if self.frozen:
                # the whole graph runs at the captured epoch: both words read it
                e = replace(e, word=EpochWord.STEP)
            if e not in self.table:
                self.table.append(e)
            got = self._ids[expr] = self.table.index(e)
        return got

    # -- the host sequence -----------------------------------------------------------------
    def prev(self, epoch: int) -> int:
        return epoch if self.frozen else wrap(epoch - 1, self.scheme.bits)

    def captured(self, epoch: int) -> int:
        """The captured epoch a launch at ``epoch`` reads: frozen, the epoch itself; else
        the graph was captured the step before (its first replay)."""
        return self.prev(epoch)

    def _epochs(self, ids: tuple[int, ...], after: bool) -> list[int]:
        """The reader epochs to try, earliest from ``epoch0`` first (``after``: from the
        step after it, where the scenario needs a step, or a captured graph, before)."""
        bits = self.scheme.bits
        if isinstance(self.scheme, FrozenEpoch) and self.scheme.captured is not None:
            return [self.scheme.captured]
        mods = {1 << (bits - 1)} | {
            1 << self.table[i].epoch_bits for i in ids if self.table[i].epoch_bits is not None
        }
        lags = {self.table[i].lag for i in ids}
        near = range(-3 - max(lags), 4 + max(lags))
        cand = {self.epoch0 + d for d in range(4)}
        cand |= {j * m + d for m in mods for j in range(-2, 3) for d in near}
        start = self.epoch0 + (1 if after and not self.frozen else 0)
        return sorted({wrap(e, bits) for e in cand}, key=lambda e: (e - start) % (1 << bits))

    def reads_captured(self, ids: tuple[int, ...]) -> bool:
        return any(self.table[i].word is EpochWord.CAPTURED for i in ids if i != NONE)

    # -- witnesses ------------------------------------------------------------------------
    def mismatch(self, w: int, r: int, slots: list[int]) -> tuple[int, int, int, int] | None:
        """(epoch, slot, put tag, awaited tag) where put ``w`` and poll ``r`` of one launch
        differ, or None."""
        we, re_ = self.table[w], self.table[r]
        for e in self._epochs((w, r), self.reads_captured((w, r))):
            c = self.captured(e)
            for s in slots:
                tw, tr = value(we, e, s, c), value(re_, e, s, c)
                if tw != tr:
                    return e, s, tw, tr
        return None

    def collision(
        self, w: int, r: int, ws: int, rs: int, next_step: bool
    ) -> tuple[int, int, int] | None:
        """(reader epoch, writer epoch, tag) at which the poll ``r`` of slot ``rs`` waits
        for the tag put ``w`` left in slot ``ws`` (of the same step, or of the step before),
        or None. ``w`` NONE: the cleared value."""
        re_ = self.table[r]
        ids = (r,) if w == NONE else (w, r)
        for e in self._epochs(ids, next_step or self.reads_captured(ids)):
            c = self.captured(e)
            tr = value(re_, e, rs, c)
            ew = self.prev(e) if next_step else e
            tw = CLEARED if w == NONE else value(self.table[w], ew, ws, c)
            if tw == tr:
                return e, ew, tr
        return None


def _pairs(chk: _Check, launch: Launch, addr_of: Callable[[Launch], np.ndarray]) -> _LaunchPairs:
    acc = accesses(launch)
    op_expr = np.fromiter(
        (chk.eff(op.tag) if isinstance(op, Put | Publish | Poll) else NONE for op in acc.ops),
        dtype=np.int64,
        count=len(acc.ops),
    )
    addr = addr_of(launch)
    wk = (acc.w_kind == Kind.PUT) | (acc.w_kind == Kind.PUBLISH)
    w_cell, w_row = acc.w_cell[wk], acc.w_op[wk]
    rk = acc.r_kind == Kind.POLL
    r_cell, r_row = acc.r_cell[rk], acc.r_op[rk]
    w_addr, r_addr = addr[w_cell], addr[r_cell]
    wk2, rk2 = w_addr >= 0, r_addr >= 0
    return _LaunchPairs(
        acc,
        Namer(acc, launch.cfg),
        w_addr[wk2],
        op_expr[w_row[wk2]],
        w_row[wk2],
        w_cell[wk2],
        r_addr[rk2],
        op_expr[r_row[rk2]],
        r_row[rk2],
        r_cell[rk2],
        int(addr.max(initial=-1)) + 1,
    )


def program_findings(
    steps: ProgramSteps,
    scheme: TagScheme,
    shapes: tuple[str, ...],
    nb: tuple[int, ...],
    *,
    zeroed: bool,
    epoch0: int = 0,
    every: bool = False,
) -> list[Finding]:
    """The hangs and stale passes the programs' expressions make in steps of ``shapes``
    (any order) whose slot s has ``nb[s]``. Without ``every``, nothing is evaluated where
    every expression is the kernel's shipped tag (or none): the step model answers for
    the scheme alone; ``every`` evaluates those hand-offs too (the tests compare the two)."""
    keys = [(a, v) for a in range(len(shapes)) for v in sorted(set(nb))]
    if not every and steps.carries is not None and steps.carries <= {steps.shipped, None}:
        return []  # the kernel's own programs: the scheme alone (the step model) decides
    launches = {k: steps.launch(*k) for k in keys}
    exprs = set().union(*(carried(la) for la in launches.values()))
    if not every and exprs <= {steps.shipped, None}:
        return []
    chk = _Check(steps, scheme, shapes, nb, zeroed, epoch0, every)
    lp = {k: _pairs(chk, la, steps.address) for k, la in launches.items()}
    size = max(p.size for p in lp.values())
    for p in lp.values():
        p.size = size
    out: list[_Hit] = []
    for (a, v), p in lp.items():
        out += _hangs(chk, a, v, p)
    for a in range(len(shapes)):
        out += _stale(chk, a, lp)
    return _report(chk, out)


@dataclass
class _Hit:
    kind: str  # "hang" or "stale"
    culprit: str  # "put", "poll" or "both"
    reader: _LaunchPairs
    r_index: int  # row into reader.r_*
    writer: _LaunchPairs | None  # None: the cleared value
    w_index: int
    w: int  # expression ids
    r: int
    epoch: int
    slot: int
    w_epoch: int
    w_slot: int
    tag: int  # the tag the put left (or 0)
    awaited: int
    where: str  # where the put was, in words (a hang: the step's shape)

    def key(self) -> tuple:
        """Findings of one culprit op site are one finding."""
        side, row = (
            (self.writer, self.writer.w_row[self.w_index])
            if self.culprit == "put" and self.writer is not None
            else (self.reader, self.reader.r_row[self.r_index])
        )
        seq = side.acc.seq_of(int(row))
        return (self.kind, self.culprit, seq.unit, side.acc.stage_of(int(row)))


def _culprit(chk: _Check, w: int, r: int) -> str:
    if w == 0 and r != 0:
        return "poll"
    if r == 0 and w not in (0, NONE):
        return "put"
    return "poll" if w in (0, NONE) else "both"


def _hangs(chk: _Check, a: int, v: int, p: _LaunchPairs) -> list[_Hit]:
    wr = p.wmap[p.r_addr]
    bad = np.flatnonzero((wr != NONE) & (wr != p.r_expr))
    if not bad.size:
        return []
    slots = [s for s, x in enumerate(chk.nb) if x == v]
    # one hand-off a culprit op: the put's row where the put differs, else the poll's
    w_row = p.w_row[p.wfirst[p.r_addr[bad]]]
    side = np.where(p.r_expr[bad] == 0, w_row, p.r_row[bad])
    trip = np.stack([wr[bad], p.r_expr[bad], side], 1)
    uniq, first = np.unique(trip, axis=0, return_index=True)
    out: list[_Hit] = []
    seen: dict[tuple[int, int], tuple[int, int, int, int] | None] = {}
    for (w, r, _row), i in zip(uniq.tolist(), first.tolist(), strict=True):
        if (w, r) not in seen:
            seen[(w, r)] = chk.mismatch(w, r, slots)
        got = seen[(w, r)]
        if got is None:
            continue
        e, s, tw, tr = got
        ri = int(bad[i])
        out.append(
            _Hit(
                "hang",
                _culprit(chk, w, r),
                p,
                ri,
                p,
                int(p.wfirst[p.r_addr[ri]]),
                w,
                r,
                e,
                s,
                e,
                s,
                tw,
                tr,
                chk.shapes[a],
            )
        )
    return out


def _stale(chk: _Check, a: int, lp: dict[tuple[int, int], _LaunchPairs]) -> list[_Hit]:
    """Stale passes of the readers of steps of shape ``a``: what the launch before left."""
    out: list[_Hit] = []
    n = len(chk.nb)
    k = len(chk.shapes)
    values = sorted(set(chk.nb))
    done: set[tuple] = set()
    # the last slot of a step with each nb: who left a pair for the next step
    lastb = {v: max(t for t in range(n) if chk.nb[t] == v) for v in values}
    for s in range(n):
        p = lp[(a, chk.nb[s])]
        # same step: the last earlier slot whose launch puts the address
        last = {v: max((t for t in range(s) if chk.nb[t] == v), default=-1) for v in values}
        pw = np.full(p.r_addr.size, NONE, dtype=np.int64)
        ps = np.full(p.r_addr.size, -1, dtype=np.int64)
        for v in sorted(values, key=lambda v: -last[v]):
            if last[v] < 0:
                continue
            wm = lp[(a, v)].wmap[p.r_addr]
            take = (ps < 0) & (wm != NONE)
            pw[take], ps[take] = wm[take], last[v]
        sources: list[tuple[np.ndarray, np.ndarray, np.ndarray, int | None]] = []
        sources.append((np.flatnonzero(ps >= 0), pw, ps, None))
        rest = ps < 0
        if chk.policy_zeroed:
            # zeroed before the step: a pair no earlier slot put holds the cleared value
            sources.append((np.flatnonzero(rest), np.full_like(pw, NONE), ps, -1))
        else:
            for b in range(k):
                bw = np.full(p.r_addr.size, NONE, dtype=np.int64)
                bs = np.full(p.r_addr.size, -1, dtype=np.int64)
                for v in sorted(values, key=lambda v: -lastb[v]):
                    wm = lp[(b, v)].wmap[p.r_addr]
                    take = rest & (bs < 0) & (wm != NONE)
                    bw[take], bs[take] = wm[take], lastb[v]
                sources.append((np.flatnonzero(bs >= 0), bw, bs, b))
        for idx, w_ids, w_slots, b in sources:
            if not idx.size:
                continue
            trip = np.stack([w_ids[idx], p.r_expr[idx], w_slots[idx]], 1)
            uniq, first = np.unique(trip, axis=0, return_index=True)
            for (w, r, ws), i in zip(uniq.tolist(), first.tolist(), strict=True):
                if not chk.every and r == 0 and w in (0, NONE):
                    continue  # the scheme's on both sides: the step model's question
                key = (a, s, w, r, ws, b)
                if key in done:
                    continue
                done.add(key)
                next_step = b is not None and b >= 0
                got = chk.collision(w, r, ws, s, next_step)
                if got is None:
                    continue
                e, ew, tag = got
                ri = int(idx[i])
                if b is None:
                    writer, where = lp[(a, chk.nb[ws])], f"slot {ws} of the same step"
                elif b == -1:
                    writer, where = None, "the scratch is zeroed before the step"
                else:
                    writer = lp[(b, chk.nb[ws])]
                    where = f"slot {ws} of the step before (a {chk.shapes[b]} step)"
                wi = -1 if writer is None else int(writer.wfirst[p.r_addr[ri]])
                out.append(
                    _Hit(
                        "stale",
                        _culprit(chk, w, r),
                        p,
                        ri,
                        writer,
                        wi,
                        w,
                        r,
                        e,
                        s,
                        ew,
                        int(ws),
                        tag,
                        tag,
                        where,
                    )
                )
    return out


def _report(chk: _Check, hits: list[_Hit]) -> list[Finding]:
    """One finding a culprit op site and kind, earliest epoch first; hangs, then stale
    passes, each kind's first :data:`MAX_SHOWN` shown and the rest counted."""
    seen: dict[tuple, _Hit] = {}
    period = 1 << chk.scheme.bits
    for h in sorted(hits, key=lambda h: (h.kind != "hang", (h.epoch - chk.epoch0) % period)):
        seen.setdefault(h.key(), h)
    out: list[Finding] = []
    for kind in ("hang", "stale"):
        found = [_finding(chk, h) for h in seen.values() if h.kind == kind]
        if len(found) > MAX_SHOWN:
            n = len(found) - MAX_SHOWN
            what = "never accepted" if kind == "hang" else "passing stale"
            more = Finding(
                found[0].category,
                Severity.FAIL,
                f"and {n} more CTA op{'s' if n > 1 else ''} whose tag differs from the "
                f"scheme's, {what} as above",
                "as for the ones above (--json holds the count)",
                {"more": n},
            )
            found = [*found[:MAX_SHOWN], more]
        out += found
    return out


def _finding(chk: _Check, h: _Hit) -> Finding:
    scheme = chk.table[0]
    rd = h.reader
    r_row = int(rd.r_row[h.r_index])
    r_cell = int(rd.r_cell[h.r_index])
    reader = rd.namer.site(r_row)
    cell = rd.namer.cell(r_cell)
    r_text = chk.table[h.r].text()
    if h.writer is not None and h.w_index >= 0:
        w_row = int(h.writer.w_row[h.w_index])
        writer = h.writer.namer.site(w_row)
        w_text = chk.table[h.w].text()
        w_site = h.writer.namer.site_details(w_row)
    else:
        writer, w_text, w_site = "", "", None
    cap = f", captured epoch {chk.captured(h.epoch)}" if chk.reads_captured((h.w, h.r)) else ""
    if h.kind == "hang":
        msg = (
            f"tag never accepted (from the programs): {writer} puts {cell} with tag "
            f"{w_text}; {reader} polls it for {r_text}. In slot {h.slot} of a {h.where} "
            f"step at epoch {h.epoch}{cap} the put writes {h.tag} and the poll waits for "
            f"{h.awaited}: the fresh pair is never accepted and the poll waits forever"
        )
        cat = Category.DEADLOCK
    else:
        held = (
            f"the cleared value 0 ({h.where})"
            if h.writer is None
            else f"tag {h.tag}, put by {writer} with {w_text} in {h.where} at epoch {h.w_epoch}"
        )
        msg = (
            f"stale pass (from the programs): {reader} polls {cell} for {r_text}, which is "
            f"{h.awaited} in slot {h.slot} at epoch {h.epoch}{cap}; the pair still holds "
            f"{held}: the poll passes on the old pair"
        )
        cat = Category.STALE
    if h.culprit == "put":
        bad, side, row = h.w, "put", writer
    else:
        bad, side, row = h.r, "poll", reader
    who = row.rsplit(", op", 1)[0]
    both = " (its put's tag differs too)" if h.culprit == "both" else ""
    msg += f". The {side} of {who} computes a tag other than the scheme's ({scheme.text()}){both}"
    fix = f"{who}'s {side}: {repair(chk.table[bad], scheme)} (the scheme: {scheme.text()})"
    culprit_site = w_site if side == "put" and w_site is not None else rd.namer.site_details(r_row)
    details = {
        "kind": h.kind,
        "culprit": side,
        "culprit_site": culprit_site,
        "cell": rd.namer.cell_details(r_cell),
        "reader": rd.namer.site_details(r_row),
        "writer": w_site,
        "put_tag": w_text or None,
        "poll_tag": r_text,
        "scheme_tag": scheme.text(),
        "epoch": h.epoch,
        "slot": h.slot,
        "writer_epoch": h.w_epoch if h.writer is not None else None,
        "writer_slot": h.w_slot if h.writer is not None else None,
        "tag": h.tag,
        "awaited": h.awaited,
    }
    return Finding(cat, Severity.FAIL, msg, fix, details)
