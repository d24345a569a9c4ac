"""One CTA's program run as a SimPy process on the machine model."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import Any

import simpy

from kda_sim.engine.world import PutDone, StaleRead, World
from kda_sim.protocol.ops import (
    Barrier,
    Begin,
    Compute,
    End,
    Load,
    LoadKind,
    Poll,
    Publish,
    Put,
    Store,
    Use,
)
from kda_sim.protocol.program import CtaProgram
from kda_sim.timeline.model import CtaTrack, LoadSpan, PollRecord, PutRecord, StageSpan


@dataclass
class Pending:
    event: simpy.Event
    span: LoadSpan


class CtaRun:
    """Runs ``prog`` on unit ``unit`` of XCD ``xcd``; records into ``track``."""

    def __init__(self, world: World, prog: CtaProgram, unit: int, xcd: int) -> None:
        self.w = world
        self.prog = prog
        self.unit = unit
        self.xcd = xcd
        self.track: CtaTrack = world.tracks[prog.cta]
        self.loads: dict[str, Pending] = {}
        self.stores: list[simpy.Event] = []
        self.stage = ""
        self.task = -1
        self.open: StageSpan | None = None

    # -- loads and stores ---------------------------------------------------------------
    def _load_proc(self, op: Load, ev: simpy.Event, span: LoadSpan) -> Generator[Any, Any, None]:
        w = self.w
        if op.hbm:
            yield w.env.timeout(w.sampler.latency("hbm_load"))
            yield w.hbm.transfer(op.nbytes)
        else:
            lat = w.sampler.latency("l2_load")
            yield w.env.timeout(lat + op.nbytes / w.prof.unit_bytes_per_ns)
        span.done = w.env.now
        ev.succeed()

    def _issue(self, op: Load) -> None:
        w = self.w
        span = LoadSpan(op.name, op.kind.value, op.nbytes, w.env.now, None, self.stage, self.task)
        self.track.loads.append(span)
        ev = w.env.event()
        self.loads[op.name] = Pending(ev, span)
        w.env.process(self._load_proc(op, ev, span))
        if op.kind is LoadKind.FLAGGED:
            self._check_flagged(op)

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
                    )
                )

    def _store_proc(self, op: Store, ev: simpy.Event) -> Generator[Any, Any, None]:
        w = self.w
        yield w.env.timeout(w.sampler.latency("store_ack"))
        yield w.hbm.transfer(op.nbytes)
        for cell in op.cells:
            w.data_visible[cell] = w.env.now
            w.data_writer[cell] = self.prog.cta
        ev.succeed()

    def _store(self, op: Store) -> None:
        ev = self.w.env.event()
        self.stores.append(ev)
        self.w.env.process(self._store_proc(op, ev))

    def _outstanding(self) -> list[Pending]:
        return [p for p in self.loads.values() if not p.event.triggered]

    # -- hand-offs ----------------------------------------------------------------------
    def _put(self, k: int, op: Put | Publish) -> None:
        w = self.w
        now = w.env.now
        space = w.handoffs.launch.space
        first = int(op.cells[0]) - space.offsets[op.region] if len(op.cells) else -1
        rec = PutRecord(self.stage, self.task, op.region.name, len(op.cells), first, now)
        self.track.puts.append(rec)
        ref = (self.prog.cta, k)
        w.put_done[ref] = PutDone(now, self.xcd, len(self.track.puts) - 1)
        w.put_event(ref).succeed()

    def _poll(self, k: int, op: Poll) -> Generator[Any, Any, None]:
        w = self.w
        env = w.env
        t0 = env.now
        outstanding = self._outstanding()
        rec = PollRecord(
            self.stage,
            self.task,
            op.label,
            len(op.cells),
            int(op.batches.shape[0]),
            t0,
            None,
            None,
            cells=w.cell_ranges(op.cells),
            behind_loads=len(outstanding),
            behind_weight_bytes=sum(
                p.span.nbytes for p in outstanding if p.span.kind == LoadKind.WEIGHT.value
            ),
        )
        self.track.polls.append(rec)
        lat = w.sampler.latency("poll")
        first_return = t0 + lat
        if w.prof.in_order_loads and outstanding:
            # vmcnt retires in issue order: the poll's load returns behind every earlier one
            yield simpy.AllOf(env, [p.event for p in outstanding])
            first_return = max(first_return, env.now)
        ref = (self.prog.cta, k)
        producers = w.handoffs.producers[ref]
        events = [w.put_event(p) for p in producers]
        if w.handoffs.put_count[op.cells].min(initial=1) == 0:
            events.append(w.never)  # a pair nobody in this launch puts: waits forever
        pending = [e for e in events if not e.triggered]
        if pending:
            yield simpy.AllOf(env, pending)
        visible, last = t0, None
        for p in producers:
            done = w.put_done[p]
            t = done.time + w.sampler.visibility(done.xcd, self.xcd)
            if t >= visible:
                visible, last = t, p
        # tries: the first issued at t0; each later one after the previous returned and
        # the retry sleep; the first try issued once every pair is visible succeeds
        retry = w.sampler.latency("retry")
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
        satisfied = max(issue + lat, first_return)
        if satisfied > env.now:
            yield env.timeout(satisfied - env.now)
        rec.satisfied = satisfied
        rec.retries = tries
        if last is not None:
            rec.producer = last[0]
            rec.put_time = w.put_done[last].time
            rec.put_ref = w.put_done[last].put_index

    # -- stages -------------------------------------------------------------------------
    def _begin(self, op: Begin) -> None:
        self.stage, self.task = op.stage, op.task
        self.open = StageSpan(op.stage, op.task, self.w.env.now, self.w.env.now)
        self.track.stages.append(self.open)

    def _end(self, op: End) -> None:
        if self.open is not None:
            self.open.end = self.w.env.now
        self.open = None

    def run(self) -> Generator[Any, Any, None]:
        w = self.w
        env = w.env
        cta = self.prog.cta
        self.track.start = env.now
        self.track.unit, self.track.xcd = self.unit, self.xcd
        for k, op in enumerate(self.prog.ops):
            w.current_op[cta] = k
            if isinstance(op, Poll):
                yield from self._poll(k, op)
            elif isinstance(op, Compute):
                yield env.timeout(w.sampler.cost(op.cost, op.units))
            elif isinstance(op, Load):
                self._issue(op)
            elif isinstance(op, Use):
                evs = [self.loads[n].event for n in op.names if not self.loads[n].event.triggered]
                if evs:
                    yield simpy.AllOf(env, evs)
            elif isinstance(op, Put):
                self._put(k, op)
            elif isinstance(op, Begin):
                self._begin(op)
            elif isinstance(op, End):
                self._end(op)
            elif isinstance(op, Barrier):
                yield env.timeout(w.sampler.latency("barrier"))
            elif isinstance(op, Store):
                self._store(op)
            elif isinstance(op, Publish):
                if op.drain:
                    pending = [e for e in self.stores if not e.triggered]
                    if pending:
                        yield simpy.AllOf(env, pending)
                    yield env.timeout(w.sampler.latency("barrier"))
                self._put(k, op)
        # the CTA's last stores must land before it retires
        pending = [e for e in self.stores if not e.triggered]
        if pending:
            yield simpy.AllOf(env, pending)
        w.current_op.pop(cta, None)
        self.track.end = env.now
