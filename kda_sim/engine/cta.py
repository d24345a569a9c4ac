"""One CTA's program run as a SimPy process on the machine model."""

from __future__ import annotations

import weakref
from collections.abc import Generator
from functools import cached_property
from typing import Any

import simpy
from simpy.events import PENDING, Event, Timeout

from kda_sim.engine.counter_ops import CounterOps
from kda_sim.engine.plans import poll_plan, put_fields
from kda_sim.engine.world import PutDone, StaleRead, World
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.ops import (
    Atomic,
    Barrier,
    Begin,
    Compute,
    End,
    Load,
    LoadKind,
    Poll,
    Publish,
    Put,
    Reset,
    Store,
    TicketLoop,
    Use,
    Wait,
)
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.program import CtaProgram
from kda_sim.protocol.tickets import item_ref
from kda_sim.timeline.model import CellRange, CtaTrack, LoadSpan, PollRecord, PutRecord, StageSpan

_WEIGHT = LoadKind.WEIGHT
_WEIGHT_KIND = LoadKind.WEIGHT.value  # a LoadSpan's kind (an enum lookup a span cost)


class Pending:
    """A load in flight: an HBM load ends on an event (its share of bandwidth depends on
    what else streams); an L2 load's end is known when it issues, so it costs no event.
    An HBM load's span gets its ``done`` in the callback that triggers its event, so
    ``span.done is not None`` is "triggered" for it (the engine's scans test only that)."""

    __slots__ = ("event", "span")

    def __init__(self, event: simpy.Event | None, span: LoadSpan) -> None:
        self.event = event
        self.span = span

    def done_by(self, now: float) -> bool:
        done = self.span.done
        return done is not None and (self.event is not None or done <= now)


class CtaRun(CounterOps):
    """Runs ``prog`` on unit ``unit`` of XCD ``xcd``; records into ``track``."""

    def __init__(self, world: World, prog: CtaProgram, unit: int, xcd: int) -> None:
        self.w = world
        self.prog = prog
        self.unit = unit
        self.xcd = xcd
        self.track: CtaTrack = world.tracks[prog.cta]
        self.loads: dict[str, Pending] = {}
        self.inflight: dict[str, Pending] = {}  # the loads not yet seen done by a poll
        self.held: dict[str, Load] = {}  # streamed weights: issued at their Use
        self.stores: list[simpy.Event] = []  # acks not yet seen (pruned as they land)
        self._put_fields = put_fields(world.handoffs)
        self.stage = ""
        self.task = -1
        self.open: StageSpan | None = None
        self.regs: dict[str, int] = {}  # registers the counter ops write and read
        self.item = -1  # the ticket whose body runs, -1 none
        # the stage costs the ticket loop it runs now computes (its items'), empty outside
        self.loop_computes: frozenset[str] = frozenset()
        self.loop = -1  # the number of the loop whose body runs (handoffs.loops), -1 none

    # -- loads and stores ---------------------------------------------------------------
    def _hbm_load(self, op: Load, span: LoadSpan) -> simpy.Event:
        """Latency, then the shared transfer; callbacks, not a process, to keep the event
        count down."""
        w = self.w
        env = w.env
        hbm, nbytes = w.hbm, op.nbytes
        ev = Event(env)

        def done(_ev: object) -> None:
            span.done = env._now
            ev.succeed()

        def start(_ev: object) -> None:
            hbm.transfer(nbytes).callbacks.append(done)

        delay = span.issue - env._now + w.sampler.latency("hbm_load")
        Timeout(env, delay).callbacks.append(start)
        return ev

    def _issue(self, op: Load, t: float) -> None:
        """Issue at the CTA's own time ``t`` (it may run ahead of the clock: see run)."""
        w = self.w
        # ``_value_`` is what ``.value`` returns, without the enum's property lookup
        span = LoadSpan(op.name, op.kind._value_, op.nbytes, t, None, self.stage, self.task)
        self.track.loads.append(span)
        if op.hbm:
            pending = Pending(self._hbm_load(op, span), span)
        else:
            span.done = t + w.sampler.latency("l2_load") + op.nbytes / w.prof.unit_bytes_per_ns
            pending = Pending(None, span)
        self.loads[op.name] = self.inflight[op.name] = pending

    def _check_flagged(self, op: Load) -> None:
        now = self.w.env.now
        for cell in op.reads:
            vis = self.w.data_visible.get(cell)
            if vis is None or vis > now:
                self.w.stale_reads.append(
                    StaleRead(
                        self.prog.cta,
                        self.stage,
                        now,
                        self.w.data_writer.get(cell, -1),
                        float("inf") if vis is None else vis,
                        cell,
                    )
                )

    def _store(self, op: Store, t: float) -> None:
        """A plain store is acknowledged (and visible at device scope) after its latency and
        its share of HBM; a drain waits for every ack."""
        w = self.w
        env = w.env
        hbm, nbytes = w.hbm, op.nbytes
        ev = Event(env)
        self.stores.append(ev)
        cta = self.prog.cta

        def acked(_ev: object) -> None:
            now = env._now
            visible, writer = w.data_visible, w.data_writer
            for cell in op.cells:
                visible[cell] = now
                writer[cell] = cta
            ev.succeed()

        def start(_ev: object) -> None:
            hbm.transfer(nbytes).callbacks.append(acked)

        Timeout(env, t - env._now + w.sampler.latency("store_ack")).callbacks.append(start)

    def _unacked(self) -> list[simpy.Event]:
        """The stores not acknowledged yet; an ack once in stays in, so the rest are
        dropped from later scans."""
        self.stores = [e for e in self.stores if e._value is PENDING]
        return self.stores

    def _outstanding(self, t: float) -> list[Pending]:
        """The loads not done by ``t``. The CTA's polls ask at times that never go back
        and a load once done stays done, so the ones done are dropped from the scan."""
        inflight = self.inflight
        gone = [n for n, p in inflight.items() if p.done_by(t)]
        for n in gone:
            del inflight[n]
        return list(inflight.values())

    def _wait_loads(self, pending: list[Pending]) -> Generator[Any, Any, None]:
        env = self.w.env
        events = [p.event for p in pending if p.event is not None and p.span.done is None]
        if events:
            yield _all(env, events)
        until = 0.0  # the last L2 load's end (max() over a generator cost more)
        for p in pending:
            if p.event is None and (p.span.done or 0.0) > until:
                until = p.span.done or 0.0
        if until > env._now:
            yield Timeout(env, until - env._now)

    # -- hand-offs ----------------------------------------------------------------------
    def _ref(self, k: int) -> tuple[int, int]:
        """The hand-off reference of op ``k`` of what runs now: the program's, or the body
        of the item taken (``self.loop``, ``self.item``)."""
        if self.loop < 0:
            return self.prog.cta, k
        return item_ref(self.loop, self.item, k)

    def _put(self, k: int, op: Put | Publish, t: float) -> None:
        """A put at the CTA's own time ``t``, which may be ahead of the clock: a poller
        that looks before ``t`` computes its pairs' visibility from ``t`` all the same, and
        a waiting one is woken at ``t``."""
        w = self.w
        env = w.env
        ref = self._ref(k)
        fields = self._put_fields.get(ref)
        if fields is None:
            space = w.handoffs.launch.space
            first = int(op.cells[0]) - space.offsets[op.region] if len(op.cells) else -1
            fields = self._put_fields[ref] = (space.name(op.region), len(op.cells), first)
        name, n, first = fields
        self.track.puts.append(PutRecord(self.stage, self.task, name, n, first, t))
        w.put_done[ref] = PutDone(t, self.xcd, len(self.track.puts) - 1, self.prog.cta)
        ev = w.put_events.get(ref)  # made only once a poll waits on it: most never are
        if ev is not None:
            if t <= env._now:
                ev.succeed()
            else:
                Timeout(env, t - env._now).callbacks.append(lambda _e: ev.succeed())

    def _poll(self, k: int, op: Poll, t0: float) -> Generator[Any, Any, None]:
        """First issue at ``t0`` (the CTA's own time, possibly ahead of the clock)."""
        w = self.w
        env = w.env
        sampler = w.sampler
        outstanding = self._outstanding(t0)
        ref = self._ref(k)
        plan = poll_plan(w.handoffs, ref)
        rec = PollRecord(
            self.stage,
            self.task,
            op.label,
            plan.n_cells,
            plan.n_batches,
            t0,
            None,
            None,
            cells=[CellRange(c.region, c.first, c.last, c.count) for c in plan.ranges],
        )
        self.track.polls.append(rec)
        lat = sampler.latency("poll")
        first_return = t0 + lat
        if w.prof.in_order_loads and outstanding:
            # vmcnt retires in issue order: the poll's load returns behind every earlier one
            yield from self._wait_loads(outstanding)
            if env._now > first_return:  # max(), the first on a tie, without the call
                first_return = env._now
        if w.prof.stores_in_vmcnt:
            # gfx9 counts stores in vmcnt too: the poll's wait covers the wave's stores
            stores = self._unacked()
            if stores:
                yield _all(env, stores)
                if env._now > first_return:
                    first_return = env._now
        if w.tagged:  # a launch of a host sequence: some pairs may hold its tag already
            producers, unput = w.fresh(self.prog.cta, ref, op.label, op.cells, rec)
            key: object = producers
        else:
            producers, unput, key = plan.producers, plan.unput, plan.key
        if unput:
            yield w.never  # a pair nobody in this launch puts: waits forever
        joined = w.join(producers, key)
        if joined is not None:
            yield joined
        visible, last = t0, None
        if sampler.jitter:  # each pair's visibility drawn anew, in producer order
            put_done, vis, me = w.put_done, sampler.visibility, self.xcd
            for p in producers:
                done = put_done[p]
                t = done.time + vis(done.xcd, me)
                if t >= visible:
                    visible, last = t, p
        elif producers:
            latest, p = w.latest_visible(producers, key, self.xcd)
            if latest >= t0:
                visible, last = latest, p
        # tries: the first issued at t0; each later one after the previous returned and
        # the retry sleep; the first try issued once every pair is visible succeeds
        retry = sampler.latency("retry")
        if visible <= t0:
            tries, issue = 0, t0
        else:
            issue = first_return + retry
            tries = 1
            if issue < visible:
                period = lat + retry
                n = -(-(visible - issue) // period)
                issue += n * period
                tries += int(n)
        satisfied = issue + lat
        if first_return > satisfied:
            satisfied = first_return
        if satisfied > env._now:
            yield Timeout(env, satisfied - env._now)
        rec.satisfied = satisfied
        rec.retries = tries
        # loads still in flight at the first issue (known exactly now that time has passed)
        behind = [p.span for p in outstanding if p.span.done is None or p.span.done > t0]
        rec.behind_loads = len(behind)
        rec.behind_weight_bytes = sum(s.nbytes for s in behind if s.kind == _WEIGHT_KIND)
        if last is not None:
            done = w.put_done[last]
            rec.producer = done.cta
            rec.put_time = done.time
            rec.put_ref = done.put_index

    @cached_property
    def computes(self) -> frozenset[str]:
        """The stages this CTA's program computes (asked only where a unit is shared)."""
        return frozenset(op.cost for op in self.prog.ops if isinstance(op, Compute))

    def _share(self, key: str) -> float:
        """1 + unit_share where another CTA resident on this unit computes stage ``key``
        too (a stage of the profile's unit_shared), else 1. Known from the programs, not
        from who is computing at this instant: the CTAs that share a gemv stage start it
        within a poll of each other (all wait on the same XRDY flags). A ticket loop's
        items are in no program: a CTA computes what they compute while it runs the loop
        (from its first take to the one past the items), so two CTAs in the loop on one
        unit share it (docs/whatif/ticket_k1.md, "The model mended again")."""
        prof = self.w.prof
        if key not in prof.unit_shared or not prof.unit_share:
            return 1.0
        others = (r for r in self.w.resident[self.unit] if r is not self)
        shared = any(key in r.computes or key in r.loop_computes for r in others)
        return 1.0 + prof.unit_share if shared else 1.0

    # -- stages -------------------------------------------------------------------------
    def _begin(self, op: Begin, t: float) -> None:
        self.stage, self.task = op.stage, op.task
        self.open = StageSpan(op.stage, op.task, t, t)
        self.track.stages.append(self.open)

    def run(
        self,
        ops: tuple | None = None,
        kinds: tuple[int, ...] = (),
        t: float = 0.0,
        at: int = -1,
        cold: bool = False,
    ) -> Generator[Any, Any, float]:
        """The CTA keeps its own time ``t`` and runs ahead of the clock through compute,
        barriers, load and store issues and poll issues; it yields only where it must
        meet the clock (a put others may see, a read of flagged data, a wait), so a task
        costs a few events, not one an op.

        Without ``ops`` it runs the CTA's program, from dispatch to retirement; with them
        (a ticket loop's item, run by op ``at`` of the program) only those ops, from the
        CTA's own time ``t``, returning its time after them. One generator either way:
        the program's ops run without a delegating frame on every resume."""
        w = self.w
        env = w.env
        cta = self.prog.cta
        program = ops is None
        if program:
            self.track.start = t = env.now
            self.track.unit, self.track.xcd = self.unit, self.xcd
            w.resident.setdefault(self.unit, []).append(self)
            ops, kinds = self.prog.ops, _kinds(self.prog)
        sampler = w.sampler
        latency, cost_of = sampler.fixed()
        prof = w.prof
        streamed = prof.streamed_weights
        shared = prof.unit_shared if prof.unit_share else ()  # stages _share may scale
        held_by, loads = self.held, self.loads
        current_op = w.current_op
        wanted: float | None = None  # when the Use before this compute asked for its stream
        slot = -1  # the kda task slot now running
        looped = self.prog.looped_tasks  # a placed ticket loop: one copy of the task code
        for k, op in enumerate(ops):
            kind = kinds[k]
            if kind == _BARRIER:
                t += latency("barrier")
            elif kind == _BEGIN:
                if op.task >= 0 and op.task != self.task:
                    slot += 1  # a kda task begins: its slot on this CTA (0: the first)
                self._begin(op, t)
                # the stage's code runs here for the first time (``cold``: a ticket item
                # in an unrolled copy of the task code)
                if (slot > 0 and not looped) or cold:
                    t += latency("cold_code")
            elif kind == _END:
                if self.open is not None:
                    self.open.end = t
                self.open = None
            elif kind == _COMPUTE:
                cost = cost_of(op.cost, op.units)
                if op.cost in shared:
                    cost *= self._share(op.cost)
                if wanted is None:
                    t += cost
                else:  # the compute ran alongside the stream it waited for
                    if wanted + cost > t:
                        t = wanted + cost
                    wanted = None
            elif kind == _STORE:
                self._store(op, t)
            elif kind == _LOAD:
                if streamed and op.kind is _WEIGHT:
                    held_by[op.name] = op
                else:
                    self._issue(op, t)
            elif kind == _PUT:
                self._put(k, op, t)
            else:
                current_op[cta] = k if program else at
                if not program:  # a ticket item's op: the stuck report reads it
                    w.current_item[cta] = (at, self.item, k)
                if kind == _POLL:
                    yield from self._poll(k, op, t)
                    t = env._now
                elif kind == _USE:
                    if held_by:
                        held = [held_by.pop(n) for n in op.names if n in held_by]
                        for ld in held:
                            self._issue(ld, t)
                        wanted = t if held else None
                    else:
                        wanted = None
                    pending = [p for p in map(loads.__getitem__, op.names) if not p.done_by(t)]
                    if pending:
                        yield from self._wait_loads(pending)
                    if env._now > t:
                        t = env._now
                elif kind >= _ATOMIC:  # counter and flag words, ticket loops
                    t = yield from self.words_op(k, op, t)
                else:
                    if t > env._now:  # meet the clock: flagged data is read, a flag drained
                        yield Timeout(env, t - env._now)
                    if kind == _FLAGGED:
                        self._issue(op, t)
                        self._check_flagged(op)
                    elif op.drain:  # a publish
                        pending = self._unacked()
                        if pending:
                            yield _all(env, pending)
                        yield Timeout(env, latency("barrier"))
                    t = env._now
                    if kind == _PUBLISH:
                        self._put(k, op, t)
        if not program:
            return t
        if t > env._now:
            yield Timeout(env, t - env._now)
        # the CTA's last stores must land before it retires
        pending = self._unacked()
        if pending:
            yield _all(env, pending)
        current_op.pop(cta, None)
        w.resident[self.unit].remove(self)
        self.track.end = env._now
        return t


(_COMPUTE, _BARRIER, _BEGIN, _END, _STORE, _LOAD, _PUT, _POLL, _USE, _FLAGGED, _PUBLISH) = range(11)
# counter ops (and pair resets, plain stores the CTA does not wait for): kinds >= _ATOMIC
_ATOMIC, _WAIT, _RESET, _TICKETS, _ON_OLD, _RESET_PAIRS = range(11, 17)
_KIND_OF = {
    ResetPairs: _RESET_PAIRS,
    OnOld: _ON_OLD,
    Atomic: _ATOMIC,
    Wait: _WAIT,
    Reset: _RESET,
    TicketLoop: _TICKETS,
    Compute: _COMPUTE,
    Barrier: _BARRIER,
    Begin: _BEGIN,
    End: _END,
    Store: _STORE,
    Load: _LOAD,
    Put: _PUT,
    Poll: _POLL,
    Use: _USE,
    Publish: _PUBLISH,
}
_KINDS: dict[int, tuple[int, ...]] = {}


def _kinds(prog: CtaProgram) -> tuple[int, ...]:
    """Each op's kind as a small int (an int compare beats a chain of isinstance calls
    in the engine's innermost loop); cached while the program lives."""
    key = id(prog)
    hit = _KINDS.get(key)
    if hit is None:
        hit = op_kinds(prog.ops)
        _KINDS[key] = hit
        weakref.finalize(prog, _KINDS.pop, key, None)
    return hit


def op_kinds(ops: tuple) -> tuple[int, ...]:
    kind_of, flagged = _KIND_OF, LoadKind.FLAGGED
    out = []
    for op in ops:
        kind = kind_of.get(type(op))
        if kind == _LOAD and op.kind is flagged:
            kind = _FLAGGED
        elif kind is None:  # not an op type itself: a flagged load's subclass, else unknown
            kind = _FLAGGED if isinstance(op, Load) and op.kind is flagged else _KIND_OF[type(op)]
        out.append(kind)
    return tuple(out)


def _all(env: simpy.Environment, events: list[simpy.Event]) -> simpy.Event:
    return events[0] if len(events) == 1 else simpy.AllOf(env, events)
