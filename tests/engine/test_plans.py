"""A launch's poll plans, made for every poll at once, say what each poll alone would."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.engine.plans import poll_plan
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.protocol.handoffs import derive, handoffs_of


def _ranges_alone(space, cells: np.ndarray) -> list[tuple[str, int, int, int]]:
    regs = space.region_of(cells)
    out = []
    for r in np.unique(regs):
        idx = cells[regs == r] - space.offsets[r]
        out.append((space.name(int(r)), int(idx.min()), int(idx.max()), int(idx.size)))
    return out


def test_every_poll_plan_matches_the_poll_alone() -> None:
    ho = derive(handoffs_of(LaunchConfig(2, 2)).launch)  # a fresh cache
    several = 0
    keys: dict[tuple, int] = {}
    for ref, poll in ho.polls:
        plan = poll_plan(ho, ref)
        got = [(c.region, c.first, c.last, c.count) for c in plan.ranges]
        assert got == _ranges_alone(ho.launch.space, poll.cells)
        several += len(got) > 1
        assert (plan.n_cells, plan.n_batches) == (poll.cells.size, poll.batches.shape[0])
        assert plan.producers == ho.producers[ref] and plan.unput == ho.unput[ref]
        assert keys.setdefault(plan.producers, plan.key) == plan.key  # equal sets, one key
    assert several > 0  # polls that read two regions were among them
    assert len(set(keys.values())) == len(keys)  # distinct sets, distinct keys


def test_a_reference_that_is_no_poll_is_refused() -> None:
    ho = derive(handoffs_of(LaunchConfig(1, 1)).launch)
    poll_plan(ho, ho.polls[0][0])
    with pytest.raises(KeyError, match="not one of the launch's polls"):
        poll_plan(ho, (10**6, 0))


def test_polls_of_equal_cells_share_one_cell_set_number() -> None:
    """``PollPlan.cell_set``: one number a distinct cell set, its ranges one list (the
    engine counts a put's crowd of pollers by it)."""
    ho = derive(handoffs_of(LaunchConfig(2, 2)).launch)
    numbers: dict[bytes, int] = {}
    ranges: dict[int, list] = {}
    for ref, poll in ho.polls:
        plan = poll_plan(ho, ref)
        cells = np.asarray(poll.cells, dtype=np.int64).tobytes()
        assert numbers.setdefault(cells, plan.cell_set) == plan.cell_set
        assert ranges.setdefault(plan.cell_set, plan.ranges) is plan.ranges
    assert len(set(numbers.values())) == len(numbers) < len(ho.polls)  # some sets shared
