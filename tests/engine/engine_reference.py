"""The engine as it was before issue 40's first step (main at a55f362: ``cta.py``,
``bandwidth.py`` and the poll helpers of ``world.py``), kept as the reference the fast
engine must equal record for record (``test_fast_engine.py``). Slow on purpose: every
poll hashes its producer tuple, every load and store goes through ``_after`` closures,
cell ranges are computed a poll. Not product code; only the tests import it."""

from __future__ import annotations

import heapq
import itertools
import weakref
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import numpy as np
import simpy

from kda_sim.engine.counter_ops import CounterOps
from kda_sim.engine.world import PutDone, StaleRead, World
from kda_sim.machine.profile import KIB
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.handoffs import OpRef
from kda_sim.protocol.ops import (
    PAIR_BYTES,
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
from kda_sim.protocol.tickets import TakeAhead, item_ref
from kda_sim.timeline.model import CellRange, CtaTrack, LoadSpan, PollRecord, PutRecord, StageSpan


class ReferenceWorld(World):
    """The world's poll helpers as they were: joins and latest visibility keyed by the
    producer tuple itself, cell ranges computed with numpy each first time a launch."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.range_cache: dict[OpRef, list[CellRange]] = {}

    def join(self, producers: tuple[OpRef, ...]) -> simpy.Event | None:  # type: ignore[override]
        ev = self.joins.get(producers)
        if ev is not None:
            return None if ev.triggered else ev
        waiting = [self.put_event(p) for p in producers if p not in self.put_done]
        if not waiting:
            return None
        ev = self.joins[producers] = self.env.event()
        left = [len(waiting)]

        def one_more(_ev: object) -> None:
            left[0] -= 1
            if left[0] == 0:
                ev.succeed()

        for w in waiting:
            w.callbacks.append(one_more)
        return ev

    def latest_visible(  # type: ignore[override]
        self, producers: tuple[OpRef, ...], xcd: int
    ) -> tuple[float, OpRef]:
        key = (producers, xcd)
        hit = self.latest.get(key)
        if hit is None:
            put_done, vis = self.put_done, self.sampler.visibility
            best, last = float("-inf"), producers[0]
            for p in producers:
                done = put_done[p]
                t = done.time + done.behind + vis(done.xcd, xcd)
                if t >= best:
                    best, last = t, p
            hit = self.latest[key] = (best, last)
        return hit

    def cell_ranges(self, ref: OpRef, cells: np.ndarray) -> list[CellRange]:
        hit = self.range_cache.get(ref)
        if hit is not None:
            return [CellRange(c.region, c.first, c.last, c.count) for c in hit]
        space = self.handoffs.launch.space
        regs = space.region_of(cells)
        out = []
        if regs.size and regs.min() == regs.max():
            r, off = int(regs[0]), space.offsets[int(regs[0])]
            first, last = int(cells.min()) - off, int(cells.max()) - off
            out.append(CellRange(space.name(r), first, last, int(cells.size)))
        else:
            for r in np.unique(regs):
                idx = cells[regs == r] - space.offsets[r]
                out.append(
                    CellRange(space.name(int(r)), int(idx.min()), int(idx.max()), int(idx.size))
                )
        self.range_cache[ref] = out
        return [CellRange(c.region, c.first, c.last, c.count) for c in out]


@dataclass
class Pending:
    """A load in flight: an HBM load ends on an event (its share of bandwidth depends on
    what else streams); an L2 load's end is known when it issues, so it costs no event."""

    event: simpy.Event | None
    span: LoadSpan

    def done_by(self, now: float) -> bool:
        if self.event is None:
            return self.span.done is not None and self.span.done <= now
        return self.event.triggered


class ReferenceCtaRun(CounterOps):
    """Runs ``prog`` on unit ``unit`` of XCD ``xcd``; records into ``track``."""

    def __init__(self, world: World, prog: CtaProgram, unit: int, xcd: int) -> None:
        self.w = world
        self.prog = prog
        self.unit = unit
        self.xcd = xcd
        self.track: CtaTrack = world.tracks[prog.cta]
        self.computes = frozenset(op.cost for op in prog.ops if isinstance(op, Compute))
        self.loads: dict[str, Pending] = {}
        self.inflight: dict[str, Pending] = {}  # the loads not yet seen done by a poll
        self.held: dict[str, Load] = {}  # streamed weights: issued at their Use
        self.stores: list[simpy.Event] = []
        self.resets_land = 0.0  # the last of its resets' stores to land (CounterOps)
        self.stage = ""
        self.task = -1
        self.open: StageSpan | None = None
        self.regs: dict[str, int] = {}  # registers the counter ops write and read
        self.item = -1  # the ticket whose body runs, -1 none
        # the stage costs the ticket loop it runs now computes (its items'), empty outside
        self.loop_computes: frozenset[str] = frozenset()
        self.loop = -1  # the number of the loop whose body runs (handoffs.loops), -1 none
        # added after the reference was taken: a poll's first try behind the CTA's own
        # traffic (the engine's CtaRun._traffic_wait), counted in program order
        self.store_bytes = 0  # stores and put pairs since the last drain or poll
        self.unused: dict[str, int] = {}  # loads issued, neither used nor polled behind
        # and a put's pairs behind the stores ahead of them (the engine's CtaRun._put)

    def _put_behind(self) -> float:
        lat = self.w.prof.latency_ns
        if not self.store_bytes:
            return 0.0
        return lat.get("put_stores", 0.0) + self.store_bytes * lat.get("put_store_kib", 0.0) / KIB

    def _traffic_wait(self) -> float:
        lat = self.w.prof.latency_ns
        wait = 0.0
        if self.store_bytes:
            wait = lat.get("first_try_stores", 0.0)
            wait += self.store_bytes * lat.get("first_try_store_kib", 0.0) / KIB
        wait += sum(self.unused.values()) * lat.get("first_try_load_kib", 0.0) / KIB
        self.store_bytes = 0
        self.unused = {}
        return wait

    # -- loads and stores ---------------------------------------------------------------
    def _after(self, delay: float, fn: Callable[[], None]) -> None:
        self.w.env.timeout(delay).callbacks.append(lambda _ev: fn())

    def _hbm_load(self, op: Load, span: LoadSpan) -> simpy.Event:
        """Latency, then the shared transfer; callbacks, not a process, to keep the event
        count down."""
        w = self.w
        ev = w.env.event()

        def done(_ev: object = None) -> None:
            span.done = w.env.now
            ev.succeed()

        self._after(
            span.issue - w.env.now + w.sampler.latency("hbm_load"),
            lambda: w.hbm.transfer(op.nbytes).callbacks.append(done),
        )
        return ev

    def _issue(self, op: Load, t: float) -> None:
        """Issue at the CTA's own time ``t`` (it may run ahead of the clock: see run)."""
        w = self.w
        span = LoadSpan(op.name, op.kind.value, op.nbytes, t, None, self.stage, self.task)
        self.track.loads.append(span)
        if op.hbm:
            pending = Pending(self._hbm_load(op, span), span)
        else:
            span.done = t + w.sampler.latency("l2_load") + op.nbytes / w.prof.unit_bytes_per_ns
            pending = Pending(None, span)
        self.loads[op.name] = self.inflight[op.name] = pending
        self.unused[op.name] = self.unused.get(op.name, 0) + op.nbytes

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
        ev = w.env.event()
        self.stores.append(ev)
        self.store_bytes += op.nbytes
        cta = self.prog.cta

        def acked(_ev: object) -> None:
            for cell in op.cells:
                w.data_visible[cell] = w.env.now
                w.data_writer[cell] = cta
            ev.succeed()

        self._after(
            t - w.env.now + w.sampler.latency("store_ack"),
            lambda: w.hbm.transfer(op.nbytes).callbacks.append(acked),
        )

    def _outstanding(self, t: float) -> list[Pending]:
        """The loads not done by ``t``. The CTA's polls ask at times that never go back
        and a load once done stays done, so the ones done are dropped from the scan."""
        self.inflight = {n: p for n, p in self.inflight.items() if not p.done_by(t)}
        return list(self.inflight.values())

    def _wait_loads(self, pending: list[Pending]) -> Generator[Any, Any, None]:
        env = self.w.env
        events = [p.event for p in pending if p.event is not None and not p.event.triggered]
        if events:
            yield _all(env, events)
        until = max((p.span.done or 0.0 for p in pending if p.event is None), default=0.0)
        if until > env.now:
            yield env.timeout(until - env.now)

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
        space = w.handoffs.launch.space
        first = int(op.cells[0]) - space.offsets[op.region] if len(op.cells) else -1
        rec = PutRecord(self.stage, self.task, space.name(op.region), len(op.cells), first, t)
        behind = self._put_behind()
        self.store_bytes += len(op.cells) * PAIR_BYTES
        self.track.puts.append(rec)
        ref = self._ref(k)
        w.put_done[ref] = PutDone(t, self.xcd, len(self.track.puts) - 1, self.prog.cta, behind)
        ev = w.put_events.get(ref)  # made only once a poll waits on it: most never are
        if ev is not None:
            if t <= env.now:
                ev.succeed()
            else:
                env.timeout(t - env.now).callbacks.append(lambda _e: ev.succeed())

    def _poll(self, k: int, op: Poll, t0: float) -> Generator[Any, Any, None]:
        """First issue at ``t0`` (the CTA's own time, possibly ahead of the clock)."""
        w = self.w
        env = w.env
        outstanding = self._outstanding(t0)
        rec = PollRecord(
            self.stage,
            self.task,
            op.label,
            len(op.cells),
            int(op.batches.shape[0]),
            t0,
            None,
            None,
            cells=w.cell_ranges(self._ref(k), op.cells),
        )
        self.track.polls.append(rec)
        lat = w.sampler.latency("poll")
        if op.lanes > 1 and w.prof.latency_ns.get("poll_lane", 0.0) > 0.0:
            lat += (op.lanes - 1) * w.sampler.latency("poll_lane")
        start = t0 + self._traffic_wait()
        first_return = start + lat
        if w.prof.in_order_loads and outstanding:
            # vmcnt retires in issue order: the poll's load returns behind every earlier one
            yield from self._wait_loads(outstanding)
            first_return = max(first_return, env.now)
        if w.prof.stores_in_vmcnt:
            # gfx9 counts stores in vmcnt too: the poll's wait covers the wave's stores
            stores = [e for e in self.stores if not e.triggered]
            if stores:
                yield _all(env, stores)
                first_return = max(first_return, env.now)
        ref = self._ref(k)
        if w.tagged:  # a launch of a host sequence: some pairs may hold its tag already
            producers, unput = w.fresh(self.prog.cta, ref, op.label, op.cells, rec)
        else:
            producers, unput = w.handoffs.producers[ref], w.handoffs.unput[ref]
        if unput:
            yield w.never  # a pair nobody in this launch puts: waits forever
        joined = w.join(producers)
        factor = w.prof.latency_ns.get("put_crowd", 0.0)
        # the poll's cell set, by its cells (the engine numbers the same sets: PollPlan.cell_set)
        mine = op.cells.tobytes() if factor > 0.0 else b""
        if factor > 0.0:  # every poll is a poller of each of its puts from its first issue
            for p in producers:
                w.landing.setdefault(p, []).append((t0, mine))
        if joined is not None:
            yield joined
        visible, last = start, None
        if w.sampler.jitter:  # each pair's visibility drawn anew, in producer order
            put_done, vis, me = w.put_done, w.sampler.visibility, self.xcd
            for p in producers:
                done = put_done[p]
                t = done.time + done.behind + vis(done.xcd, me)
                if t >= visible:
                    visible, last = t, p
        elif producers:
            latest, p = w.latest_visible(producers, self.xcd)
            if latest >= start:
                visible, last = latest, p
        done = w.put_done[last] if last is not None else None
        late = done is not None and done.behind > 0.0 and t0 < done.time
        if factor > 0.0 and late and visible > start:
            # the put seen last waits behind its CTA's stores longer for each other cell
            # set that began waiting on it before it (each once)
            others = {c for t, c in w.landing.get(last, ()) if c != mine and t < done.time}
            visible += len(others) * done.behind * factor
        # tries: the first issued at t0; each later one after the previous returned and
        # the retry sleep; the first try issued once every pair is visible succeeds
        retry = w.sampler.latency("retry")
        if op.backoff and w.prof.latency_ns.get("backoff", 0.0) > 0.0:
            retry += w.sampler.latency("backoff")
        if visible <= start:
            tries, issue = 0, start
        else:
            issue = first_return + retry
            tries = 1
            if issue < visible:
                period = lat + retry
                n = -(-(visible - issue) // period)
                issue += n * period
                tries += int(n)
        satisfied = max(issue + lat, first_return)
        if satisfied > env.now:
            yield env.timeout(satisfied - env.now)
        rec.satisfied = satisfied
        rec.retries = tries
        # loads still in flight at the first issue (known exactly now that time has passed)
        behind = [p.span for p in outstanding if p.span.done is None or p.span.done > t0]
        rec.behind_loads = len(behind)
        rec.behind_weight_bytes = sum(s.nbytes for s in behind if s.kind == LoadKind.WEIGHT.value)
        if last is not None:
            rec.producer = w.put_done[last].cta
            rec.put_time = w.put_done[last].time
            rec.put_ref = w.put_done[last].put_index

    def _share(self, key: str, units: float) -> float:
        """The profile's ``share_factor`` where another CTA resident on this unit computes
        stage ``key`` too and the profile shares it at ``units`` (``GpuProfile.shares_at``),
        else 1: the CTA first of them in the unit's residents (the one dispatched there
        first) is the older, whose warps the scheduler issues first.
        Known from the programs, not from who is computing at this instant: the CTAs that
        share a gemv stage start it within a poll of each other (all wait on the same XRDY
        flags). A ticket loop's items are in no program: a CTA computes what they compute
        while it runs the loop (from its first take to the one past the items), so two
        CTAs in the loop on one unit share it (docs/whatif/ticket_k1.md, "The model mended
        again")."""
        prof = self.w.prof
        if not prof.unit_share or not prof.shares_at(key, units):
            return 1.0
        sharers = [
            r
            for r in self.w.resident[self.unit]
            if r is self or key in r.computes or key in r.loop_computes
        ]
        return prof.share_factor(sharers[0] is self, units) if len(sharers) > 1 else 1.0

    # -- stages -------------------------------------------------------------------------
    def _begin(self, op: Begin, t: float) -> None:
        self.stage, self.task = op.stage, op.task
        self.open = StageSpan(op.stage, op.task, t, t)
        self.track.stages.append(self.open)

    def _end(self, t: float) -> None:
        if self.open is not None:
            self.open.end = t
        self.open = None

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
        else:  # a ticket item's body, numbered by the shared CounterOps in the fast
            # engine's kinds: numbered again in this module's
            kinds = op_kinds(ops)
        sampler = w.sampler
        streamed = w.prof.streamed_weights
        wanted: float | None = None  # when the Use before this compute asked for its stream
        slot = -1  # the kda task slot now running
        for k, op in enumerate(ops):
            kind = kinds[k]
            if kind == _COMPUTE:
                cost = sampler.cost(op.cost, op.units) * self._share(op.cost, op.units)
                if wanted is None:
                    t += cost
                else:  # the compute ran alongside the stream it waited for
                    t = max(t, wanted + cost)
                    wanted = None
            elif kind == _BARRIER:
                t += sampler.latency("barrier")
            elif kind == _BEGIN:
                if op.task >= 0 and op.task != self.task:
                    slot += 1  # a kda task begins: its slot on this CTA (0: the first)
                self._begin(op, t)
                if slot > 0 or cold:  # the stage's code runs here for the first time
                    t += sampler.latency("cold_code")
            elif kind == _END:
                self._end(t)
            elif kind == _STORE:
                self._store(op, t)
            elif kind == _LOAD:
                if streamed and op.kind is LoadKind.WEIGHT:
                    self.held[op.name] = op
                else:
                    self._issue(op, t)
            elif kind == _PUT:
                self._put(k, op, t)
            else:
                w.current_op[cta] = k if program else at
                if not program:  # a ticket item's op: the stuck report reads it
                    w.current_item[cta] = (at, self.item, k)
                if kind == _POLL:
                    yield from self._poll(k, op, t)
                    t = env.now
                elif kind == _USE:
                    held = [self.held.pop(n) for n in op.names if n in self.held]
                    for ld in held:
                        self._issue(ld, t)
                    wanted = t if held else None
                    for n in op.names:
                        self.unused.pop(n, None)
                    pending = [self.loads[n] for n in op.names if not self.loads[n].done_by(t)]
                    if pending:
                        yield from self._wait_loads(pending)
                    t = max(t, env.now)
                elif kind >= _ATOMIC:  # counter and flag words, ticket loops
                    t = yield from self.words_op(k, op, t)
                else:
                    if t > env.now:  # meet the clock: flagged data is read, a flag drained
                        yield env.timeout(t - env.now)
                    if kind == _FLAGGED:
                        self._issue(op, t)
                        self._check_flagged(op)
                    elif op.drain:  # a publish
                        self.store_bytes = 0
                        pending = [e for e in self.stores if not e.triggered]
                        if pending:
                            yield _all(env, pending)
                        yield env.timeout(sampler.latency("barrier"))
                    t = env.now
                    if kind == _PUBLISH:
                        self._put(k, op, t)
        if not program:
            return t
        if t > env.now:
            yield env.timeout(t - env.now)
        # the CTA's last stores must land before it retires, its resets' stores too
        pending = [e for e in self.stores if not e.triggered]
        if pending:
            yield _all(env, pending)
        if self.resets_land > env.now:
            yield env.timeout(self.resets_land - env.now)
        w.current_op.pop(cta, None)
        w.resident[self.unit].remove(self)
        self.track.end = env.now
        return t


(_COMPUTE, _BARRIER, _BEGIN, _END, _STORE, _LOAD, _PUT, _POLL, _USE, _FLAGGED, _PUBLISH) = range(11)
_ATOMIC, _WAIT, _RESET, _TICKETS = range(11, 15)  # the counter ops: kinds >= _ATOMIC
# ops added after the reference was taken, run by the shared CounterOps as counter ops
_ON_OLD, _RESET_PAIRS = range(15, 17)
_KIND_OF = {
    OnOld: _ON_OLD,
    ResetPairs: _RESET_PAIRS,
    Atomic: _ATOMIC,
    TakeAhead: _ATOMIC,  # a take issued ahead: a counter op the CTA does not wait for
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
    return tuple(
        _FLAGGED if isinstance(op, Load) and op.kind is LoadKind.FLAGGED else _KIND_OF[type(op)]
        for op in ops
    )


def _all(env: simpy.Environment, events: list[simpy.Event]) -> simpy.Event:
    return events[0] if len(events) == 1 else simpy.AllOf(env, events)


class ReferenceBandwidth:
    def __init__(
        self,
        env: simpy.Environment,
        bytes_per_ns: float,
        cap_per_stream: float,
        calls: None = None,  # the engine's heap of calls: an unfolded run (this one) has none
    ) -> None:
        assert calls is None
        self.env = env
        self.bw = bytes_per_ns
        self.cap = cap_per_stream
        self._v = 0.0  # virtual bytes served to each active stream
        self._t = env.now
        self._heap: list[tuple[float, int, simpy.Event]] = []
        self._seq = itertools.count()
        self._wake_at: float | None = None
        self.bytes_total = 0

    def _rate(self) -> float:
        n = len(self._heap)
        return min(self.cap, self.bw / n) if n else 0.0

    def _advance(self) -> None:
        now = self.env.now
        self._v += self._rate() * (now - self._t)
        self._t = now

    def transfer(self, nbytes: int) -> simpy.Event:
        """An event that fires when ``nbytes`` have streamed through."""
        done = self.env.event()
        if nbytes <= 0:
            done.succeed()
            return done
        self._advance()
        self.bytes_total += nbytes
        heapq.heappush(self._heap, (self._v + nbytes, next(self._seq), done))
        self._arm()
        return done

    def _arm(self) -> None:
        """Keep one timer for the earliest finish. A join only slows streams down, so a
        timer already set for earlier still fires first and re-arms then."""
        if not self._heap:
            return
        at = self.env.now + max(0.0, (self._heap[0][0] - self._v) / self._rate())
        if self._wake_at is not None and self._wake_at <= at:
            return
        self._wake_at = at
        self.env.timeout(at - self.env.now).callbacks.append(lambda _ev: self._wake(at))

    def _wake(self, at: float) -> None:
        if self._wake_at != at:
            return  # superseded by an earlier timer
        self._wake_at = None
        self._advance()
        eps = 1e-6 * max(1.0, self._v)
        while self._heap and self._heap[0][0] <= self._v + eps:
            _, _, ev = heapq.heappop(self._heap)
            ev.succeed()
        self._arm()
