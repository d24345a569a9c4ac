"""What every K1 stage shares while the kernel is traced: indices, buffer resources,
LDS, the launch's tag, the put / poll / publish helpers (which also keep the
(stage, region, kind) record the protocol model is checked against), the
timeline stamps and, in the ktrace build, the ktrace events.

The ktrace build (``ktrace=True``) records the events
:func:`kda_sim.kernels.k1.ktrace.expected_events` names: a range a stage (a kda stage's
payload: its task) and a mark ``put <REGION>`` a put or publish site after its last
store (where the CTA puts anything), both at wave-uniform code, so in every wave; a
range ``poll <LABEL>`` a poll site from before its first try to after its satisfaction,
in the waves that poll it (a site's threads are its first ones, so wave 0 always does),
with a mark ``retries <LABEL>`` inside it after each call's loop whose payload is the
wave's retries (its slowest thread's; FlyDSL's trace file keeps a range's opening
payload only, so the count, known at the close, is a mark of its own).
Wave 0 thus records every event of its CTA's program, the other waves a part of them, in
the same order; the reader merges a CTA's waves (a poll's first issue the earliest, its
satisfaction the latest)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl._mlir.extras import types as T
from flydsl.expr import ktrace

from kda_kernel.flydsl import dsl, health
from kda_kernel.flydsl.stamps import StampLayout
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import POLL_MAX
from kda_sim.kernels.k1.ktrace import event_name
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.space import CellSpace

Record = tuple[str, str, str]  # (stage, region, kind)


@dataclass
class Recorder:
    """Every put / poll / publish site, in program order, with the stage it is in."""

    records: list[Record] = field(default_factory=list)
    stage: str = ""

    def note(self, region: str, kind: str) -> None:
        rec = (self.stage, region, kind)
        # a site issued several times in a row (a put per row of a range_constexpr)
        # is one site, as the model has one op for it
        if not self.records or self.records[-1] != rec:
            self.records.append(rec)


@dataclass
class Ctx:
    cfg: LaunchConfig
    space: CellSpace
    layout: StampLayout
    tid: fx.Int32
    lane: fx.Int32
    wave: fx.Int32
    bid: fx.Int32
    rs: dict[str, object]  # buffer resources by argument name
    lds: dict[str, fx.Pointer]
    tag: fx.Int32
    rec: Recorder
    timeline: bool
    markers: bool
    has_delta: bool = False  # the prefix + delta build (the slice writes the prefix back)
    bound: dsl.Bound | None = None  # the bounded-wait build's (health, alarm)
    task: object = health.NO_TASK  # the kda task being traced (give-up records name it)
    ktrace: bool = False  # the ktrace build: events at each stage, poll and put site

    def cell(self, region: Region, index: object) -> fx.Int32:
        return dsl.i32(index) + self.space.offsets[region]

    def put(
        self,
        region: Region,
        items: Sequence[tuple[object, object]],
        cond: object,
        *,
        mark: object = True,
    ) -> None:
        """Pairs (index in region, f32 value) put by the threads where ``cond`` holds.
        ``mark``: where this call ends the site (a site put by several calls marks at its
        last; a CTA-uniform condition where some CTAs put nothing), the ktrace build's
        mark after the stores (:meth:`put_mark`)."""
        self.rec.note(region.name, "put")

        def body() -> None:
            for index, value in items:
                dsl.put(self.rs["scratch"], self.cell(region, index), value, self.tag)

        dsl.when(cond, body)
        self.put_mark(region, mark)

    def put_mark(self, region: Region, when: object = True) -> None:
        """The ktrace mark of a put site, where ``when`` (False, True or a CTA-uniform
        condition) holds; called at wave-uniform code, so every wave records it."""
        if not self.ktrace or when is False:
            return
        name = event_name("put", region.name)
        if when is True:
            ktrace.mark(name)
        else:
            dsl.when(when, lambda: ktrace.mark(name))

    def poll(
        self, label: str, cells: Sequence[object], *, opens: bool = True, closes: bool = True
    ) -> list[fx.Int32]:
        """One thread's poll: its cells (global ids) in batches of at most POLL_MAX.
        ``opens`` / ``closes``: whether this call begins / ends the site's ktrace range (a
        site polled by several calls spans from its first to its last)."""
        self.rec.note(label, "poll")
        if self.markers:
            dsl.marker(f"poll {self.rec.stage} {label}")
        if self.ktrace and opens:
            ktrace.range_push(event_name("poll", label))
        got: list[fx.Int32] = []
        retries: fx.Int32 | None = None  # the thread's, over this call's batches (ktrace)
        for lo in range(0, len(cells), POLL_MAX):
            batch = cells[lo : lo + POLL_MAX]
            if self.bound is None and not self.ktrace:
                got += dsl.poll_pairs(self.rs["scratch"], batch, self.tag)
                continue
            if self.bound is None:
                polled = dsl.counted_poll(self.rs["scratch"], batch, self.tag)
            else:
                polled = dsl.bounded_poll(
                    self.rs["scratch"], batch, self.tag, self.bound, count=self.ktrace
                )
                self._give_up(health.site(self.rec.stage, label), batch, polled)
            got += polled.values
            if polled.retries is not None:
                retries = polled.retries if retries is None else retries + polled.retries
        if retries is not None:
            # the wave's retries (its slowest thread's): the marks of a site's calls add up
            ktrace.mark(event_name("retries", label), dsl.wave_max(retries))
        if self.ktrace and closes:
            ktrace.range_pop()
        return got

    def _give_up(self, site: int, cells: Sequence[object], polled: dsl.Polled) -> None:
        """Where the poll gave up with a stale pair: this CTA's record (its first give-up
        only: claimed by a compare-and-swap of the record's tag word, which another
        thread of the CTA may win), and, for a timeout, the abort word that releases
        every other CTA of the launch."""
        assert self.bound is not None and polled.released is not None
        # a kda stage's record must say which task: one traced without it is a kernel bug
        assert not (self.rec.stage.startswith("k.") and isinstance(self.task, int)), site
        hw = self.bound.health
        cell, seen, stale = dsl.i32(-1), dsl.i32(0), fx.Boolean(False)
        for c, t in reversed(list(zip(cells, polled.tags, strict=True))):
            bad = t != self.tag
            cell = bad.select(dsl.i32(c), cell)
            seen = bad.select(t, seen)
            stale = stale | bad
        rec = health.REC0 + self.bid * health.REC_WORDS
        kind = polled.released.select(fx.Int32(health.KIND_RELEASED), fx.Int32(health.KIND_TIMEOUT))

        def fields() -> None:
            now = dsl.realtime()
            lo = fx.Int32(arith.trunci(T.i32(), dsl.ir_of(now)))
            hi = fx.Int32(arith.trunci(T.i32(), dsl.ir_of(now >> 32)))
            values = {
                health.F_KIND: kind,
                health.F_CELL: cell,
                health.F_SEEN: seen,
                health.F_SITE: site,
                health.F_TASK: self.task,
                health.F_TIME_LO: lo,
                health.F_TIME_HI: hi,
            }
            for f, v in values.items():
                dsl.store(dsl.i32(v), hw, rec + f, aux=dsl.CM_DEV)
            dsl.when(
                kind == fx.Int32(health.KIND_TIMEOUT),
                lambda: dsl.store(dsl.i32(self.tag), hw, health.ABORT, aux=dsl.CM_DEV),
            )

        def claim() -> None:
            old = dsl.i32(dsl.load(hw, rec + health.F_TAG, aux=dsl.CM_DEV))

            def swap() -> None:
                prev = dsl.atomic_cmpswap(hw, rec + health.F_TAG, old, self.tag)
                dsl.when(prev == old, fields)

            dsl.when(old != self.tag, swap)

        dsl.when(stale, claim)

    def publish(self, region: Region, index: object, cond: object) -> None:
        """Drain this CTA's stores, barrier, then the flag (release by hand)."""
        self.rec.note(region.name, "publish")
        dsl.drain_stores()
        dsl.barrier()
        if self.markers:
            dsl.marker(f"publish {self.rec.stage} {region.name}")
        dsl.when(cond, lambda: dsl.put(self.rs["scratch"], self.cell(region, index), 1, self.tag))
        self.put_mark(region)

    def stamp(self, column: object) -> None:
        if not self.timeline:
            return
        ptr = self.lds["stamps"]
        dsl.when(self.tid == 0, lambda: fx.ptr_store(dsl.realtime(), ptr + dsl.i32(column)))

    @contextmanager
    def stage(self, name: str, column: object | None = None) -> Iterator[None]:
        """Record ops under ``name``; stamp ``column`` when the stage ends. The ktrace
        build's range of the stage spans the body (a kda stage's payload: its task)."""
        outer, self.rec.stage = self.rec.stage, name
        if self.ktrace:
            ktrace.range_push(name, self.task if name.startswith("k.") else None)
        try:
            yield
        finally:
            if self.ktrace:
                ktrace.range_pop()
            self.rec.stage = outer
            if column is not None:
                self.stamp(column)
