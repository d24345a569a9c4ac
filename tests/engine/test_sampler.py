"""The sampler's hot-loop forms draw exactly what its methods draw."""

from __future__ import annotations

from kda_sim.engine.sampler import Sampler
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
