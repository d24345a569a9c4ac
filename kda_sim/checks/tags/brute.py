"""Exhaustive search for a stale pass, for scaled-down schemes (test support).

Walks every sequence of step shapes from the start state (the epoch counter at
``epoch0``, every pair cleared) breadth first over the states a step can leave behind
(the epoch and the tag each class of pairs holds), running each step slot by slot: a poll
passes stale if the pair holds this launch's tag before this launch wrote it. Only small
schemes are feasible (a few tag bits, few classes): that is its use, checking the analytic
verdict of :mod:`kda_sim.checks.tags.analysis` on every model small enough to enumerate.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from kda_sim.checks.tags.analysis import Policy
from kda_sim.checks.tags.footprint import StepModel
from kda_sim.checks.tags.schemes import CLEARED, TagScheme


@dataclass(frozen=True)
class BruteResult:
    stale: bool
    steps: int  # steps run up to and including the one with the stale pass (or explored)
    states: int
    shapes: tuple[int, ...] = ()  # the shape sequence that reaches it


def exhaustive(
    model: StepModel,
    scheme: TagScheme,
    policy: Policy,
    *,
    epoch0: int = 0,
    max_states: int = 2_000_000,
) -> BruteResult:
    k, n, c = model.writes.shape
    w = [[np.flatnonzero(model.writes[a, s]).tolist() for s in range(n)] for a in range(k)]
    p = [[np.flatnonzero(model.polls[a, s]).tolist() for s in range(n)] for a in range(k)]
    start = (epoch0, (CLEARED,) * c)
    seen = {start}
    queue: deque[tuple[tuple[int, tuple[int, ...]], tuple[int, ...]]] = deque([(start, ())])
    while queue:
        (epoch, held), path = queue.popleft()
        for a in range(k):
            cells = [CLEARED] * c if policy is Policy.ZEROED else list(held)
            stale = False
            for s in range(n):
                t = scheme.tag(epoch, s)
                if any(cells[x] == t for x in p[a][s]):
                    stale = True
                    break
                for x in w[a][s]:
                    cells[x] = t
            if stale:
                return BruteResult(True, len(path) + 1, len(seen), (*path, a))
            nxt = (scheme.next_epoch(epoch), tuple(cells))
            if nxt not in seen:
                if len(seen) >= max_states:
                    raise RuntimeError(f"more than {max_states} states: scheme too large")
                seen.add(nxt)
                queue.append((nxt, (*path, a)))
    return BruteResult(False, 0, len(seen))


def random_model(
    rng: np.random.Generator, shapes: int, slots: int, classes: int, density: float = 0.5
) -> StepModel:
    """An abstract step model (no K1 layout): random writes and polls per shape and slot."""
    writes = rng.random((shapes, slots, classes)) < density
    polls = rng.random((shapes, slots, classes)) < density
    return StepModel(
        tuple(f"shape{i}" for i in range(shapes)),
        (0,) * slots,
        writes,
        polls,
        np.ones(classes, dtype=np.int64),
        np.arange(classes, dtype=np.int64),
    )
