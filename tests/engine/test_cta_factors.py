"""A spread between CTAs (``GpuProfile.cta_spread``): one factor a CTA and stage kind it
names, drawn once a seeded launch from a generator of its own."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine import simulate
from kda_sim.engine.sampler import Sampler
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import get
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.timeline.model import Timeline

STAGES = list(get("k1").stages)


def _spans(tl: Timeline) -> list[tuple[int, str, int, float, float]]:
    return [(c.cta, s.name, s.task, s.start, s.end) for c in tl.ctas for s in c.stages]


def _recur(tl: Timeline) -> dict[tuple[int, int], float]:
    return {(c.cta, s.task): s.dur for c in tl.ctas for s in c.stages if s.name == "k.recur"}


def _spread(sd: float, stages: list[str] = STAGES) -> GpuProfile:
    return replace(load_profile("h200-k1"), cta_spread=dict.fromkeys(stages, sd))


def test_unset_is_the_profile_as_it_was() -> None:
    prof = load_profile("h200-k1")
    assert prof.cta_spread == {} and "cta_spread" not in prof.to_dict()
    assert prof.with_params(spread_gemv0=0.0).identity() == prof.identity()
    assert _spread(0.03).identity() != prof.identity()
    assert Sampler(prof, seed=3).cta_factors(8, STAGES) is None


def test_a_nominal_run_draws_no_spread() -> None:
    cfg = LaunchConfig(2, 2)
    plain = simulate(cfg, load_profile("h200-k1")).timeline
    assert _spans(simulate(cfg, _spread(0.05)).timeline) == _spans(plain)


@settings(max_examples=20, deadline=None)
@given(st.integers(0, 2**31), st.floats(0.01, 1.0), st.integers(1, 300))
def test_factors_are_the_seeds_by_cta_and_leave_the_jitter_alone(
    seed: int, sd: float, ctas: int
) -> None:
    prof = _spread(sd)
    a = Sampler(prof, seed=seed, jitter=0.15)
    f = a.cta_factors(ctas, STAGES)
    assert f is not None and len(f) == ctas and all(set(row) == set(STAGES) for row in f)
    assert f == Sampler(prof, seed=seed).cta_factors(ctas, STAGES)  # the seed's, jitter or not
    # a CTA's factors are its own: the same in a launch of more CTAs
    assert Sampler(prof, seed=seed).cta_factors(ctas + 5, STAGES)[:ctas] == f  # type: ignore[index]
    assert all(v > 0 for row in f for v in row.values())
    # the jitter's draws are those of the same seed without a spread
    b = Sampler(load_profile("h200-k1"), seed=seed, jitter=0.15)
    assert [a.latency("poll") for _ in range(5)] == [b.latency("poll") for _ in range(5)]


def test_the_factors_log_has_the_spread_as_its_sd() -> None:
    f = Sampler(_spread(0.05), seed=1).cta_factors(4000, STAGES)
    assert f is not None
    logs = np.log([row["gemv0"] for row in f])
    assert float(np.std(logs)) == pytest.approx(0.05, rel=0.05)
    assert abs(float(np.median(logs))) < 0.005


@settings(max_examples=4, deadline=None)
@given(st.integers(0, 10_000))
def test_each_k_recur_takes_its_ctas_factor(seed: int) -> None:
    """k.recur polls nothing, so its span is its compute and what follows it: with no
    jitter each is longer by the compute's cost times its CTA's k.recur factor less 1."""
    cfg = LaunchConfig(2, 2)
    prof = _spread(0.1)
    plain = _recur(simulate(cfg, load_profile("h200-k1")).timeline)
    tl = simulate(cfg, prof, seed=seed, jitter=0.0).timeline
    spread = _recur(tl)
    f = Sampler(prof, seed=seed).cta_factors(len(tl.ctas), STAGES)
    assert f is not None and plain.keys() == spread.keys()
    cost = prof.cost("k.recur", cfg.L)
    for (cta, task), d in plain.items():
        assert spread[cta, task] - d == pytest.approx(cost * (f[cta]["k.recur"] - 1), abs=1e-6)


def test_a_seeds_launch_is_the_same_twice_and_another_seeds_is_not() -> None:
    cfg = LaunchConfig(2, 2)
    prof = _spread(0.03)
    a, b, c = (simulate(cfg, prof, seed=s, jitter=0.0).timeline for s in (5, 5, 6))
    assert _spans(a) == _spans(b)
    assert _spans(a) != _spans(c)


def test_a_kind_the_profile_names_alone_draws_the_factors_it_draws_beside_the_rest() -> None:
    """A profile that spreads gemv0 and gemv1 only: factors for those kinds and no other,
    the same as where every kind is spread (each kind's column is drawn either way), so a
    kind's spread is set without moving the others' draws."""
    gemv = ["gemv0", "gemv1"]
    some = Sampler(_spread(0.03, gemv), seed=7).cta_factors(50, STAGES)
    every = Sampler(_spread(0.03), seed=7).cta_factors(50, STAGES)
    assert some is not None and every is not None
    assert some == [{k: row[k] for k in gemv} for row in every]
    mixed = load_profile("h200-k1").with_params(spread_gemv0=0.03, **{"spread_k.recur": 0.1})
    f = Sampler(mixed, seed=7).cta_factors(50, STAGES)
    assert f is not None and all(set(row) == {"gemv0", "k.recur"} for row in f)
    assert [row["gemv0"] for row in f] == [row["gemv0"] for row in every]


def test_a_kind_the_kernel_lacks_is_named_when_a_seeded_run_draws() -> None:
    prof = load_profile("h200-k1").with_params(spread_gemv2=0.03)
    with pytest.raises(InvalidInput, match=r"cta_spread\.gemv2: not a stage kind"):
        simulate(LaunchConfig(1, 1), prof, seed=1, jitter=0.0)
