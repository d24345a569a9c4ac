"""Run a launch's programs on a machine model and return its timeline."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from typing import Any

import simpy

from kda_sim.engine import timers
from kda_sim.engine.bandwidth import SharedBandwidth
from kda_sim.engine.cta import CtaRun, behind_loads, running_ops
from kda_sim.engine.dispatch import Units, dispatcher
from kda_sim.engine.initial import Final, Initial
from kda_sim.engine.sampler import Sampler
from kda_sim.engine.stuck import explain_stuck
from kda_sim.engine.words import Words
from kda_sim.engine.world import StaleRead, World
from kda_sim.errors import InvalidInput
from kda_sim.gcpause import gc_paused
from kda_sim.kernels.registry import spec_for
from kda_sim.machine.costs import with_kernel_costs
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import (
    Footprint,
    Residency,
    check_fits,
    footprint,
    residency,
    shared_residency,
)
from kda_sim.protocol.handoffs import derived, handoffs_of
from kda_sim.protocol.program import Launch
from kda_sim.timeline.model import CtaTrack, Meta, Timeline


@dataclass
class SimResult:
    timeline: Timeline
    residency: Residency
    stale_reads: list[StaleRead] = field(default_factory=list)
    events: int = 0  # SimPy events scheduled
    # event numbers taken by calls that are no event (timers.call_at: a folded run's HBM
    # joins and wakes); with ``events``, what an engine scheduling one event each makes
    calls: int = 0
    hbm_bytes: int = 0
    final: Final | None = None  # what memory holds after it (a launch given ``initial``)

    @property
    def deadlock(self) -> bool:
        return self.timeline.deadlock


def _scheduled(env: simpy.Environment) -> int:
    """Events the run scheduled: SimPy numbers them with a counter (``_eid``); reading it
    costs nothing, where counting in an override of ``schedule`` slowed every event."""
    return next(env._eid)


@gc_paused
def simulate(
    cfg: Any,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    seed: int | None = None,
    jitter: float = 0.15,
    order: Sequence[int] | None = None,
    launch: Launch | None = None,
    initial: Initial | None = None,
    grids: Sequence[tuple[Any, int]] | None = None,
    fold_events: bool = True,
    placement: Sequence[int] | None = None,
) -> SimResult:
    """Simulate one launch. Without ``seed`` every latency is nominal (deterministic);
    with one, latencies and costs are jittered by +-``jitter`` (deterministic for the seed).
    ``order`` is the dispatch order (default: block order). ``launch`` runs a transformed
    protocol (the checks' mutants) instead of the one ``cfg``'s kernel builds; its ``cfg``
    must be ``cfg``. ``initial`` is what memory holds at the start (a launch of a host
    sequence; default: words zeroed, no pair tagged); with it the result says what the
    launch leaves (``final``). ``grids`` says which configuration built each run of
    ``launch``'s blocks, ``(cfg, blocks)`` in block order (grids launched together): where
    their CTAs' footprints differ, they share each unit's threads, registers and LDS rather
    than ``cfg``'s slots. ``fold_events`` (on by default) schedules fewer SimPy events for
    the same result (``World.fold``, ``CtaRun``); off, the engine schedules one for each
    step as it did before it folded them (the tests check that both agree, and
    ``bench/sim_bench.py`` counts speed in those). ``placement``: each block's unit, as
    a measured launch placed them (``compare.launch.placement_of``), where the dispatcher
    would otherwise choose (``engine.dispatch``)."""
    spec = spec_for(cfg)
    spec.validate(cfg)
    prof = with_kernel_costs(prof, spec)
    check_fits(cfg, prof)
    res = residency(cfg, prof, occupancy)
    if launch is None:
        ho = handoffs_of(cfg)
        launch = ho.launch
    else:
        if launch.cfg != cfg:
            raise InvalidInput("launch.cfg differs from cfg", what="launch")
        ho = derived(launch)
    blocks = len(launch.programs)
    if order is None:
        order = range(blocks)
    elif sorted(order) != list(range(blocks)):
        raise InvalidInput("a dispatch order must list every block once", what="order")
    env = simpy.Environment()
    tracks = [CtaTrack(p.cta, str(p.role)) for p in launch.programs]
    # folded: the HBM server's joins and wakes are calls, not SimPy events (timers.call_at)
    calls: list[timers.Call] | None = [] if fold_events else None
    hbm = SharedBandwidth(env, prof.hbm_bytes_per_ns, prof.unit_bytes_per_ns, calls)
    sampler = Sampler(prof, seed, jitter)
    world = World(env, prof, sampler, hbm, ho, tracks, never=env.event())
    world.fold = fold_events
    world.cta_factors = sampler.cta_factors(
        max(p.cta for p in launch.programs) + 1, list(spec.stages)
    )
    if initial is not None:
        world.words = Words(env, world.sampler, dict(initial.words))
        world.tagged = initial.tagged
    feet = _shared_feet(grids, prof, blocks)
    if feet is not None:
        res = shared_residency(res, prof)
    if placement is not None:
        placement = tuple(placement)
        if len(placement) != blocks or not all(0 <= u < prof.units for u in placement):
            raise InvalidInput(
                f"a placement names one unit (0..{prof.units - 1}) for each of the {blocks} blocks",
                what="placement",
            )
    units = Units(env, prof, res.per_unit, feet, fold=fold_events, placement=placement)

    gap = world.sampler.latency("dispatch")
    # folded, with a gap between starts: the CTAs and the dispatcher as timers.Proc (no
    # event to start one or for its end, a leaner resume), each taking SimPy's numbers
    lean = fold_events and gap > 0

    runs: list[Generator[Any, Any, float]] = []  # the CTAs' programs, for a stuck report

    def start(b: int, unit: int, xcd: int) -> simpy.Process | timers.Proc:
        gen = CtaRun(world, launch.programs[b], unit, xcd).run()
        runs.append(gen)
        return timers.process(env, gen, hbm.ready) if lean else env.process(gen)

    gen = dispatcher(env, units, list(order), start, gap)
    if lean:  # its Initialize, the only event yet, would run it first
        timers.process(env, gen, hbm.ready).resume(timers.STARTED)
    else:
        env.process(gen)
    # (the collector is paused over the whole of simulate: kda_sim.gcpause)
    made = timers.run(env, calls, hbm if fold_events else None)
    if any(world.resident.values()):  # stopped short: the op each CTA still running is at
        for cta, k in running_ops(runs):
            world.current_op.setdefault(cta, k)
    for rec, outstanding in world.behind_later:
        behind_loads(rec, outstanding)
    meta = Meta.for_launch(
        cfg,
        kernel=spec.name,
        blocks=blocks,
        source="simulated",
        gpu=prof.name,
        clock="simulated ns",
        extra={
            "seed": seed,
            "jitter": jitter if seed is not None else 0.0,
            "occupancy": res.per_unit,
            "slots": res.slots,
            "occupancy_limited_by": res.limited_by,
            **({"costs": prof.costs_from} if prof.costs_from else {}),
            **({"ticket_takes": world.ticket_takes} if world.ticket_takes else {}),
        },
    )
    tl = Timeline(meta, tracks)
    tl.stuck = explain_stuck(world, units, res)
    out = SimResult(
        tl,
        res,
        world.stale_reads,
        events=_scheduled(env) - made,
        hbm_bytes=hbm.bytes_total,
        calls=made,
    )
    if initial is not None:
        out.final = _final(world)
    return out


def _shared_feet(
    grids: Sequence[tuple[Any, int]] | None, prof: GpuProfile, blocks: int
) -> list[Footprint] | None:
    """Each block's footprint when grids of different footprints run together, else None
    (one footprint: slots say the same)."""
    if not grids:
        return None
    if sum(n for _, n in grids) != blocks:
        raise InvalidInput("the grids' blocks do not add up to the launch's", what="grids")
    per_grid = [footprint(c, prof) for c, _ in grids]
    if len(set(per_grid)) == 1:
        return None
    return [f for f, (_, n) in zip(per_grid, grids, strict=True) for _ in range(n)]


def _final(world: World) -> Final:
    words = world.words
    assert words is not None
    return Final(
        put_done={ref: (d.time, d.cta) for ref, d in world.put_done.items()},
        words=dict(words.value),
        word_writer={cell: hist[-1].cta for cell, hist in words.writes.items() if hist},
        stale_polls=world.stale_polls,
        stale_waits=words.stale,
        pair_resets=dict(world.pair_resets),
    )
