"""Block dispatch: a CTA starts when a unit has room for it, in dispatch order, and keeps
its room until it ends. AMD spreads blocks round-robin over its XCDs (block b on XCD
b mod xcds); within an XCD (or on NVIDIA, the whole GPU) a block takes the unit with the
most room, the lowest first. A measured launch's placement (``placement``: each block's
unit, as its trace recorded them) replaces that choice: a block takes its own unit, waiting
there for room if it must; the hardware's block scheduler places blocks by state this
model does not hold (on the H200 it rotates the first GPC a launch starts from).

Room is counted in slots when every CTA takes the same (a unit holds ``per_unit``); grids
launched together with different footprints (``feet``, one a block) share each unit's
threads, registers and LDS instead, and the unit with most room is the one holding the
fewest CTAs (for equal footprints, the same unit as the most free slots)."""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import Any

import simpy

from kda_sim.engine.timers import STARTED, Proc, at_time
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import Footprint, short_of


class Units:
    def __init__(
        self,
        env: simpy.Environment,
        prof: GpuProfile,
        per_unit: int,
        feet: Sequence[Footprint] | None = None,
        fold: bool = False,
        placement: Sequence[int] | None = None,
    ) -> None:
        self.env = env
        self.placement = placement  # each block's unit, where a measured launch gives them
        self.fold = fold  # a release nobody waits for triggers no event (World.fold)
        self.prof = prof
        self.free = [per_unit] * prof.units
        self.per_xcd = prof.units // prof.xcds
        self.released = [env.event() for _ in range(prof.xcds)]
        self.waiting: list[int] = []  # blocks that wait for a slot, in order
        self.feet = feet
        self.used = [Footprint(0, 0, 0)] * prof.units  # with ``feet``: what each unit holds
        self.held = [0] * prof.units  # CTAs resident on each unit

    def xcd_of_block(self, b: int) -> int:
        if self.placement is not None:
            return self.placement[b] // self.per_xcd
        return b % self.prof.xcds

    def _fits(self, u: int, b: int) -> bool:
        if self.free[u] <= 0:
            return False
        if self.feet is None:
            return True
        return not short_of(self.used[u], self.held[u], self.feet[b], self.prof)

    def pick(self, xcd: int, b: int = 0) -> int | None:
        """The unit of ``xcd`` with room for block ``b`` holding the fewest CTAs, the
        lowest on a tie; None when none has room."""
        if self.placement is not None:  # the unit the measured launch put it on
            u = self.placement[b]
            return u if self._fits(u, b) else None
        lo = xcd * self.per_xcd
        if self.feet is not None:
            fit = [u for u in range(lo, lo + self.per_xcd) if self._fits(u, b)]
            return min(fit, key=lambda u: (self.held[u], u)) if fit else None
        # equal footprints: a free slot is room. The unit holding the fewest (the lowest on
        # a tie), found in C, is the one if it has room (any other with room holds as many
        # or more); it has unless none has (``take`` and ``release`` move a unit's room
        # and its CTAs together). Else a scan (132 units a block, 256 blocks a K1 launch)
        free, held = self.free, self.held
        hi = lo + self.per_xcd
        some = held[lo:hi]
        u = lo + some.index(min(some))
        if free[u] > 0:
            return u
        best, fewest = None, 0
        for u in range(lo, hi):
            if free[u] > 0 and (best is None or held[u] < fewest):
                best, fewest = u, held[u]
        return best

    def take(self, unit: int, b: int) -> None:
        self.free[unit] -= 1
        self.held[unit] += 1
        if self.feet is not None:
            self.used[unit] = _add(self.used[unit], self.feet[b], 1)

    def release(self, unit: int, b: int = 0) -> None:
        self.free[unit] += 1
        self.held[unit] -= 1
        if self.feet is not None:
            self.used[unit] = _add(self.used[unit], self.feet[b], -1)
        xcd = unit // self.per_xcd
        ev = self.released[xcd]
        if self.fold and not ev.callbacks:
            return  # no block waits for room on this XCD: the event stays for the next
        self.released[xcd] = self.env.event()
        ev.succeed()

    def short(self, b: int) -> dict[str, int]:
        """Block ``b`` waiting for room: how many units of its XCD lack each resource
        (the first each lacks), the units a shared launch's explanation names."""
        assert self.feet is not None
        lo = self.xcd_of_block(b) * self.per_xcd
        out: dict[str, int] = {}
        for u in range(lo, lo + self.per_xcd):
            what = short_of(self.used[u], self.held[u], self.feet[b], self.prof) or "slots"
            out[what] = out.get(what, 0) + 1
        return out


def _add(a: Footprint, b: Footprint, sign: int) -> Footprint:
    return Footprint(a.threads + sign * b.threads, a.regs + sign * b.regs, a.lds + sign * b.lds)


def dispatcher(
    env: simpy.Environment,
    units: Units,
    order: Sequence[int],
    start: Callable[[int, int, int], simpy.Process | Proc],
    gap: float,
) -> Generator[Any, Any, None]:
    """Starts blocks in ``order``; ``start(block, unit, xcd)`` returns the CTA's process:
    a SimPy ``Process``, or a ``timers.Proc`` not yet started (``gap`` above 0 only), whose
    first step runs here once the next gap's timer is made, where its ``Initialize``
    would have run it: next, ahead of everything else at this instant."""
    units.waiting = list(order)
    for b in order:
        xcd = units.xcd_of_block(b)
        unit = units.pick(xcd, b)
        while unit is None:
            yield units.released[xcd]
            unit = units.pick(xcd, b)
        units.take(unit, b)
        units.waiting.pop(0)
        proc = start(b, unit, xcd)
        proc.callbacks.append(lambda _ev, u=unit, blk=b: units.release(u, blk))
        if gap > 0:  # a Timeout(gap), landing where it would, without its frames
            timer = at_time(env, env._now + gap)
            if type(proc) is Proc:
                proc.resume(STARTED)
            yield timer
