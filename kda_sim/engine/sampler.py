"""Latencies and stage costs, nominal or jittered by a seed (deterministic for a seed)."""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import OPTIONAL_LATENCIES, GpuProfile

# jitter factors drawn from the generator at once: a scalar ``uniform`` costs about 2 us
# (a seeded K1 launch draws 40,000), a block of them about 20 ns each. The generator fills
# a block with the same doubles, in the same order, as that many scalar calls
# (tests/engine/test_sampler.py), so a seed's run is unchanged.
DRAW_BLOCK = 4096
# the spread between CTAs (GpuProfile.cta_spread) draws from a generator of its own, seeded
# from the run's seed and this, so the jitter's stream is the same with it as without
SPREAD_STREAM = 0x5C7A


class Sampler:
    def __init__(self, prof: GpuProfile, seed: int | None = None, jitter: float = 0.0) -> None:
        self.prof = prof
        self.jitter = jitter if seed is not None else 0.0
        self._seed = seed
        # a profile made in code may leave the optional latencies out: they are then 0
        self._lat = {**dict.fromkeys(OPTIONAL_LATENCIES, 0.0), **prof.latency_ns}
        # a profile without atomic latencies: the polls our profiles time are atomics
        # (an acquire atomic add of 0, MEASURED.md), and one word's atomics overlap fully
        self._lat.setdefault("atomic", self._lat["poll"])
        self._lat.setdefault("atomic_serial", 0.0)
        self._same = self._lat["visibility_same_xcd"]
        self._cross = self._lat["visibility_cross_xcd"]
        # what ``visibility`` gives without jitter: the same XCD's, another XCD's
        self.nominal_visibility = (self._same, self._cross)
        self._drawn: list[float] = []  # the next factors, last first (popped from the end)
        self._draws = self.jitter > 0.0  # (a jitter of 0 or less draws nothing)

    @functools.cached_property
    def rng(self) -> np.random.Generator:
        """The seed's generator, made when a jittered run first draws: a nominal run
        draws nothing, and the first ``default_rng`` of a process imports numpy.random
        (about 10 ms of a cold launch)."""
        return np.random.default_rng(self._seed)

    def cta_factors(self, ctas: int, stages: list[str]) -> list[dict[str, float]] | None:
        """Each CTA's factor on its computes in each stage kind of ``stages`` that the
        profile spreads (``GpuProfile.cta_spread``), by CTA number; None where the run draws
        none (no seed, no spread). One matrix a launch, CTA by every kind of ``stages`` in
        the order given, spread or not, so a CTA's factors do not depend on the order the
        CTAs run in, and a kind's are the same whichever other kinds the profile spreads."""
        spread = self.prof.cta_spread
        if self._seed is None or not spread or not stages:
            return None
        unknown = sorted(set(spread) - set(stages))
        if unknown:
            raise InvalidInput(
                f"cta_spread.{unknown[0]}: not a stage kind of the kernel ({', '.join(stages)})",
                what=f"cta_spread.{unknown[0]}",
                where=self.prof.name,
            )
        z = np.random.default_rng([self._seed, SPREAD_STREAM]).standard_normal((ctas, len(stages)))
        sd = np.array([spread.get(s, 0.0) for s in stages])
        kept = [(i, s) for i, s in enumerate(stages) if spread.get(s)]
        return [{s: row[i] for i, s in kept} for row in np.exp(z * sd).tolist()]

    def _refill(self) -> None:
        block = self.rng.uniform(1.0 - self.jitter, 1.0 + self.jitter, DRAW_BLOCK)
        self._drawn += block[::-1].tolist()

    def fixed(self) -> tuple[Callable[[str], float], Callable[[str, float], float]]:
        """``latency`` and ``cost`` as the hot loops call them: without jitter nothing is
        drawn, so the table's lookup and the profile's cost stand for them (no frame a call)."""
        if self.jitter:
            return self.latency, self.cost
        return self._lat.__getitem__, self.prof.cost

    # latency, cost and visibility draw their factor inline, the next of the block (a seeded K1
    # launch draws some 40,000: a call each to draw it was a tenth of a seeded run); a
    # jitter of 0 or less draws nothing and scales by 1.0
    def latency(self, kind: str) -> float:
        if self._draws:
            drawn = self._drawn
            if not drawn:
                self._refill()
            return self._lat[kind] * drawn.pop()
        if not self.jitter:
            return self._lat[kind]
        return self._lat[kind] * 1.0

    def cost(self, key: str, units: float) -> float:
        base = self.prof.cost(key, units)
        if not self._draws:
            return base * 1.0
        drawn = self._drawn
        if not drawn:
            self._refill()
        return base * drawn.pop()

    def visibility(self, src_xcd: int, dst_xcd: int) -> float:
        if not self.jitter:
            return self._same if src_xcd == dst_xcd else self._cross
        if not self._draws:
            return (self._same if src_xcd == dst_xcd else self._cross) * 1.0
        drawn = self._drawn
        if not drawn:
            self._refill()
        return (self._same if src_xcd == dst_xcd else self._cross) * drawn.pop()
