"""What every K1 stage shares while the kernel is traced: indices, buffer resources,
LDS, the launch's tag, the put / poll / publish helpers (which also keep the
(stage, region, kind) record the protocol model is checked against) and the
timeline stamps."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl.stamps import StampLayout
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import POLL_MAX
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

    def cell(self, region: Region, index: object) -> fx.Int32:
        return dsl.i32(index) + self.space.offsets[region]

    def put(self, region: Region, items: Sequence[tuple[object, object]], cond: object) -> None:
        """Pairs (index in region, f32 value) put by the threads where ``cond`` holds."""
        self.rec.note(region.name, "put")

        def body() -> None:
            for index, value in items:
                dsl.put(self.rs["scratch"], self.cell(region, index), value, self.tag)

        dsl.when(cond, body)

    def poll(self, label: str, cells: Sequence[object]) -> list[fx.Int32]:
        """One thread's poll: its cells (global ids) in batches of at most POLL_MAX."""
        self.rec.note(label, "poll")
        if self.markers:
            dsl.marker(f"poll {self.rec.stage} {label}")
        got: list[fx.Int32] = []
        for lo in range(0, len(cells), POLL_MAX):
            got += dsl.poll_pairs(self.rs["scratch"], cells[lo : lo + POLL_MAX], self.tag)
        return got

    def publish(self, region: Region, index: object, cond: object) -> None:
        """Drain this CTA's stores, barrier, then the flag (release by hand)."""
        self.rec.note(region.name, "publish")
        dsl.drain_stores()
        dsl.barrier()
        if self.markers:
            dsl.marker(f"publish {self.rec.stage} {region.name}")
        dsl.when(cond, lambda: dsl.put(self.rs["scratch"], self.cell(region, index), 1, self.tag))

    def stamp(self, column: object) -> None:
        if not self.timeline:
            return
        ptr = self.lds["stamps"]
        dsl.when(self.tid == 0, lambda: fx.ptr_store(dsl.realtime(), ptr + dsl.i32(column)))

    @contextmanager
    def stage(self, name: str, column: object | None = None) -> Iterator[None]:
        """Record ops under ``name``; stamp ``column`` when the stage ends."""
        outer, self.rec.stage = self.rec.stage, name
        try:
            yield
        finally:
            self.rec.stage = outer
            if column is not None:
                self.stamp(column)
