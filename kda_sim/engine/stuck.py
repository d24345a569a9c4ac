"""Why a launch did not finish: each waiting CTA, what it waits for, who would put it."""

from __future__ import annotations

import numpy as np

from kda_sim.engine.dispatch import Units
from kda_sim.engine.words import Waiting
from kda_sim.engine.world import World
from kda_sim.machine.residency import Residency
from kda_sim.protocol.ops import Poll
from kda_sim.protocol.tickets import split_ref
from kda_sim.text import ordinal
from kda_sim.timeline.model import StuckWait


def _no_room(world: World, units: Units, res: Residency, b: int) -> str:
    """Why block ``b`` has no place: every slot held, or (grids sharing units by
    footprint) what each unit lacks for its CTA."""
    prof = world.prof
    if not res.shared or units.feet is None:
        return (
            f"all {res.slots} slots ({res.per_unit} a {prof.unit_name} x {prof.units}, "
            f"limited by {res.limited_by}) are held"
        )
    short = ", ".join(
        f"{what} short on {n} {prof.unit_name}s" for what, n in units.short(b).items()
    )
    return f"no {prof.unit_name} has room for its {units.feet[b].text()}: {short}"


def _queued(world: World, units: Units, res: Residency) -> str:
    """The CTAs still waiting for a place, if any, and what kept them out."""
    if not units.waiting:
        return ""
    n = len(units.waiting)
    if res.shared:
        return f"; {n} CTAs never became resident ({_no_room(world, units, res, units.waiting[0])})"
    return f"; {n} CTAs never became resident ({res.slots} slots, limited by {res.limited_by})"


def _producer_state(world: World, units: Units, res: Residency, d: int) -> str:
    track = world.tracks[d]
    if track.start is None:
        return f"CTA {d} is not resident: {_no_room(world, units, res, d)} by CTAs that wait"
    if track.end is not None:
        return f"CTA {d} finished without putting it"
    k = world.current_op.get(d)
    stage = track.stages[-1].name if track.stages else "start"
    op = world.handoffs.launch.programs[d].ops[k] if k is not None else None
    what = f"polls {op.label}" if isinstance(op, Poll) else "waits"
    return f"CTA {d} is itself stuck in {stage} ({what})"


def _item_state(world: World, units: Units, res: Residency, ref: tuple[int, int]) -> str:
    """Where a ticket item that puts a missing pair is: held by a CTA that waits, or not
    taken yet (its producer is whichever CTA takes it)."""
    _loop, item, _k = split_ref(ref)  # type: ignore[misc]
    holder = next((c for c, (_, i, _) in world.current_item.items() if i == item), None)
    if holder is not None:
        return f"item {item} is held by CTA {holder}, itself stuck"
    held = _queued(world, units, res)
    return f"item {item} is not taken: every resident CTA holds an item that waits{held}"


def _word_wait(
    world: World, units: Units, res: Residency, c: int, stage: str, task: int, wt: Waiting
) -> StuckWait:
    """A CTA that waits on a counter or flag word: the value awaited, the value it reads,
    its last writer, and the CTAs that could still write it."""
    space = world.handoffs.launch.space
    region, index = space.split(wt.op.cell)
    hist = world.words.writes.get(wt.op.cell, [])
    last = f"last written by CTA {hist[-1].cta}" if hist else "never written"
    item = f" (item {wt.item})" if wt.item >= 0 else ""
    others = [t.cta for t in world.tracks if t.end is None and t.start is not None and t.cta != c]
    held = _queued(world, units, res)
    reason = (
        f"waits{item} until {region.name}[{index}] {wt.op.pred.value} {wt.target}: it reads "
        f"{wt.seen} ({last}); {len(others)} other resident CTAs wait too{held}"
    )
    producer = hist[-1].cta if hist else None
    return StuckWait(c, stage, task, region.name, index, producer, reason)


def _dispatch_wait(world: World, units: Units, res: Residency, c: int) -> str:
    if res.shared:
        return _no_room(world, units, res, c)
    return (
        f"{res.slots} slots ({res.per_unit} a {world.prof.unit_name}, limited by "
        f"{res.limited_by}) all held"
    )


def explain_stuck(world: World, units: Units, res: Residency) -> list[StuckWait]:
    ho = world.handoffs
    space = ho.launch.space
    out: list[StuckWait] = []
    for track in world.tracks:
        if track.end is not None:
            continue
        c = track.cta
        if track.start is None:
            pos = units.waiting.index(c) if c in units.waiting else -1
            out.append(
                StuckWait(
                    c,
                    "dispatch",
                    -1,
                    "",
                    -1,
                    None,
                    f"never became resident: {_dispatch_wait(world, units, res, c)}; "
                    f"{ordinal(pos + 1)} in the dispatch queue",
                )
            )
            continue
        k = world.current_op.get(c)
        op = ho.launch.programs[c].ops[k] if k is not None else None
        if c in world.current_item:  # a ticket loop's body runs: the op of the item
            lk, item, bk = world.current_item[c]
            op = ho.launch.programs[c].ops[lk].bodies[item][bk]
        stage = track.stages[-1].name if track.stages else ""
        task = track.stages[-1].task if track.stages else -1
        waiting = world.words.waiting.get(c) if world.words is not None else None
        if waiting is not None:
            out.append(_word_wait(world, units, res, c, stage, task, waiting))
            continue
        if not isinstance(op, Poll):
            out.append(StuckWait(c, stage, task, "", -1, None, "waits (not on a poll)"))
            continue
        cells = op.cells
        cnt = ho.put_count[cells]
        done = np.array([(int(ho.put_cta[g]), int(ho.put_op[g])) in world.put_done for g in cells])
        missing = cells[~done]
        region, index = space.split(int(missing[0]))
        d = int(ho.put_cta[missing[0]])
        n = len(missing)
        if cnt[~done][0] == 0:
            reason = f"no CTA of this launch puts {region.name}[{index}] ({n} pairs missing)"
            producer = None
        elif split_ref((d, 0)) is not None:  # an item puts it
            ref = (d, int(ho.put_op[missing[0]]))
            reason = f"{_item_state(world, units, res, ref)} ({n} pairs missing)"
            producer = None
        else:
            reason = f"{_producer_state(world, units, res, d)} ({n} pairs missing)"
            producer = d
        out.append(StuckWait(c, stage, task, region.name, index, producer, reason))
    return out
