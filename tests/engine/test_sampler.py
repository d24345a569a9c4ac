"""The sampler's hot-loop forms draw exactly what its methods draw, and its drawn blocks
what the generator's scalar draws were."""

from __future__ import annotations

import numpy as np

from kda_sim.engine.sampler import DRAW_BLOCK, Sampler
from kda_sim.machine import load_profile

PROF = load_profile("mi355x")


def test_fixed_is_the_table_and_the_profile_without_jitter() -> None:
    s = Sampler(PROF)
    latency, cost = s.fixed()
    for kind in ("poll", "retry", "barrier", "hbm_load"):
        assert latency(kind) == s.latency(kind)
    key = next(iter(PROF.costs))
    assert cost(key, 3.0) == s.cost(key, 3.0) == PROF.cost(key, 3.0)


def test_fixed_draws_as_the_methods_do_with_jitter() -> None:
    a, b = Sampler(PROF, seed=4, jitter=0.2), Sampler(PROF, seed=4, jitter=0.2)
    latency, cost = a.fixed()
    key = next(iter(PROF.costs))
    drawn = [latency("poll"), cost(key, 2.0), latency("retry")]
    assert drawn == [b.latency("poll"), b.cost(key, 2.0), b.latency("retry")]
    assert drawn[0] != PROF.latency_ns["poll"]  # jittered, so the test can tell


def test_drawn_blocks_are_the_generators_scalar_draws_in_order() -> None:
    # a seed's run stays what it was when each factor was one scalar ``uniform`` call:
    # over more than two blocks, for several seeds and jitters, and for every method
    key = next(iter(PROF.costs))
    for seed, jitter in ((1, 0.9), (2, 0.5), (7, 0.15), (123, 0.3)):
        s = Sampler(PROF, seed=seed, jitter=jitter)
        rng = np.random.default_rng(seed)
        n = 2 * DRAW_BLOCK + 17
        for k in range(n):
            scale = float(rng.uniform(1.0 - jitter, 1.0 + jitter))
            which = k % 3
            if which == 0:
                assert s.latency("poll") == PROF.latency_ns["poll"] * scale
            elif which == 1:
                assert s.cost(key, 2.0) == PROF.cost(key, 2.0) * scale
            else:
                lat = PROF.latency_ns["visibility_cross_xcd"]
                assert s.visibility(0, 1) == lat * scale


def test_a_nominal_sampler_makes_no_generator() -> None:
    # its generator is made when a jittered run first draws (a process's first one
    # imports numpy.random); a nominal one never draws
    nominal = Sampler(PROF)
    nominal.latency("poll"), nominal.cost(next(iter(PROF.costs)), 2.0), nominal.visibility(0, 1)
    assert "rng" not in vars(nominal)
    seeded = Sampler(PROF, seed=3, jitter=0.1)
    seeded.latency("poll")
    assert "rng" in vars(seeded)


def test_a_jitter_of_zero_or_less_draws_nothing_even_with_a_seed() -> None:
    # the factor is 1.0 and no draw is taken, so a seeded run of jitter 0 (or below) is
    # the nominal one, value for value
    nominal = Sampler(PROF)
    key = next(iter(PROF.costs))
    for jitter in (0.0, -0.2):
        s = Sampler(PROF, seed=5, jitter=jitter)
        assert s.latency("poll") == nominal.latency("poll")
        assert s.cost(key, 2.0) == nominal.cost(key, 2.0)
        assert s.visibility(0, 1) == nominal.visibility(0, 1)
        assert s.visibility(2, 2) == nominal.visibility(2, 2)
        assert "rng" not in vars(s)
