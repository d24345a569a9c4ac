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
        self.per_xcd = prof.units // prof.xcds
        self.released = [env.event() for _ in range(prof.xcds)]
        self.waiting: list[int] = []  # blocks that wait for a slot, in order
        self.feet = feet
        self.used = [Footprint(0, 0, 0)] * prof.units  # with ``feet``: what each unit holds
        # each XCD's units with a free slot by the CTAs they hold: bit i of its
        # ``rooms[x][h]`` is unit ``x * per_xcd + i`` holding h with room (equal
        # footprints: ``pick`` reads the lowest bit of the first level set, not a scan of
        # the XCD's units a block)
        self._rooms: list[list[int]] = []
        self._free = [per_unit] * prof.units
        self._held = [0] * prof.units  # CTAs resident on each unit
        self._count_rooms()

    @property
    def free(self) -> list[int]:
        """Each unit's free slots."""
        return self._free

    @property
    def held(self) -> list[int]:
        """The CTAs resident on each unit."""
        return self._held

    def set_slots(self, free: list[int], held: list[int]) -> None:
        """Each unit's free slots and resident CTAs set whole (any state, not only one
        ``take`` and ``release`` reach): the rooms are counted again."""
        self._free, self._held = free, held
        self._count_rooms()

    def _count_rooms(self) -> None:
        free, held, n = self._free, self._held, self.per_xcd
        levels = max(held, default=0) + 1
        self._rooms = [[0] * levels for _ in range(self.prof.xcds)]
        for u, (f, h) in enumerate(zip(free, held, strict=True)):
            if f > 0:
                self._rooms[u // n][h] |= 1 << (u % n)

    def _moved(self, u: int, was: int) -> None:
        """Unit ``u``, holding ``was`` CTAs before, took or released one: its room's bit
        moves to the level it holds now, or goes where it has no free slot."""
        x, i = divmod(u, self.per_xcd)
        levels, bit = self._rooms[x], 1 << i
        if was < len(levels):
            levels[was] &= ~bit
        if self._free[u] > 0:
            h = self._held[u]
            while h >= len(levels):
                levels.append(0)
            levels[h] |= bit

    def xcd_of_block(self, b: int) -> int:
        if self.placement is not None:
            return self.placement[b] // self.per_xcd
        return b % self.prof.xcds

    def _fits(self, u: int, b: int) -> bool:
        if self._free[u] <= 0:
            return False
        if self.feet is None:
            return True
        return not short_of(self.used[u], self._held[u], self.feet[b], self.prof)

    def pick(self, xcd: int, b: int = 0) -> int | None:
        """The unit of ``xcd`` with room for block ``b`` holding the fewest CTAs, the
        lowest on a tie; None when none has room."""
        if self.placement is not None:  # the unit the measured launch put it on
            u = self.placement[b]
            return u if self._fits(u, b) else None
        if self.feet is not None:
            lo = xcd * self.per_xcd
            fit = [u for u in range(lo, lo + self.per_xcd) if self._fits(u, b)]
            return min(fit, key=lambda u: (self._held[u], u)) if fit else None
        # equal footprints: a free slot is room; the fewest held is the first level with a
        # unit, the lowest unit its lowest bit
        for room in self._rooms[xcd]:
            if room:
                return xcd * self.per_xcd + (room & -room).bit_length() - 1
        return None

    def take(self, unit: int, b: int) -> None:
        was = self._held[unit]
        self._free[unit] -= 1
        self._held[unit] = was + 1
        if self.feet is None:
            self._moved(unit, was)
        else:
            self.used[unit] = _add(self.used[unit], self.feet[b], 1)

    def release(self, unit: int, b: int = 0) -> None:
        was = self._held[unit]
        self._free[unit] += 1
        self._held[unit] = was - 1
        if self.feet is None:
            self._moved(unit, was)
        else:
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
            what = short_of(self.used[u], self._held[u], self.feet[b], self.prof) or "slots"
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
