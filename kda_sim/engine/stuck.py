"""Why a launch did not finish: each waiting CTA, what it waits for, who would put it."""

from __future__ import annotations

import numpy as np

from kda_sim.engine.dispatch import Units
from kda_sim.engine.world import World
from kda_sim.machine.residency import Residency
from kda_sim.protocol.ops import Poll
from kda_sim.text import ordinal
from kda_sim.timeline.model import StuckWait


def _producer_state(world: World, units: Units, res: Residency, d: int) -> str:
    track = world.tracks[d]
    prof = world.prof
    if track.start is None:
        return (
            f"CTA {d} is not resident: all {res.slots} slots ({res.per_unit} a "
            f"{prof.unit_name} x {prof.units}, limited by {res.limited_by}) are held by "
            f"CTAs that wait"
        )
    if track.end is not None:
        return f"CTA {d} finished without putting it"
    k = world.current_op.get(d)
    stage = track.stages[-1].name if track.stages else "start"
    op = world.handoffs.launch.programs[d].ops[k] if k is not None else None
    what = f"polls {op.label}" if isinstance(op, Poll) else "waits"
    return f"CTA {d} is itself stuck in {stage} ({what})"


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
                    f"never became resident: {res.slots} slots ({res.per_unit} a "
                    f"{world.prof.unit_name}, limited by {res.limited_by}) all held; "
                    f"{ordinal(pos + 1)} in the dispatch queue",
                )
            )
            continue
        k = world.current_op.get(c)
        op = ho.launch.programs[c].ops[k] if k is not None else None
        stage = track.stages[-1].name if track.stages else ""
        task = track.stages[-1].task if track.stages else -1
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
        else:
            reason = f"{_producer_state(world, units, res, d)} ({n} pairs missing)"
            producer = d
        out.append(StuckWait(c, stage, task, region.name, index, producer, reason))
    return out
