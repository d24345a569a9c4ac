"""One CTA's program run as a SimPy process on the machine model."""

from __future__ import annotations

import weakref
from collections import deque
from collections.abc import Callable, Container, Generator, Iterable, Iterator
from functools import cached_property, partial
from heapq import heappush
from itertools import compress, count, repeat
from operator import attrgetter, itemgetter
from typing import Any, NamedTuple

import simpy
from simpy.events import NORMAL, PENDING, Event, Timeout

from kda_sim.engine.bandwidth import SharedBandwidth
from kda_sim.engine.counter_ops import CounterOps
from kda_sim.engine.plans import (
    PollPlan,
    flagged_reads,
    poll_plan,
    put_fields,
    put_record_fields,
    put_ref,
)
from kda_sim.engine.timers import Wake, at_time, wake
from kda_sim.engine.world import PutDone, StaleRead, World
from kda_sim.machine.profile import FIRST_TRY, KIB, PUT_BEHIND, GpuProfile
from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.handoffs import Handoffs, OpRef
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
from kda_sim.timeline.model import CtaTrack, LoadSpan, PollRecord, PutRecord, StageSpan

_WEIGHT = LoadKind.WEIGHT
_WEIGHT_KIND = LoadKind.WEIGHT.value  # a LoadSpan's kind (an enum lookup a span cost)
_INF = float("inf")
# a record made without its class's ``__init__`` (StageSpan, LoadSpan, PollRecord, PutRecord,
# PutDone: about 9,600 a K1 launch): ``_new(cls)`` and a store a field, every field, in this
# module. A call to a Python class runs its ``__init__`` as a frame entered from C, about
# half of what making the record cost; tests/engine/test_cta.py checks that every field of
# every record a launch makes is set, so a field added to a record must be set here too
_new = object.__new__


class Pending:
    """A load in flight: an HBM load ends when its transfer does (its share of bandwidth
    depends on what else streams); an L2 load's end is known when it issues, so it costs
    no event. An HBM load's span gets its ``done`` when its transfer ends, so
    ``span.done is not None`` is "done" for it (the engine's scans test only that). Its
    ``event`` is the one the CTA waits on, made at issue in an unfolded run; a folded run
    makes none and wakes a CTA that waits through ``CtaRun._landed``."""

    __slots__ = ("event", "hbm", "run", "span", "waited")
    event: simpy.Event | None
    span: LoadSpan
    hbm: bool
    waited: bool  # folded: the CTA waits for this load now
    # folded, an HBM load: the CTA that issued it until the load lands (``land``), then
    # None: the CTA's ``loads`` hold this Pending, and a cycle would leave the launch's
    # world and records to the collector
    run: CtaRun | None
    # made by ``CtaRun._issue``, which sets the fields it reads (no ``__init__``: no frame
    # a load)

    def land(self) -> None:
        """A folded HBM load's transfer has ended (the server calls it: a bound method, not
        a closure and its cells a load): its span ends now, and a CTA waiting for it
        counts it."""
        run = self.run
        assert run is not None
        self.run = None  # (the cycle through the CTA's loads broken: see ``run``)
        env = run.w.env
        self.span.done = env._now
        if self.waited:  # CtaRun._landed and timers.fire_ready, inlined (two frames a load)
            run.left -= 1
            if not run.left:
                waker = run.waker
                run.waker = None
                waker._ok, waker._value = True, None  # type: ignore[union-attr]
                waker.eid = next(env._eid)  # type: ignore[union-attr]
                run.w.hbm.ready.append(waker)


def _launch_consts(world: World) -> tuple:
    """What every CtaRun of a launch reads from the world and its profile, made once a
    launch (``World.cta_consts``), not once a CTA (256 a K1 launch). In ``CtaRun.__init__``'s
    order: ``ahead``, the put records' fields, ``latency``, the profile's vmcnt flags, the
    priced poll terms, the first try's and a put's waits behind the CTA's own traffic, the
    poll plans, the price of a crowded landing where the profile sets one, the open
    fronts of computes (``_front``) and the flagged reads found all stored
    (``_check_flagged``)."""
    prof = world.prof
    # folded: a poll that waits for nothing to happen lets the CTA run on ahead of the
    # clock. Not in a jittered run (its CTAs draw latencies in the order they run, so
    # running one ahead of others changes what each draws), nor where what others do
    # at an instant decides a result (a unit's sharing, read from the CTAs resident
    # now; pairs tagged before the launch, which resets clear as the clock passes)
    ahead = (
        world.fold
        and not world.sampler.jitter
        and not world.tagged
        and not (prof.unit_shared and prof.unit_share)
    )
    latency = world.sampler.fixed()[0]  # nominal: the table's lookup, no frame a call
    lat = prof.latency_ns
    priced = _priced(prof)
    # a poll's first try behind the CTA's own traffic (``_traffic_wait``): ns where
    # stores are in flight, ns a byte of them, ns a byte of loads not yet used. Nominal
    # (no jitter drawn), and no bookkeeping at all where the profile leaves them at 0
    fixed, per_store, per_load = (lat.get(n, 0.0) for n in FIRST_TRY)
    first_try = (fixed, per_store / KIB, per_load / KIB)
    behind = fixed > 0.0 or per_store > 0.0 or per_load > 0.0
    # a put's pairs wait behind the CTA's own stores ahead of them (``_put``): ns where
    # there are any, ns a byte of them; nominal, as the first try's
    fixed, per_store = (lat.get(n, 0.0) for n in PUT_BEHIND)
    put_behind = (fixed, per_store / KIB)
    puts_wait = fixed > 0.0 or per_store > 0.0
    # a put's wait behind its CTA's stores grows with the other polls waiting on it
    # (``_poll``): nominal, and not counted where the profile leaves put_crowd at 0 or
    # sets no such wait
    crowd = (lat.get("put_crowd", 0.0) or None) if puts_wait else None
    world.cta_consts = out = (
        ahead,
        put_fields(world.handoffs),
        latency,
        prof.in_order_loads,  # vmcnt: loads retire in order
        prof.stores_in_vmcnt,  # and count stores
        priced,
        first_try,
        behind,
        put_behind,
        puts_wait,
        behind or puts_wait,  # the stores are counted where either prices them
        world.handoffs.poll_cache,  # poll_plan's, read without its call
        crowd,
        # stage cost -> the end of its computes' open front (``_front``), the launch's
        # CTAs' one dict: here, not a field of ``World``, where a thirtieth attribute made
        # every read of its others slower
        {},
        # the ids of the flagged loads' cell tuples found all stored (``_check_flagged``)
        set(),
    )
    return out


def poll_try(op: Poll, latency: Callable[[str], float], priced: tuple[bool, bool]) -> float:
    """A poll's try: its load's latency, and a try's CTA-wide count (a barrier each pair
    a thread) where the profile prices it, so a run without it draws no more jitter."""
    lat = latency("poll")
    if op.lanes > 1 and priced[0]:
        lat += (op.lanes - 1) * latency("poll_lane")
    return lat


def poll_retry(op: Poll, latency: Callable[[str], float], priced: tuple[bool, bool]) -> float:
    """The sleep between a poll's tries, and its backoff where the profile prices it."""
    retry = latency("retry")
    if op.backoff and priced[1]:
        retry += latency("backoff")
    return retry


def _priced(prof: GpuProfile) -> tuple[bool, bool]:
    """Whether the profile prices a poll's lanes and its backoff (``poll_try``,
    ``poll_retry``)."""
    lat = prof.latency_ns
    return (lat.get("poll_lane", 0.0) > 0.0, lat.get("backoff", 0.0) > 0.0)


class CtaRun(CounterOps):
    """Runs ``prog`` on unit ``unit`` of XCD ``xcd``; records into ``track``."""

    # every attribute ``__init__`` sets, as slots: past 30 an instance's attributes leave
    # the keys its class's instances share, and each read or store of one on 3.11 is a
    # dict look-up, where a slot's is an offset (``CounterOps`` keeps a ``__dict__`` for
    # the rest: its ``taken_ahead``, ``computes``)
    __slots__ = (
        "_behind",
        "_count_stores",
        "_crowd",
        "_first_try",
        "_fronts",
        "_in_order",
        "_latest",
        "_plans",
        "_priced",
        "_put_behind",
        "_put_fields",
        "_puts_wait",
        "_store_bytes",
        "_stored_reads",
        "_unused",
        "_vmcnt_stores",
        "ahead",
        "clock",
        "draining",
        "fold",
        "held",
        "inflight",
        "item",
        "latency",
        "left",
        "loads",
        "loop",
        "loop_computes",
        "meet",
        "open",
        "prog",
        "regs",
        "resets_land",
        "spread",
        "stage",
        "stores",
        "task",
        "track",
        "unacked",
        "unit",
        "w",
        "waker",
        "xcd",
    )

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
        # a folded run (World.fold) counts what the CTA waits for instead of making an
        # event a load or store: the stores not acked, the loads a wait still needs, and
        # the one event the CTA waits on (made only when it waits)
        self.fold = world.fold
        self.unacked = 0
        # the last of its counter resets' and pair resets' stores to land (counter_ops):
        # the CTA retires after it, as after its plain stores' acks
        self.resets_land = 0.0
        self.left = 0
        self.waker: Wake | None = None
        self.draining = False  # folded: the CTA waits for its stores' acks now
        # folded, draining from before the clock meets the CTA's time (``_meet_drain``):
        # that time and the number its sleep would have taken; None otherwise
        self.meet: tuple[float, int] | None = None
        # the clock as an unfolded run would read it here: the time this CTA last woke.
        # A CTA that runs ahead (``ahead``) moves it where it would have slept to, so each
        # time it computes from it rounds as the unfolded run's does (SimPy lands a
        # sleep from c to t at c + (t - c), which need not be t)
        self.clock = 0.0
        (
            self.ahead,
            self._put_fields,
            self.latency,
            self._in_order,
            self._vmcnt_stores,
            self._priced,
            self._first_try,
            self._behind,
            self._put_behind,
            self._puts_wait,
            self._count_stores,
            self._plans,
            self._crowd,
            self._fronts,
            self._stored_reads,
        ) = world.cta_consts or _launch_consts(world)
        self._store_bytes = 0  # stores (and put pairs) since the last drain or poll
        self._unused: dict[str, int] = {}  # loads issued, not yet used nor polled behind
        self._latest = world.latest_on(xcd)  # World.latest_visible's, by set, this XCD's
        self.stage = ""
        self.task = -1
        self.open: StageSpan | None = None
        self.regs: dict[str, int] = {}  # registers the counter ops write and read
        self.item = -1  # the ticket whose body runs, -1 none
        # the stage costs the ticket loop it runs now computes (its items'), empty outside
        self.loop_computes: frozenset[str] = frozenset()
        self.loop = -1  # the number of the loop whose body runs (handoffs.loops), -1 none
        # the CTA's factor on its computes in each stage (GpuProfile.cta_spread), or None
        self.spread = None if world.cta_factors is None else world.cta_factors[prog.cta]

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

        delay = span.issue - env._now + self.latency("hbm_load")
        Timeout(env, delay).callbacks.append(start)
        return ev

    def _landed(self) -> None:
        """One more of what a folded CTA waits for has landed; the last wakes it (where it
        drains from before its meeting with the clock, not before that: ``_meet_drain``)."""
        self.left -= 1
        if not self.left:
            waker = self.waker
            self.waker = None
            assert waker is not None
            w = self.w
            env = w.env
            waker._ok, waker._value = True, None
            meet = self.meet
            if meet is not None:
                self.meet = None
                at, eid = meet
                now = env._now
                # the last ack came before the sleep to ``at`` would have ended (at ``at``,
                # the sleep's number after this one's: a call or a wake of the server, the
                # one running now, ``SharedBandwidth.next``): the CTA wakes where the sleep
                # would have, then finding nothing left to drain
                if at > now or (at == now and not _woke_after(w.hbm, eid)):
                    heappush(env._queue, (at, NORMAL, eid, waker))
                    return
            waker.eid = next(env._eid)  # timers.fire_ready, inlined
            w.hbm.ready.append(waker)

    def _issue(self, op: Load, t: float) -> None:
        """Issue at the CTA's own time ``t`` (it may run ahead of the clock: see run)."""
        w = self.w
        # ``_value_`` is what ``.value`` returns, without the enum's property lookup
        span = _new(LoadSpan)  # LoadSpan(op.name, kind, op.nbytes, t, None, stage, task)
        span.name = op.name
        span.kind = op.kind._value_
        span.nbytes = op.nbytes
        span.issue = t
        span.done = None
        span.stage = self.stage
        span.task = self.task
        self.track.loads.append(span)
        pending = Pending()  # (its fields set here: no __init__ frame a load)
        pending.span, pending.waited, pending.event = span, False, None
        if op.hbm:
            pending.hbm = True
            if self.fold:  # joins the HBM server after its latency with no timer (join_at),
                # its end calling back into the CTA (no event, none for the load unless the
                # CTA waits for it)
                pending.run = self
                c = self.clock
                hbm = w.hbm  # its join_at, inlined (a frame less a load)
                heappush(
                    hbm.calls,
                    (
                        c + (t - c + self.latency("hbm_load")),
                        NORMAL,
                        next(w.env._eid),
                        hbm._stream_call,
                        op.nbytes,
                        pending.land,
                    ),
                )
            else:
                pending.event = self._hbm_load(op, span)
        else:
            span.done = t + self.latency("l2_load") + op.nbytes / w.prof.unit_bytes_per_ns
            pending.hbm = False
        self.loads[op.name] = self.inflight[op.name] = pending
        if self._behind:
            unused = self._unused
            unused[op.name] = unused.get(op.name, 0) + op.nbytes

    def _check_flagged(self, op: Load, reads: tuple[int, ...]) -> None:
        """Whether ``op`` reads a flagged cell not visible yet (a stale read). ``reads``: its
        cells, as the one tuple every load of equal cells shares in a nominal program's
        steps (``_nominal``), else the op's own."""
        stored = self._stored_reads
        if id(reads) in stored:  # all stored by an earlier load of the launch: still are
            return
        w = self.w
        now = w.env._now
        visible = w.data_visible
        # every cell visible by now (a K1 flagged load reads 56): one scan in C. An ack
        # makes a cell visible at the clock's time, which never goes back, so a cell stored
        # is visible by now: the scan asks only whether each is stored (no float compared),
        # the cells looked at one by one only where one is not. A cell once stored stays
        # so: a tuple found all stored is not scanned again (a K1 launch's flagged loads
        # read one tuple of cells: each load after the first is one set look-up)
        if all(map(visible.__contains__, reads)):
            stored.add(id(reads))
            return
        for cell in reads:
            vis = visible.get(cell)
            if vis is None or vis > now:
                w.stale_reads.append(
                    StaleRead(
                        self.prog.cta,
                        self.stage,
                        now,
                        w.data_writer.get(cell, -1),
                        _INF if vis is None else vis,
                        cell,
                    )
                )

    def _store(self, op: Store, t: float) -> None:
        """A plain store is acknowledged (and visible at device scope) after its latency and
        its share of HBM; a drain waits for every ack."""
        w = self.w
        env = w.env
        hbm, nbytes = w.hbm, op.nbytes
        if self._count_stores:
            self._store_bytes += nbytes
        c = self.clock  # the clock's time here in an unfolded run (see ``clock``)
        if self.fold:  # joins the server after its latency, with no timer of its own
            self.unacked += 1
            # hbm.join_at, inlined (a frame less a store)
            heappush(
                hbm.calls,
                (
                    c + (t - c + self.latency("store_ack")),
                    NORMAL,
                    next(env._eid),
                    hbm._stream_call,
                    nbytes,
                    # a store of no flagged cells (most of a K1 launch's stores) has no
                    # cells to make visible: its ack is the count alone, no partial
                    partial(self._acked, op) if op.cells else self._acked_bare,
                ),
            )
            return
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

        at_time(env, c + (t - c + self.latency("store_ack")), start)

    def _acked(self, op: Store) -> None:
        """A folded store's transfer has ended (the server calls it, through a partial: no
        closure and its cells a store): its cells are visible now, and a CTA draining
        counts it."""
        w = self.w
        now, cta = w.env._now, self.prog.cta
        visible, writer = w.data_visible, w.data_writer
        for cell in op.cells:
            visible[cell] = now
            writer[cell] = cta
        self.unacked -= 1
        if self.draining:
            self._landed()

    def _acked_bare(self) -> None:
        """``_acked`` for a store of no cells: a CTA draining counts it."""
        self.unacked -= 1
        if self.draining:
            self._landed()

    def _drain(self) -> Generator[Any, Any, bool]:
        """Wait for every store of the CTA's to be acknowledged; whether it waited."""
        self._store_bytes = 0  # acked, so out of the SM's pipe: no poll waits behind them
        if self.fold:
            if not self.unacked:
                return False
            self.left, self.draining = self.unacked, True
            self.waker = wake()
            yield self.waker
            self.draining = False
            self.clock = self.w.env._now
            return True
        pending = self._unacked()
        if not pending:
            return False
        yield _all(self.w.env, pending)
        self.clock = self.w.env._now
        return True

    def _meet_drain(self, t: float) -> Generator[Any, Any, None]:
        """``_meet(t)`` then ``_drain()``. Folded, where the CTA would sleep to its time and
        has stores unacked, it waits for the acks from now and wakes at the later of its
        time and the last ack, with no sleep's event: its sleep's number is taken now,
        and the wake goes where that sleep's end (its time the later) or the drain's wake
        (the ack's) would have."""
        env = self.w.env
        c = self.clock
        at = c + (t - c) if t > c else c  # where _meet sleeps to
        if not self.fold or not self.unacked or at <= env._now:
            yield from self._meet(t)
            yield from self._drain()
            return
        self._store_bytes = 0  # (as _drain)
        self.left, self.draining = self.unacked, True
        self.meet = (at, next(env._eid))
        self.waker = waker = wake()
        yield waker
        self.draining = False
        self.clock = env._now

    def _unacked(self) -> list[simpy.Event]:
        """The stores not acknowledged yet; an ack once in stays in, so the rest are
        dropped from later scans."""
        self.stores = [e for e in self.stores if e._value is PENDING]
        return self.stores

    def _outstanding(self, t: float) -> list[Pending]:
        """The loads not done by ``t``. The CTA's polls ask at times that never go back
        and a load once done stays done, so the ones done are dropped from the scan."""
        inflight = self.inflight
        if not inflight:
            return []
        # done by t: an HBM load once its span has ended, an L2 load once that end is t or
        # before; one scan a poll, in a loop (no comprehension's frame)
        out: list[Pending] = []
        gone: list[str] = []
        for n, p in inflight.items():
            done = p.span.done
            if done is not None and (p.hbm or done <= t):
                gone.append(n)
            else:
                out.append(p)
        for n in gone:
            del inflight[n]
        return out

    def _wait_loads(self, pending: list[Pending]) -> Generator[Any, Any, float]:
        """Wait until every load of ``pending`` is done; the time they all are, or the
        clock's if later. An L2 load's end is known at issue: a CTA that runs ahead
        (``ahead``) takes it as its time without meeting the clock there."""
        env = self.w.env
        if self.fold:
            waiting = 0
            for p in pending:
                if p.hbm and p.span.done is None:
                    p.waited = True
                    waiting += 1
            if waiting:
                self.left = waiting
                self.waker = wake()
                yield self.waker
                self.clock = env._now
        else:
            events = [p.event for p in pending if p.event is not None and p.span.done is None]
            if events:
                yield _all(env, events)
                self.clock = env._now
        until = 0.0  # the last L2 load's end (max() over a generator cost more)
        for p in pending:
            if not p.hbm:
                done = p.span.done or 0.0
                if done > until:
                    until = done
        now = self.clock
        if until <= now:
            return now
        if self.ahead:
            self.clock = now + (until - now)  # where the Timeout below would land
            return self.clock
        yield at_time(env, env._now + (until - now))  # Timeout(until - now), frameless
        self.clock = env._now
        return self.clock

    # -- hand-offs ----------------------------------------------------------------------
    def _put(
        self,
        k: int,
        op: Put | Publish,
        t: float,
        made: tuple[OpRef, tuple[str, int, int]] | float = 0.0,
    ) -> None:
        """A put at the CTA's own time ``t``, which may be ahead of the clock: a poller
        that looks before ``t`` computes its pairs' visibility from ``t`` all the same, and
        a waiting one is woken at ``t``.

        Its pairs are plain stores (the Triton K1's ``_put``: no fence), so they leave the
        SM behind the CTA's own stores ahead of them, counted in program order as a poll's
        first try counts them (``_traffic_wait``): the plain stores and put pairs since
        the last drain or poll. Where the profile sets ``put_stores`` / ``put_store_kib``
        its pairs are visible that much later (``PutDone.behind``): K1's k.recur puts ONRM
        right behind its 8 to 32 KiB of state. ``made``: the put's ref and its record's
        fields, where the caller has them (a nominal program's steps), else made here."""
        w = self.w
        env = w.env
        if made:
            ref, (name, n, first) = made  # type: ignore[misc]
        else:
            ref = (self.prog.cta, k) if self.loop < 0 else item_ref(self.loop, self.item, k)
            fields = self._put_fields.get(ref)
            if fields is None:
                fields = put_record_fields(w.handoffs, ref, op)
            name, n, first = fields
        behind = 0.0
        if self._count_stores:
            ahead = self._store_bytes
            if ahead and self._puts_wait:
                fixed, per_store = self._put_behind
                behind = fixed + ahead * per_store
            self._store_bytes = ahead + n * PAIR_BYTES
        puts = self.track.puts
        put = _new(PutRecord)  # PutRecord(stage, task, name, n, first, t)
        put.stage = self.stage
        put.task = self.task
        put.region = name
        put.n_cells = n
        put.first = first
        put.time = t
        puts.append(put)
        w.put_done[ref] = done = _new(PutDone)  # PutDone(t, xcd, index, cta, behind, ...)
        done.time = t
        done.xcd = self.xcd
        done.put_index = len(puts) - 1
        done.cta = self.prog.cta
        done.behind = behind
        same, cross = w.sampler.nominal_visibility
        seen = t + behind
        done.seen_same = seen + same
        done.seen_cross = seen + cross
        ev = w.put_events.get(ref)  # made only once a poll waits on it: most never are
        if ev is not None:
            c = self.clock
            if self.fold:  # the put's event itself at the put's time (no timer before it)
                ev._ok, ev._value = True, None
                # timers.schedule, inlined (a frame less a put a poll waits on)
                heappush(env._queue, (c + (t - c) if t > c else c, NORMAL, next(env._eid), ev))
            elif t <= c:
                ev.succeed()
            else:
                Timeout(env, t - c).callbacks.append(lambda _e: ev.succeed())

    def _traffic_wait(self) -> float:
        """How long a poll's first try waits behind the CTA's own memory traffic, which it
        then has behind it (a later try, or a later poll, waits for none of it).

        The traffic is counted in program order, not from the clock: the stores (plain
        ones and put pairs) since the CTA's last drain or poll, and the loads issued and
        neither used nor polled behind since. Not the engine's acks and load ends: a
        folded CTA polls ahead of the clock, where those are not known yet (the count is
        the same folded or not, and costs no event); and the engine issues a stage's
        loads where the program asks for them (K1's k.stage: at the stage's start, 1 us
        before k.conv's poll), where the H200's traces show k.conv's first try behind
        them all the same (+239 ns after 42 KB; the poll probe: 4 to 5 ns a KiB of loads
        not yet used). Stores cost a fixed part where there are any (the probe's 80 to 90
        ns) and their bytes; stores and loads are one queue, so their parts add."""
        fixed, per_store, per_load = self._first_try
        wait = 0.0
        if self._store_bytes:
            wait = fixed + self._store_bytes * per_store
            self._store_bytes = 0
        unused = self._unused
        if unused:
            wait += sum(unused.values()) * per_load
            unused.clear()
        return wait

    def _crowded(self, put: OpRef, last: PutDone, mine: int) -> float:
        """How much later the put seen last (op ``put``, its ``PutDone`` ``last``) lands
        for the polls waiting on it: its wait behind the CTA's stores (``PutDone.behind``)
        times put_crowd, for each other cell set (``mine``: the poll's) first issued before
        it was put (each set once). By first issue, not by who waited on the clock: a
        folded CTA polls ahead of it, and a poller issued later may have run already."""
        t_put = last.time
        landing = self.w.landing.get(put, ())
        others = {cells for t, cells in landing if cells != mine and t < t_put}
        return len(others) * last.behind * self._crowd  # type: ignore[operator]

    def _poll(
        self, k: int, op: Poll, t0: float, step: NominalPoll | float = 0.0
    ) -> Generator[Any, Any, float]:
        """First issue at ``t0`` (the CTA's own time, possibly ahead of the clock); returns
        the CTA's time after it. A folded CTA goes on from the poll's end at its own time,
        ahead of the clock, rather than meeting the clock there (``ahead``): what it waits
        for to happen (a producer's put, its loads in flight) it has waited for. ``step``:
        the poll's plan and nominal try and retry latencies, where the caller has them (a
        nominal program's steps, ``_nominal``), else looked up and asked for here."""
        w = self.w
        env = w.env
        sampler = w.sampler
        outstanding = self._outstanding(t0) if self.inflight else []
        if step:
            plan, lat, retry = step  # type: ignore[misc]
        else:
            ref = (self.prog.cta, k) if self.loop < 0 else item_ref(self.loop, self.item, k)
            plan = self._plans.get(ref) or poll_plan(w.handoffs, ref)
        rec = _new(PollRecord)  # PollRecord(stage, task, label, cells, batches, t0)
        rec.stage = self.stage
        rec.task = self.task
        rec.label = op.label
        rec.n_cells = plan.n_cells
        rec.n_batches = plan.n_batches
        rec.first_issue = t0
        rec.satisfied = rec.retries = rec.producer = rec.put_time = rec.put_ref = None
        # cells: the plan's ranges themselves, one list every record of the poll shares (no
        # reader changes a record's; chrome's reader makes its own)
        rec.cells = plan.ranges
        rec.behind_loads = rec.behind_weight_bytes = rec.tag = None
        self.track.polls.append(rec)
        if not step:  # (drawn here, before the visibilities: a jittered run's order)
            lat = poll_try(op, self.latency, self._priced)
        # the first try's load leaves the SM once the CTA's own traffic ahead of it has
        if self._behind:
            start = t0 + self._traffic_wait()
        else:
            start = t0
            self._store_bytes = 0  # (counted for puts alone: the try left behind them)
        first_return = start + lat
        if self._in_order and outstanding:
            # vmcnt retires in issue order: the poll's load returns behind every earlier one
            done_at = yield from self._wait_loads(outstanding)
            if done_at > first_return:  # max(), the first on a tie, without the call
                first_return = done_at
        # gfx9 counts stores in vmcnt too: the poll's wait covers the wave's stores
        if self._vmcnt_stores and (self.unacked if self.fold else self.stores):
            if self.fold:  # _drain's folded wait, inlined (no generator a poll: 824 a K1
                # launch): stores are unacked here, so it waits
                self._store_bytes = 0
                self.left, self.draining = self.unacked, True
                self.waker = waker = Wake()
                waker.callbacks = []
                yield waker
                self.draining = False
                self.clock = env._now
                if self.clock > first_return:
                    first_return = self.clock
            elif (yield from self._drain()) and self.clock > first_return:
                first_return = self.clock
        if w.tagged:  # a launch of a host sequence: some pairs may hold its tag already
            ref = (self.prog.cta, k) if self.loop < 0 else item_ref(self.loop, self.item, k)
            producers, unput = w.fresh(self.prog.cta, ref, op.label, op.cells, rec)
            key: object = producers
        else:
            producers, unput, key = plan.producers, plan.unput, plan.key
        if unput:
            yield w.never  # a pair nobody in this launch puts: waits forever
        joined = w.joins.get(key)  # World.join's look-up first (most sets are joined)
        if joined is None:
            joined = w.join(producers, key)
        elif joined._value is not PENDING:
            joined = None  # triggered: every put of the set has happened
        crowded = self._crowd is not None
        if crowded:  # one more poller of each of its puts: its first issue and cell set
            waiter = (t0, plan.cell_set)
            landing = w.landing
            for p in producers:
                landing.setdefault(p, []).append(waiter)
        if joined is not None:
            yield joined
            self.clock = env._now

        # last: the PutDone of the put seen last, last_put its op
        visible, last, last_put = start, None, None
        if sampler.jitter:  # each pair's visibility drawn anew, in producer order
            put_done, vis, me = w.put_done, sampler.visibility, self.xcd
            for p in producers:
                done = put_done[p]
                t = done.time + done.behind + vis(done.xcd, me)
                if t >= visible:
                    visible, last, last_put = t, done, p
        elif producers:
            hit = self._latest.get(key)
            if hit is None:
                hit = w.latest_visible(producers, key, self.xcd)
            if hit[0] >= start:
                visible, last, last_put = hit
        if crowded and last is not None and last.behind and t0 < last.time and visible > start:
            # begun before the put seen last was made, which lands after its first try
            visible += self._crowded(last_put, last, plan.cell_set)  # type: ignore[arg-type]
        # tries: the first issued at start; each later one after the previous returned and
        # the retry sleep; the first try issued once every pair is visible succeeds
        if not step:
            retry = poll_retry(op, self.latency, self._priced)
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
        satisfied = issue + lat
        if first_return > satisfied:
            satisfied = first_return
        rec.satisfied = satisfied
        rec.retries = tries
        if last is not None:
            rec.producer = last.cta
            rec.put_time = last.time
            rec.put_ref = last.put_index
        c = self.clock
        if satisfied <= c:
            t = c
        elif self.ahead:
            t = self.clock = c + (satisfied - c)  # where the Timeout below would land
        else:
            yield at_time(env, env._now + (satisfied - c))  # Timeout(satisfied - c)
            t = self.clock = env._now
        if not outstanding:
            rec.behind_loads = rec.behind_weight_bytes = 0
        elif self.ahead:  # the loads' ends are not all known yet: see behind_loads
            w.behind_later.append((rec, outstanding))
        else:
            behind_loads(rec, outstanding)
        return t

    @cached_property
    def computes(self) -> frozenset[str]:
        """The stages this CTA's program computes (asked only where a unit is shared)."""
        return frozenset(op.cost for op in self.prog.ops if isinstance(op, Compute))

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
        if key in prof.unit_share_first_task:
            return prof.unit_share_first_task[key] if self._first_task_beside() else 1.0
        if not prof.unit_share or not prof.shares_at(key, units):
            return 1.0
        sharers = [
            r
            for r in self.w.resident[self.unit]
            if r is self or key in r.computes or key in r.loop_computes
        ]
        return prof.share_factor(sharers[0] is self, units) if len(sharers) > 1 else 1.0

    def _first_task_beside(self) -> bool:
        """Whether a compute of a ``unit_share_first_task`` cost runs now in the
        CTA's first task while the later CTA sharing its unit still runs the shared compute:
        the CTA is the earlier of the unit's sharers and the skew splits their compute
        (``unit_share_skew`` from ``unit_share_skew_from`` units), so the later ends it
        after this one. Known from the programs and the residents, as ``_share``'s."""
        if self.task != next((s.task for s in self.track.stages if s.task >= 0), -1):
            return False
        prof = self.w.prof
        units = self.shared_units
        if not units or not prof.unit_share_skew or units < prof.unit_share_skew_from:
            return False  # (0: the CTA computes nothing the unit shares)
        sharers = [r for r in self.w.resident[self.unit] if r is self or r.shared_units]
        return len(sharers) > 1 and sharers[0] is self

    @cached_property
    def shared_units(self) -> float:
        """The most units of a compute of this CTA's program that the profile shares
        (``GpuProfile.shares_at``); 0 where it computes none."""
        prof = self.w.prof
        return max(
            (
                op.units
                for op in self.prog.ops
                if isinstance(op, Compute) and prof.shares_at(op.cost, op.units)
            ),
            default=0.0,
        )

    def _front(self, key: str, t: float, cost: float) -> float:
        """When a compute of stage cost ``key`` begun at ``t`` (the clock's time) taking
        ``cost`` on its own ends (``GpuProfile.compute_front``): with another CTA's front
        of ``key`` open (ending after ``t``), at the later of its end and ``t`` plus the
        follower's fraction of ``cost``; else at ``t + cost``, opening a front there."""
        fronts = self._fronts
        end = fronts.get(key)
        if end is not None and end > t:
            own = t + self.w.prof.compute_front[key] * cost
            return end if end > own else own
        fronts[key] = t + cost
        return t + cost

    def _meet(self, t: float) -> Generator[Any, Any, None]:
        """Bring the clock to the CTA's time ``t`` (or its ``clock``, if later): where an
        unfolded run sleeps from ``clock`` to ``t``, landing at ``clock + (t - clock)``."""
        env = self.w.env
        c = self.clock
        at = c + (t - c) if t > c else c
        if at > env._now:
            yield at_time(env, at)
            self.clock = env._now

    # -- stages -------------------------------------------------------------------------
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
            self.track.start = t = self.clock = env.now
            self.track.unit, self.track.xcd = self.unit, self.xcd
            w.resident.setdefault(self.unit, []).append(self)
            ops, kinds = self.prog.ops, _kinds(self.prog)
        else:  # a ticket item's body, entered from the take (counter_ops) that woke the CTA
            self.clock = env._now
        sampler = w.sampler
        latency, cost_of = sampler.fixed()
        prof = w.prof
        # nominal: each barrier's latency and compute's cost, looked up before the launch
        # (empty: each is asked for as the op runs, as a jittered run draws it then, and as
        # a run with a spread between CTAs scales it by the stage it runs in)
        spread = self.spread
        nominal = program and not sampler.jitter and spread is None
        steps = (
            _nominal(self.prog, kinds, prof, latency, w.handoffs)
            if nominal
            else zip(count(), kinds, ops, repeat(0.0))
        )
        streamed = prof.streamed_weights
        shared = prof.share_keys if prof.unit_share else ()  # stages _share may scale
        front = prof.compute_front  # stage costs whose computes end with a front's
        front_from = prof.compute_front_from  # and the least cost of one that does
        grows = bool(prof.cost_growth)  # costs that grow with the launch (nominal: in v)
        held_by, loads = self.held, self.loads
        stages = self.track.stages
        wanted: float | None = None  # when the Use before this compute asked for its stream
        slot = -1  # the kda task slot now running
        looped = self.prog.looped_tasks  # a placed ticket loop: one copy of the task code
        # each op with its number, kind and nominal value, one tuple a step (no subscripts;
        # a nominal program's made once, not zipped a launch: no int made an op)
        for k, kind, op, v in steps:
            # a tree on the kind's number, not a chain of compares (ops by kind in a K1
            # launch: barriers, stage begins and ends, computes 11,500; stores, loads and
            # puts 4,400; polls, uses and the rest 4,350)
            if kind < _STORE:  # time alone: a barrier, a compute, a stage's seam
                if kind == _BARRIER:
                    t += v if nominal else latency("barrier")
                elif kind == _COMPUTE:
                    if nominal:
                        cost = v
                    else:
                        cost = cost_of(op.cost, op.units)
                        if grows and op.launch_units:
                            cost *= prof.grown(op.cost, op.launch_units)
                        if spread is not None:
                            cost *= spread.get(self.stage, 1.0)
                    if shared and op.cost in shared:
                        cost *= self._share(op.cost, op.units)
                    if front and op.cost in front and cost >= front_from.get(op.cost, 0.0):
                        # (one cheaper than the front's least cost runs as without it.)
                        # The clock brought here: every compute of the kind begun before
                        # this one has opened or followed its front
                        yield from self._meet(t)
                        own = cost if wanted is None else max(wanted + cost - t, 0.0)
                        t = self._front(op.cost, t, own)
                        wanted = None
                    elif wanted is None:
                        t += cost
                    else:  # the compute ran alongside the stream it waited for
                        if wanted + cost > t:
                            t = wanted + cost
                        wanted = None
                else:  # a seam: a barrier (v), a stage's end, the next one's begin (op), in
                    # that order, each where its bit is set (_fused: one step, not three)
                    if kind & _BARRED:
                        t += v
                    if kind & _END:
                        span = self.open
                        if span is not None:
                            span.end = t
                            self.open = None
                    if kind & _BEGIN:
                        if op.task >= 0 and op.task != self.task:
                            slot += 1  # a kda task begins: its slot on this CTA (0: the first)
                        self.stage, self.task = op.stage, op.task  # the stage opens (inlined)
                        self.open = span = _new(StageSpan)  # StageSpan(stage, task, t, t)
                        span.name = op.stage
                        span.task = op.task
                        span.start = span.end = t
                        stages.append(span)
                        # the stage's code runs here for the first time (``cold``: a ticket
                        # item in an unrolled copy of the task code)
                        if (slot > 0 and not looped) or cold:
                            t += latency("cold_code")
            elif kind < _POLL:  # a store, a load or a put issued at the CTA's own time
                if kind == _STORE:
                    self._store(op, t)
                elif kind == _LOAD:
                    if streamed and op.kind is _WEIGHT:
                        held_by[op.name] = op
                    else:
                        self._issue(op, t)
                else:  # a put (v: its ref and record fields, in a nominal program's steps)
                    self._put(k, op, t, v)
            else:  # (a stuck report reads the op from ``k``: running_ops)
                if not program:  # a ticket item's op: the stuck report reads it
                    w.current_item[cta] = (at, self.item, k)
                if kind == _POLL:  # (v: its plan and latencies, in a nominal program's steps)
                    t = yield from self._poll(k, op, t, v)
                elif kind <= _USED:  # a Use (and the compute after it: _USED)
                    if held_by:
                        held = [held_by.pop(n) for n in op.names if n in held_by]
                        for ld in held:
                            self._issue(ld, t)
                        wanted = t if held else None
                    else:
                        wanted = None
                    if self._unused:  # used: a later poll no longer waits behind them
                        for n in op.names:
                            self._unused.pop(n, None)
                    # the loads not done by t (as _outstanding tells them; a loop, not a
                    # comprehension's frame, for the one or two names a Use has)
                    pending = []
                    for n in op.names:
                        p = loads[n]
                        done = p.span.done
                        if done is None or (not p.hbm and done > t):
                            pending.append(p)
                    if pending:
                        done_at = yield from self._wait_loads(pending)
                        if done_at > t:
                            t = done_at
                    if self.clock > t:
                        t = self.clock
                    if kind == _USED:  # the compute (v: its nominal cost, one no _share scales)
                        if wanted is None:
                            t += v
                        elif wanted + v > t:  # it ran alongside the stream it waited for
                            t = wanted + v
                        wanted = None
                elif kind >= _ATOMIC:  # counter and flag words, ticket loops
                    yield from self._meet(self.clock)  # they read the clock as it is
                    t = yield from self.words_op(k, op, t)
                    self.clock = env._now
                else:  # flagged data is read, a flag drained
                    if kind == _FLAGGED:
                        yield from self._meet(t)
                        self._issue(op, t)
                        # (v: its cells' shared tuple, in a nominal program's steps)
                        self._check_flagged(op, v or op.reads)
                    elif op.drain:  # a publish
                        yield from self._meet_drain(t)
                        yield at_time(env, env._now + latency("barrier"))  # a Timeout's
                        self.clock = env._now
                    else:
                        yield from self._meet(t)
                    t = self.clock
                    if kind == _PUBLISH:
                        self._put(k, op, t, v)
        if not program:  # a ticket item's body: the loop's next take reads the clock
            yield from self._meet(self.clock)
            return t
        # the CTA's last stores must land before it retires: its plain stores' acks, and
        # its resets' stores, which land half an atomic's round trip after their issue
        yield from self._meet_drain(t)
        if self.resets_land > env._now:
            yield env.timeout(self.resets_land - env._now)
        w.resident[self.unit].remove(self)
        self.track.end = env._now
        return t


def running_ops(runs: Iterable[Generator[Any, Any, float]]) -> Iterator[tuple[int, int]]:
    """Each CTA still running (of ``runs``, the programs' ``CtaRun.run`` generators) with
    the number of the op its loop is at, read from the suspended generator's ``k``: not
    stored at every step that meets the clock for a stuck report, which reads it only
    where a launch stops short. A CTA stops for good only at such a step (a poll, a
    word's wait), the loop's ``k`` then; a ticket item's body runs inside the loop's op,
    whose number its program's loop holds."""
    for gen in runs:
        frame = gen.gi_frame
        if frame is None:  # it ended
            continue
        local = frame.f_locals
        run, k = local.get("self"), local.get("k")
        if isinstance(run, CtaRun) and k is not None:
            yield run.prog.cta, k


# ``CtaRun.run`` branches on ranges of these numbers (below _STORE: time alone; below
# _POLL: issued at the CTA's own time; the rest meet the clock): keep their order
_COMPUTE, _BARRIER = 0, 1
# a stage's seam: its end, the next one's begin, and a barrier before them, as bits of one
# kind (below _STORE; an op alone is its own bit, _fused joins adjacent ones in one step)
_END, _BEGIN, _BARRED = 2, 4, 8
(_STORE, _LOAD, _PUT, _POLL, _USE) = range(16, 21)
_USED = 21  # a Use and the compute after it, one step (_fused)
_FLAGGED, _PUBLISH = 22, 23
# counter ops (and pair resets, plain stores the CTA does not wait for): kinds >= _ATOMIC
_ATOMIC, _WAIT, _RESET, _TICKETS, _ON_OLD, _RESET_PAIRS = range(24, 30)
_KIND_OF = {
    ResetPairs: _RESET_PAIRS,
    OnOld: _ON_OLD,
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
_LOOK = frozenset({_LOAD, None})  # the kinds op_kinds looks at again: loads, and no kind
# _nominal's values not a constant
_OWN_VALUE = frozenset({_COMPUTE, _POLL, _PUT, _PUBLISH, _FLAGGED})


def _kinds(prog: CtaProgram) -> tuple[int, ...]:
    """Each op's kind as a small int (an int compare beats a chain of isinstance calls
    in the engine's innermost loop); cached while the program lives."""
    key = id(prog)
    hit = _KINDS.get(key)
    if hit is None:
        hit = op_kinds(prog.ops)
        _KINDS[key] = hit
        # one finalizer a program drops its kinds and its nominal steps (_nominal): a
        # finalizer is a Python object made and registered, dear beside the kinds' C work
        weakref.finalize(prog, _forget, key)
    return hit


def _forget(key: int) -> None:
    """Drop a program's kinds and nominal steps once it is gone."""
    _KINDS.pop(key, None)
    _NOMINAL.pop(key, None)


# an op's number, its kind, the op, and its value: a barrier's nominal latency, a
# compute's nominal cost, a poll's plan and nominal try and retry (``NominalPoll``), a
# put's ref and record fields (0.0 for the rest)
Step = tuple[int, int, Any, Any]
NominalPoll = tuple[PollPlan, float, float]
_NOMINAL: dict[int, tuple[GpuProfile, dict, tuple[Step, ...]]] = {}


def _nominal(
    prog: CtaProgram,
    kinds: tuple[int, ...],
    prof: GpuProfile,
    latency: Callable[[str], float],
    ho: Handoffs,
) -> tuple[Step, ...]:
    """Each op with its number, kind and value: a barrier's nominal latency or a
    compute's nominal cost, as ``latency`` and ``prof.cost`` give them (the same floats
    the loop would ask for: a launch asks many costs and latencies of few distinct
    ones), a poll's plan (``poll_plan``: its look-up by a tuple key cost a poll)
    with its try's and retry's latencies (``poll_try``, ``poll_retry``: four look-ups and
    two tests a poll), a put's or publish's ref and record fields
    (``put_record_fields``), 0.0 for the rest.
    Kept while the program lives, for the profile and hand-off table last run (a sweep's
    profile is one object; a calibration's a new one a run, which makes them again; the
    table is known by its plans' cache, which holds nothing of the launch, so the program
    is not kept alive by its own entry). One tuple a step: the loop unpacks it (a ``zip``
    of four iterators a step, and the op's number made as a new int, cost more)."""
    key = id(prog)
    hit = _NOMINAL.get(key)
    if hit is not None and hit[0] is prof and hit[1] is ho.poll_cache:
        return hit[2]
    cta, ops = prog.cta, prog.ops
    shape = _shape(kinds)
    # a compute that _share may scale (the op loop's ``shared``: a first-task factor's
    # cost too, k.conv's behind its Use), or that ends with a front (_front), is not fused
    apart = (*(prof.share_keys if prof.unit_share else ()), *prof.compute_front)
    keep = (
        tuple(
            compress(
                shape.used, map(apart.__contains__, map(_COST, map(ops.__getitem__, shape.used)))
            )
        )
        if apart
        else ()
    )
    ks, fkinds, at_op, at_val = _fusion(kinds, keep, ops, apart)
    # every barrier's latency and 0.0 for the rest in C (a dict's ``get`` mapped over the
    # kinds); then the ops whose value is their own (computes, polls, puts: a third of a
    # K1 launch's ops) a kind at a time, each distinct question asked once a launch (its
    # computes ask few distinct costs, its polls fewer tries) and the answers laid in in
    # C, not a Python loop an op
    vals = [0.0] * len(kinds)
    _each(map(vals.__setitem__, shape.barriers, repeat(latency("barrier"))))
    costs, tries = _prices(ho, prof)
    if shape.computes:
        computes = list(map(ops.__getitem__, shape.computes))
        asked = list(map(_COST_OF, computes))
        for q, op in dict(zip(asked, computes, strict=True)).items():
            if q not in costs:
                costs[q] = v = prof.cost(op.cost, op.units)
                if prof.cost_growth and op.launch_units:
                    costs[q] = v * prof.grown(op.cost, op.launch_units)
        _each(map(vals.__setitem__, shape.computes, map(costs.__getitem__, asked)))
    if shape.polls:
        polls = list(map(ops.__getitem__, shape.polls))
        asked = list(map(_TRIES_OF, polls))
        priced = _priced(prof)
        for q, op in dict(zip(asked, polls, strict=True)).items():
            if q not in tries:
                tries[q] = (poll_try(op, latency, priced), poll_retry(op, latency, priced))
        refs = list(zip(repeat(cta), shape.polls))
        poll_plan(ho, refs[0])  # (every plan made)
        lat = list(map(tries.__getitem__, asked))
        plans = map(ho.poll_cache.__getitem__, refs)
        _each(
            map(
                vals.__setitem__,
                shape.polls,
                zip(plans, map(_FIRST, lat), map(_SECOND, lat), strict=True),
            )
        )
    if shape.flagged:  # its cells, the tuple every flagged load of equal cells shares
        reads = list(map(_READS_OF, map(ops.__getitem__, shape.flagged)))
        shared = flagged_reads(ho)  # (its setdefault mapped: in C)
        _each(map(vals.__setitem__, shape.flagged, map(shared.setdefault, reads, reads)))
    for i in shape.puts:  # a put or a publish: its ref the tuple the producers hold (put_ref)
        vals[i] = (put_ref(ho, (cta, i)), put_record_fields(ho, (cta, i), ops[i]))
    steps = tuple(
        zip(ks, fkinds, map(ops.__getitem__, at_op), map(vals.__getitem__, at_val), strict=True)
    )
    if hit is None and key not in _KINDS:  # (else _kinds's finalizer drops it too)
        weakref.finalize(prog, _forget, key)
    _NOMINAL[key] = (prof, ho.poll_cache, steps)
    return steps


_COST, _READS_OF = attrgetter("cost"), attrgetter("reads")
_COST_OF = attrgetter("cost", "units", "launch_units")  # what a compute's nominal cost depends on
_TRIES_OF = attrgetter("lanes", "backoff")  # and a poll's try and retry
_FIRST, _SECOND = itemgetter(0), itemgetter(1)
_PRICES = ("nominal prices",)  # the table's cache's entry of _prices


def _prices(ho: Handoffs, prof: GpuProfile) -> tuple[dict, dict]:
    """The nominal costs of ``prof`` asked so far by the launch of ``ho`` (by ``_COST_OF``)
    and its polls' tries and retries (by ``_TRIES_OF``), kept with the table for the
    profile last run."""
    hit = ho.poll_cache.get(_PRICES)
    if hit is None or hit[0] is not prof:
        hit = ho.poll_cache[_PRICES] = (prof, {}, {})
    return hit[1], hit[2]


def _each(it: Iterable[Any]) -> None:
    """Run an iterator of calls to its end, in C."""
    deque(it, maxlen=0)


class _Shape(NamedTuple):
    """Where a program's ops of each kind with a value of their own lie, and the computes
    that follow a Use (fused with it unless ``_share`` may scale them): one a distinct
    tuple of kinds (a K1 launch's programs have a handful)."""

    barriers: tuple[int, ...]
    computes: tuple[int, ...]
    polls: tuple[int, ...]
    flagged: tuple[int, ...]
    puts: tuple[int, ...]  # puts and publishes
    used: tuple[int, ...]


# a program's kinds -> its shape; a kinds and the computes kept apart -> its fusion: a
# process's programs have few distinct kinds (each launch shape a handful), kept a while
_SHAPES: dict[tuple[int, ...], _Shape] = {}
_FUSIONS: dict[tuple[tuple[int, ...], tuple[int, ...]], tuple[tuple[int, ...], ...]] = {}
_KEPT = 4096  # the most of either kept; past it they are made again


def _shape(kinds: tuple[int, ...]) -> _Shape:
    hit = _SHAPES.get(kinds)
    if hit is None:
        at: dict[int, list[int]] = {_BARRIER: [], _COMPUTE: [], _POLL: [], _FLAGGED: [], _PUT: []}
        used: list[int] = []
        prev = -1
        for i, kind in enumerate(kinds):
            if kind in _OWN_VALUE or kind == _BARRIER:
                at[_PUT if kind == _PUBLISH else kind].append(i)
                if kind == _COMPUTE and prev == _USE:
                    used.append(i)
            prev = kind
        if len(_SHAPES) >= _KEPT:
            _SHAPES.clear()
        hit = _SHAPES[kinds] = _Shape(
            *(tuple(at[k]) for k in (_BARRIER, _COMPUTE, _POLL, _FLAGGED, _PUT)), tuple(used)
        )
    return hit


def _fusion(
    kinds: tuple[int, ...], keep: tuple[int, ...], ops: tuple, apart: Container[str]
) -> tuple[tuple[int, ...], ...]:
    """The fused steps (``_fused``) of a program of ``kinds`` whose computes after a Use
    that ``_share`` may scale are ``keep`` (``ops`` one such program's, ``apart`` the
    stages ``_share`` may scale) as each step's op number and kind and the numbers of the
    ops it takes its op and value from: the same for every program of that key, for its
    ops and values to be laid in in C."""
    key = (kinds, keep)
    hit = _FUSIONS.get(key)
    if hit is None:
        n = range(len(kinds))
        at = list(map(_At, n, map(getattr, ops, repeat("cost"), repeat(None))))
        fused = [
            (k, kind, op.i, v)
            for k, kind, op, v in _fused(zip(n, kinds, at, n, strict=True), apart)
        ]
        if len(_FUSIONS) >= _KEPT:
            _FUSIONS.clear()
        hit = _FUSIONS[key] = tuple(zip(*fused, strict=True)) if fused else ((), (), (), ())
    return hit


class _At(NamedTuple):
    """An op's number and its stage cost key (None: not a compute), as ``_fused`` reads an op."""

    i: int
    cost: str | None


def _fused(steps: Iterable[Step], shared: Container[str]) -> tuple[Step, ...]:
    """A nominal program's steps with adjacent ops that the loop runs the same way in one
    step as in two made one, the parts run in order (the same floats added in the same
    order), where a step's dispatch costs as much as a barrier's or an end's work (in a K1
    launch about seven steps are left for ten ops: bench/README.md, "Fewer steps a launch"):

    - a stage's seam: a barrier, the stage's end and the next stage's begin, where they
      follow each other, are one step whose kind has a bit each (``_BARRED``, ``_END``,
      ``_BEGIN``), its op the begin's and its value the barrier's latency;
    - a ``Use`` and the compute after it (``_USED``), its value the compute's nominal
      cost, unless ``_share`` may scale it (a stage of ``shared``: decided as it runs)."""
    out: list[Step] = []
    for step in steps:
        kind = step[1]
        if not out:
            out.append(step)
            continue
        k, prev, op, v = out[-1]
        if kind in (_END, _BEGIN):
            # after a barrier, or a seam that has no begin yet (nor an end, where this ends)
            if prev == _BARRIER or (
                _END <= prev < _STORE and not prev & _BEGIN and not prev & kind
            ):
                if prev == _BARRIER:
                    prev = _BARRED
                out[-1] = (k, prev | kind, step[2] if kind == _BEGIN else op, v)
                continue
        elif kind == _COMPUTE and prev == _USE and step[2].cost not in shared:
            out[-1] = (k, _USED, op, step[3])
            continue
        out.append(step)
    return tuple(out)


def op_kinds(ops: tuple) -> tuple[int, ...]:
    # each op's kind by its type in C (a dict lookup mapped over the types, packed in a
    # bytearray), then the loads found in C (``find``) and looked at in Python: a tenth
    # of a launch's 20,000 ops, where a Python scan of all of them took most of the time
    flagged = LoadKind.FLAGGED
    try:
        out = bytearray(map(_KIND_OF.__getitem__, map(type, ops)))
    except KeyError:  # an op whose type is not itself a kind
        return _kinds_by_class(ops)
    i = out.find(_LOAD)
    while i >= 0:
        if ops[i].kind is flagged:
            out[i] = _FLAGGED
        i = out.find(_LOAD, i + 1)
    return tuple(out)


def _kinds_by_class(ops: tuple) -> tuple[int, ...]:
    """``op_kinds`` where some op's type is not itself a kind: a flagged load's subclass,
    else unknown (KeyError)."""
    kind_of, flagged = _KIND_OF, LoadKind.FLAGGED
    out = list(map(kind_of.get, map(type, ops)))
    for i in compress(count(), map(_LOOK.__contains__, out)):
        op = ops[i]
        if out[i] == _LOAD:
            if op.kind is flagged:
                out[i] = _FLAGGED
        else:
            out[i] = _FLAGGED if isinstance(op, Load) and op.kind is flagged else _KIND_OF[type(op)]
    return tuple(out)


def _woke_after(hbm: SharedBandwidth, eid: int) -> bool:
    """Whether what runs now (an ack) comes after event number ``eid`` at this instant: a
    wake of the server, running now, numbered after it (``SharedBandwidth.next`` holds a
    running wake's key); a join's call calls an ack at once only for no bytes, numbered
    at the store's issue, so before any sleep after it."""
    running = hbm.next
    return hbm.next_t == _INF and running is not None and running[2] > eid


def behind_loads(rec: PollRecord, outstanding: list[Pending]) -> None:
    """The loads of ``outstanding`` (the CTA's loads not seen done at the poll's first
    issue) still in flight at that issue, and their weight bytes, into the poll's record.
    Called once the clock has passed the issue, so an HBM load's end is known by then if
    it came before it (a folded CTA that ran ahead of the clock calls it after the run)."""
    t0 = rec.first_issue
    n = nbytes = 0  # (one loop: a comprehension and a generator were a frame each)
    for p in outstanding:
        span = p.span
        done = span.done
        if done is None or done > t0:
            n += 1
            if span.kind == _WEIGHT_KIND:
                nbytes += span.nbytes
    rec.behind_loads = n
    rec.behind_weight_bytes = nbytes


def _all(env: simpy.Environment, events: list[simpy.Event]) -> simpy.Event:
    return events[0] if len(events) == 1 else simpy.AllOf(env, events)
