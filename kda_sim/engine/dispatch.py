"""Block dispatch: a CTA starts when a slot is free, in dispatch order, and keeps its
slot until it ends. AMD spreads blocks round-robin over its XCDs (block b on XCD
b mod xcds); within an XCD (or on NVIDIA, the whole GPU) a block takes the unit
with the most free slots, the lowest first."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import simpy

from kda_sim.machine.profile import GpuProfile


class Units:
    def __init__(self, env: simpy.Environment, prof: GpuProfile, per_unit: int) -> None:
        self.env = env
        self.prof = prof
        self.free = [per_unit] * prof.units
        self.per_xcd = prof.units // prof.xcds
        self.released = [env.event() for _ in range(prof.xcds)]
        self.waiting: list[int] = []  # blocks that wait for a slot, in order

    def xcd_of_block(self, b: int) -> int:
        return b % self.prof.xcds

    def pick(self, xcd: int) -> int | None:
        lo = xcd * self.per_xcd
        best = max(range(lo, lo + self.per_xcd), key=lambda u: (self.free[u], -u))
        return best if self.free[best] > 0 else None

    def release(self, unit: int) -> None:
        self.free[unit] += 1
        xcd = unit // self.per_xcd
        ev = self.released[xcd]
        self.released[xcd] = self.env.event()
        ev.succeed()


def dispatcher(
    env: simpy.Environment,
    units: Units,
    order: Sequence[int],
    start: Callable[[int, int, int], simpy.Process],
    gap: float,
) -> Generator[Any, Any, None]:
    """Starts blocks in ``order``; ``start(block, unit, xcd)`` returns the CTA's process."""
    units.waiting = list(order)
    for b in order:
        xcd = units.xcd_of_block(b)
        unit = units.pick(xcd)
        while unit is None:
            yield units.released[xcd]
            unit = units.pick(xcd)
        units.free[unit] -= 1
        units.waiting.pop(0)
        proc = start(b, unit, xcd)
        proc.callbacks.append(lambda _ev, u=unit: units.release(u))
        if gap > 0:
            yield env.timeout(gap)
