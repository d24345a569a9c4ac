"""The counter ops of one CTA (atomics, waits on a predicate, resets, ticket loops), as
a part of :class:`kda_sim.engine.cta.CtaRun`; the words' state is
:class:`kda_sim.engine.words.Words`."""

from __future__ import annotations

import math
from collections.abc import Generator
from typing import TYPE_CHECKING, Any

from kda_sim.engine.initial import StaleWait
from kda_sim.engine.words import Waiting, Write
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.counters import Atomic, AtomicKind, Reset, Wait
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.tickets import TakeAhead, TicketLoop
from kda_sim.timeline.model import CellRange, PollRecord, PutRecord

if TYPE_CHECKING:
    from kda_sim.engine.cta import CtaRun


class CounterOps:
    # counter -> (issue time, the take issued ahead of it, in flight or returned) that the
    # CTA's next take of that counter waits for (TakeAhead); None until the CTA issues one
    taken_ahead: dict[int, tuple[float, Any]] | None = None

    def words_op(self: CtaRun, k: int, op: Any, t: float) -> Generator[Any, Any, float]:
        """Run counter op ``op`` (op ``k``) from the CTA's own time ``t``; its time after."""
        # every word is in its region: checked once, when the hand-offs were derived
        if isinstance(op, Atomic):
            if self.taken_ahead and op.cell in self.taken_ahead:
                old, _issue, _ret, t = yield from self._wait_ahead(op.cell, t)
            else:
                old = yield from self._atomic(op.region, op.cell, op, t)
                t = self.w.env.now
            if op.into:
                self.regs[op.into] = old
            return t + (self.w.sampler.latency(op.then) if op.then else 0.0)
        if isinstance(op, TakeAhead):
            self._take_ahead(op, t)
            return t
        if isinstance(op, Wait):
            return (yield from self._wait(op, t))
        if isinstance(op, Reset):
            for cell in op.cells:
                self._reset(op.region, cell, t)
            return t
        if isinstance(op, ResetPairs):
            self._reset_pairs(op, t)
            return t
        if isinstance(op, OnOld):  # the branch the old value in its register picks
            for sub in op.taken(self.regs):
                t = yield from self.words_op(k, sub, t)
            return t
        assert isinstance(op, TicketLoop)
        return (yield from self._tickets(k, op, t))

    def _record(self: CtaRun, region: int, cell: int, at: float) -> int:
        """A write of a word, in the track's puts (the timeline's hand-off sources)."""
        space = self.w.handoffs.launch.space
        name = space.name(region)
        self.track.puts.append(
            PutRecord(self.stage, self.task, name, 1, cell - space.offsets[region], at)
        )
        return len(self.track.puts) - 1

    def _atomic(
        self: CtaRun, region: int, cell: int, op: Atomic, t: float
    ) -> Generator[Any, Any, int]:
        """Issue at ``t``; serialized in arrival order (the clock reaches each arrival in
        order); the old value returns half a round trip after its serialization."""
        w = self.w
        env = w.env
        half = w.sampler.latency("atomic") / 2
        arrive = t + half
        if arrive > env.now:
            yield env.timeout(arrive - env.now)
        words = w.words
        s = words.arrive(cell, self.xcd, env.now)
        old = words.value.get(cell, 0)
        new = op.new(old)
        if new is not None:
            if words.initial and op.kind is not AtomicKind.ADD:
                words.rebased.add(cell)  # its value no longer counts from the initial one
            words.write(
                cell, new, Write(s, new, self.xcd, self.prog.cta, self._record(region, cell, s))
            )
        yield env.timeout(s + half - env.now)
        return old

    def _take_ahead(self: CtaRun, op: TakeAhead, t: float) -> None:
        """Issue the take at ``t`` as a process of its own: the CTA runs on; the return
        (the ticket and its time) is the process's value."""
        w = self.w
        take = Atomic(op.region, op.cell, AtomicKind.ADD, 1)

        def take_it() -> Generator[Any, Any, tuple[int, float]]:
            item = yield from self._atomic(op.region, op.cell, take, t)
            return item, w.env.now

        if self.taken_ahead is None:
            self.taken_ahead = {}
        self.taken_ahead[op.cell] = (t, w.env.process(take_it()))

    def _wait_ahead(self: CtaRun, cell: int, t: float) -> Generator[Any, Any, tuple]:
        """The take issued ahead of counter ``cell``, waited for from the CTA's own time
        ``t``: (its ticket, its issue, its return, the CTA's time once both it and the CTA
        are there: the later of its return and ``t``), the clock brought there."""
        assert self.taken_ahead is not None
        issue, proc = self.taken_ahead.pop(cell)
        if not proc.triggered:
            yield proc
        item, ret = proc.value
        t = max(t, ret)
        if t > self.w.env.now:
            yield self.w.env.timeout(t - self.w.env.now)
        return item, issue, ret, t

    def _reset(self: CtaRun, region: int, cell: int, t: float) -> None:
        w = self.w
        cta, xcd = self.prog.cta, self.xcd
        stage, task = self.stage, self.task

        def land(_ev: object) -> None:
            s = w.words.arrive(cell, xcd, w.env.now)
            space = w.handoffs.launch.space
            self.track.puts.append(
                PutRecord(stage, task, space.name(region), 1, cell - space.offsets[region], s)
            )
            w.words.rebased.add(cell)
            w.words.write(cell, 0, Write(s, 0, xcd, cta, len(self.track.puts) - 1))

        delay = max(0.0, t + w.sampler.latency("atomic") / 2 - w.env.now)
        w.env.timeout(delay).callbacks.append(land)
        self.resets_land = max(self.resets_land, w.env.now + delay)

    def _reset_pairs(self: CtaRun, op: ResetPairs, t: float) -> None:
        """The stores land half an atomic's round trip after ``t``: from then on the pairs
        hold no tag (a stale one an earlier launch left no longer passes a poll), and the
        launch leaves them so unless it puts them again later."""
        w = self.w
        cta, stage, task = self.prog.cta, self.stage, self.task
        space = w.handoffs.launch.space

        name, first = space.name(op.region), space.offsets[op.region]

        def land(_ev: object) -> None:
            now = w.env.now
            for cell in op.cells:
                w.pair_resets[cell] = (now, cta)
                self.track.puts.append(PutRecord(stage, task, name, 1, cell - first, now))
            if w.tagged:
                w.tagged = w.tagged - frozenset(op.cells)

        delay = max(0.0, t + w.sampler.latency("atomic") / 2 - w.env.now)
        w.env.timeout(delay).callbacks.append(land)
        self.resets_land = max(self.resets_land, w.env.now + delay)

    def _wait(self: CtaRun, op: Wait, t0: float) -> Generator[Any, Any, float]:
        """Tries as a poll's: the first issued at ``t0``, each later one after the previous
        returned and the retry sleep; a try passes when the value it reads satisfies the
        predicate. Tries that cannot read a newer write are skipped, not simulated. Unlike
        a poll's, the first try is not held behind the CTA's outstanding loads or stores."""
        w = self.w
        env = w.env
        words = w.words
        cta, xcd = self.prog.cta, self.xcd
        space = w.handoffs.launch.space
        index = op.cell - space.offsets[op.region]
        target = op.value + (self.regs.get(op.plus, 0) if op.plus else 0)
        rec = PollRecord(
            self.stage,
            self.task,
            op.label,
            1,
            1,
            t0,
            None,
            None,
            cells=[CellRange(space.name(op.region), index, index, 1)],
        )
        self.track.polls.append(rec)
        if t0 > env.now:
            yield env.timeout(t0 - env.now)
        lat = w.sampler.latency("poll")
        period = lat + w.sampler.latency("retry")
        # folded and nominal: woken only by a write that can change the next try (Words)
        watch = w.fold and words.bisect
        n, at = 0, t0  # the try and its issue
        while True:
            seen, src, nxt = words.seen(op.cell, cta, xcd, at)
            if op.pred.holds(seen, target):
                break
            words.waiting[cta] = Waiting(op, target, seen, self.item)
            changed = None if watch else words.change(op.cell)
            if nxt == math.inf:
                # nothing newer is written yet
                yield words.watch(op.cell, cta, xcd, nxt) if changed is None else changed
                continue
            # the first try (on the grid t0 + m * period) that reads the newer write
            m = max(n + 1, math.ceil((nxt - t0) / period))
            nxt_at = t0 + m * period
            if nxt_at > env.now:
                if changed is None:
                    changed = words.watch(op.cell, cta, xcd, nxt)
                yield changed | env.timeout(nxt_at - env.now)
                if env.now < nxt_at:  # another write came first: it may be seen earlier
                    continue
            n, at = m, nxt_at
        words.waiting.pop(cta, None)
        if watch:
            words.unwatch(op.cell, cta)
        satisfied = at + lat
        if satisfied > env.now:
            yield env.timeout(satisfied - env.now)
        rec.satisfied = satisfied
        rec.retries = n
        if src is not None:
            rec.producer, rec.put_time, rec.put_ref = src.cta, src.at, src.rec
        if words.initial and words.early(op.cell, seen, op.pred, target, src is None):
            words.stale.append(StaleWait(cta, op.label, op.cell, seen, satisfied))
        return satisfied

    def _tickets(self: CtaRun, k: int, op: TicketLoop, t: float) -> Generator[Any, Any, float]:
        from kda_sim.engine.cta import op_kinds

        take = Atomic(op.region, op.cell, AtomicKind.ADD, 1)
        self.loop = self.w.handoffs.loops[op.cell]
        # while in the loop the CTA computes what its items do (its unit's sharing, _share)
        self.loop_computes = self.w.loop_computes(op)
        copy = 0  # which copy of the item code this CTA's next item runs
        while True:
            if self.taken_ahead and op.cell in self.taken_ahead:
                # its first turn: the take issued ahead, its round trip overlapped with
                # the ops since; the item starts once both it and the CTA are here
                item, issue, ret, t = yield from self._wait_ahead(op.cell, t)
            else:
                issue = t
                item = yield from self._atomic(op.region, op.cell, take, t)
                t = ret = self.w.env.now
            self.w.ticket_takes.append([self.prog.cta, issue, ret, item])
            if item >= op.n_items:
                self.item = self.loop = -1
                self.loop_computes = frozenset()
                self.w.current_item.pop(self.prog.cta, None)
                if item == op.last_ticket:  # every taker has seen the queue empty
                    self._reset(op.region, op.cell, t)
                    for clear in op.clears:
                        for cell in clear.cells:
                            self._reset(clear.region, cell, t)
                return t
            self.regs[op.into] = self.item = item
            t += self.w.sampler.latency("ticket_item")  # the item's prologue
            body = op.bodies[item]
            # an unrolled copy (1 .. unrolled) runs its code the first time here
            cold = 0 < copy <= op.unrolled
            copy += 1
            t = yield from self.run(body, op_kinds(body), t, k, cold=cold)
