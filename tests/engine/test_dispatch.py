"""Block dispatch: slots for one footprint, each unit's threads, registers and LDS shared
CTA by CTA for grids of different footprints."""

from __future__ import annotations

import dataclasses
from collections.abc import Generator
from typing import Any

import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine import timers
from kda_sim.engine.dispatch import Units, dispatcher
from kda_sim.machine import load_gpu
from kda_sim.machine.residency import Footprint

B200 = load_gpu("b200")
# two SMs on one die keep the placements readable
TWO = dataclasses.replace(B200, units=2, xcds=1)
BIG = Footprint(256, 256 * 64, 213 * 1024)  # a mirage worker (#761)
SMALL = Footprint(32, 32 * 64, 16 * 1024)


def _place(prof, feet, per_unit: int = 32) -> tuple[dict[int, int], list[int]]:
    """Where each block of ``feet`` starts (blocks never end), and the blocks left waiting."""
    env = simpy.Environment()
    units = Units(env, prof, per_unit, feet)
    placed: dict[int, int] = {}

    def forever():  # a CTA that never retires
        yield env.event()

    def start(b: int, unit: int, _xcd: int) -> simpy.Process:
        placed[b] = unit
        return env.process(forever())

    env.process(dispatcher(env, units, list(range(len(feet))), start, 0.0))
    env.run()
    return placed, units.waiting


def test_small_ctas_placed_first_spread_and_strand_the_large() -> None:
    placed, waiting = _place(TWO, [SMALL, SMALL, BIG, BIG])
    assert placed == {0: 0, 1: 1}  # one small CTA a unit: the emptiest unit first
    assert waiting == [2, 3]  # 213 KiB + 16 KiB exceed an SM's 228 KiB


def test_large_ctas_placed_first_leave_the_small_ones_room_to_pack() -> None:
    placed, waiting = _place(TWO, [BIG, SMALL, SMALL, SMALL])
    assert waiting == []
    assert placed == {0: 0, 1: 1, 2: 1, 3: 1}  # the small CTAs share the free SM


def test_a_unit_takes_ctas_up_to_its_thread_budget() -> None:
    wide = Footprint(1024, 1024, 0)  # 2048 threads an SM: two of these
    placed, waiting = _place(dataclasses.replace(B200, units=1, xcds=1), [wide] * 3)
    assert list(placed) == [0, 1] and waiting == [2]


def test_the_why_names_the_short_resource_on_every_unit() -> None:
    env = simpy.Environment()
    units = Units(env, TWO, 32, [SMALL, SMALL, BIG])
    for b, u in ((0, 0), (1, 1)):
        units.take(u, b)
    assert units.short(2) == {"LDS": 2}
    units.release(1, 1)
    assert units.pick(0, 2) == 1


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), min_size=4, max_size=4),
    st.integers(0, 1),
)
def test_pick_is_the_unit_with_room_holding_fewest_lowest_on_a_tie(
    state: list[tuple[int, int]], xcd: int
) -> None:
    prof = dataclasses.replace(B200, units=4, xcds=2)
    units = Units(simpy.Environment(), prof, 2)
    units.set_slots([f for f, _ in state], [h for _, h in state])
    lo = xcd * units.per_xcd
    room = [u for u in range(lo, lo + units.per_xcd) if units.free[u] > 0]
    want = min(room, key=lambda u: (units.held[u], u)) if room else None
    assert units.pick(xcd) == want


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.integers(0, 7)), max_size=40))
def test_pick_after_takes_and_releases_is_the_unit_with_room_holding_fewest(
    moves: list[tuple[bool, int]],
) -> None:
    """``take`` and ``release`` keep the rooms ``pick`` reads: after each, each XCD's pick
    is the unit with room holding the fewest CTAs, the lowest on a tie."""
    prof = dataclasses.replace(B200, units=8, xcds=2)
    units = Units(simpy.Environment(), prof, 2)
    for take, u in moves:
        if take and units.free[u] > 0:
            units.take(u, 0)
        elif not take and units.held[u] > 0:
            units.release(u)
        for xcd in (0, 1):
            lo = xcd * units.per_xcd
            room = [v for v in range(lo, lo + units.per_xcd) if units.free[v] > 0]
            want = min(room, key=lambda v: (units.held[v], v)) if room else None
            assert units.pick(xcd) == want


def test_a_measured_placement_puts_each_block_on_its_unit() -> None:
    """K1 on the H200 as a trace placed it (two CTAs an SM, pairs the dispatcher would not
    make): each CTA runs on its unit; a placement that names a unit the GPU lacks, or not
    one for every block, is refused."""
    import pytest

    from kda_sim.engine import simulate
    from kda_sim.errors import InvalidInput
    from kda_sim.kernels.k1.config import LaunchConfig

    # gemv slowed where two gemv CTAs share an SM: who shares one matters to the launch
    prof = dataclasses.replace(load_gpu("h200"), unit_shared=("gemv",), unit_share=0.5)
    cfg = LaunchConfig(1, 1)
    default = simulate(cfg, prof).timeline
    # the dispatcher's pairs are (b, b + 132); these put b with b + 128, some units alone
    place = tuple(b % 128 if b < 256 else 0 for b in range(256))
    placed = simulate(cfg, prof, placement=place).timeline
    assert [c.unit for c in placed.ctas] == list(place)
    assert [c.unit for c in default.ctas] != list(place)
    assert placed.makespan != default.makespan
    for bad in (place[:-1], (*place[:-1], 132)):
        with pytest.raises(InvalidInput, match="placement"):
            simulate(cfg, prof, placement=bad)


def _run_blocks(lean: bool) -> tuple[list[str], int]:
    """Six blocks on two units of one slot each, started 0.5 apart: each sleeps, at times
    tied with a clock's ticks, the gaps' timers and the others' ends, and logs what it
    does; ``lean``: the blocks and the dispatcher as ``timers.Proc`` (its ends fired onto
    a ready list), else SimPy's processes. What ran when, and the event numbers taken."""
    env = simpy.Environment()
    units = Units(env, TWO, 1, fold=True)
    server = timers._Idle()  # a run given no server: its ready list alone
    log: list[str] = []

    def block(b: int) -> Generator[Any, Any, None]:
        log.append(f"start {b}@{env.now}")
        for d in (0.5, 1.0 + 0.5 * (b % 2), 0.0):
            yield timers.at_time(env, env.now + d)
            log.append(f"{b}@{env.now}")

    def start(b: int, unit: int, _xcd: int) -> simpy.Process | timers.Proc:
        log.append(f"dispatch {b} on {unit}@{env.now}")
        if lean:
            return timers.process(env, block(b), server.ready)
        return env.process(block(b))

    for t in (0.5, 1.0, 1.5, 2.0, 2.5, 3.0):  # a clock's ticks, made first
        timers.at_time(env, t, lambda _ev, t=t: log.append(f"tick@{t}"))
    gen = dispatcher(env, units, list(range(6)), start, 0.5)
    if lean:
        proc = timers.process(env, gen, server.ready)
        proc.resume(timers.STARTED)
    else:
        env.process(gen)
    timers.run(env, None, server)
    return log, next(env._eid)


def test_blocks_run_as_procs_start_and_end_where_simpys_processes_do() -> None:
    """A block started as a ``timers.Proc`` runs its first step where its ``Initialize``
    would (after the gap's timer is made, before anything else at that instant), and its
    end frees its unit where its process's event would: the same log, the same event
    numbers taken, with blocks waiting for a unit to free."""
    lean, lean_eids = _run_blocks(lean=True)
    simpys, simpy_eids = _run_blocks(lean=False)
    assert lean == simpys
    assert lean_eids == simpy_eids
    # block 2 takes block 0's unit the instant it ends; block 1 starts before block 0's
    # first sleep ends, tied at 0.5, since the gap's timer is made before that sleep
    assert lean[9:13] == ["0@1.5", "0@1.5", "dispatch 2 on 0@1.5", "start 2@1.5"]
    assert lean.index("dispatch 1 on 1@0.5") < lean.index("0@0.5")
