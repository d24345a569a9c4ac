"""The shortest host sequence that fails as a given one does.

A breadth-first search over sequences made of the given sequence's own steps (each
launch, grids launched together, replay and host zeroing it takes; ``replay*N`` counts N
replays), shortest first. At each length the given sequence's subsequences come first
(they keep its order, so the answer reads as the given one with steps left out), then
every other arrangement of its steps. A candidate fails as the given one does when its
check reports a failing finding of a category the given one's failing findings have.
Sequences of more than ``MAX_STEPS`` steps are not tried.

A sequence that cannot run is skipped, not simulated: one without a launch, one with a
replay before its first launch, one that ends in a host zeroing (it fails as the shorter
one without it does). The search stops at the first length with a failing sequence, so
every shorter sequence of these steps was simulated and passes; past ``MAX_TRIED``
simulated sequences it gives up and the given sequence stands.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from typing import Any

from kda_sim.checks.findings import Category, failing
from kda_sim.checks.sequence import check_sequence
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import render
from kda_sim.host.steps import HostSequence, LaunchStep, Replay, Step, Together, Zero
from kda_sim.machine.profile import GpuProfile

MAX_TRIED = 64  # sequences the search simulates at most (each one engine run a launch)
MAX_STEPS = 8  # the longest sequence it tries


@dataclass(frozen=True)
class Shortest:
    text: str  # the sequence, as --sequence takes it
    steps: int  # its launches, replays and zeroings (a replay*N counts N)
    given_steps: int  # the given sequence's, counted alike
    tried: int  # sequences simulated
    minimal: bool  # every shorter sequence of the given steps was simulated and passes

    def line(self) -> str:
        """The finding's ``shortest:`` line."""
        if not self.minimal:
            return (
                f"{self.text} (the given sequence: the search stopped after {self.tried} "
                f"sequences of at most {MAX_STEPS} steps without a shorter failing one)"
            )
        if self.steps == self.given_steps:
            return (
                f"{self.text} (the given sequence: no shorter one of its steps fails, "
                f"{self.tried} simulated)"
            )
        return (
            f"{self.text} ({self.steps} steps of the given {self.given_steps}; every shorter "
            f"sequence of its steps passes, {self.tried} simulated)"
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def unrolled(seq: HostSequence) -> tuple[Step, ...]:
    """The sequence's steps one launch, replay or zeroing each."""
    out: list[Step] = []
    for s in seq.steps:
        out += [Replay(1, s.update)] * s.times if isinstance(s, Replay) else [s]
    return tuple(out)


def _runnable(steps: tuple[Step, ...]) -> bool:
    launches = [i for i, s in enumerate(steps) if isinstance(s, LaunchStep | Together)]
    if not launches or isinstance(steps[-1], Zero):
        return False
    return not any(isinstance(s, Replay) for s in steps[: launches[0]])


def _runs_cut(given: tuple[Step, ...], most: int) -> tuple[Step, ...]:
    """``given`` with each run of one step cut to ``most`` (a subsequence of ``most``
    steps takes no more of a run: ``replay*1000`` need not be 1000 choices)."""
    out: list[Step] = []
    run = 0
    for i, s in enumerate(given):
        run = run + 1 if i and given[i - 1] == s else 1
        if run <= most:
            out.append(s)
    return tuple(out)


def candidates(given: tuple[Step, ...], length: int) -> Iterator[tuple[Step, ...]]:
    """Every runnable sequence of ``length`` of ``given``'s steps, each once: the given
    one's subsequences first, in its order, then the other arrangements."""
    alphabet = list(dict.fromkeys(given))
    given = _runs_cut(given, length)
    seen: set[tuple[Step, ...]] = set()
    subs = (
        tuple(given[i] for i in idx) for idx in itertools.combinations(range(len(given)), length)
    )
    for steps in itertools.chain(subs, itertools.product(alphabet, repeat=length)):
        if steps not in seen and _runnable(steps):
            seen.add(steps)
            yield steps


def _fails(
    spec: Any,
    cfg: Any,
    prof: GpuProfile,
    steps: tuple[Step, ...],
    cats: set[Category],
    occupancy: int | None,
) -> bool:
    seq = run_sequence(spec, cfg, prof, HostSequence(steps, render(steps)), occupancy=occupancy)
    return any(f.category in cats for f in failing(check_sequence(seq)))


def shortest(
    spec: Any,
    cfg: Any,
    prof: GpuProfile,
    seq: HostSequence,
    cats: set[Category],
    *,
    occupancy: int | None = None,
) -> Shortest:
    """The shortest sequence of ``seq``'s steps whose check fails with a finding of one of
    ``cats`` (``seq``'s own failing categories); ``seq`` itself where none is shorter."""
    given = unrolled(seq)
    text = render(given)
    tried = 0
    for length in range(1, len(given)):
        if length > MAX_STEPS:
            return Shortest(text, len(given), len(given), tried, False)
        for steps in candidates(given, length):
            if tried >= MAX_TRIED:
                return Shortest(text, len(given), len(given), tried, False)
            tried += 1
            if _fails(spec, cfg, prof, steps, cats, occupancy):
                return Shortest(render(steps), length, len(given), tried, True)
    return Shortest(text, len(given), len(given), tried, True)
