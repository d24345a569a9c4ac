"""Simulated launches perturbed on purpose (known clock offsets a unit, scaled costs):
the ground truth the compare tests recover. Session-scoped: a launch costs 0.3-1.5 s."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.compare.clocks import unit_keys
from kda_sim.compare.model import shifted
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.timeline.model import Timeline

OFFSET_NS = 5000.0


def with_offsets(tl: Timeline, seed: int) -> tuple[Timeline, dict[int, float]]:
    """``tl`` as per-unit clocks off by up to +-5 us would have recorded it."""
    keys = unit_keys(tl)
    rng = np.random.default_rng(seed)
    off = {u: float(rng.uniform(-OFFSET_NS, OFFSET_NS)) for u in sorted(set(keys))}
    out = shifted(tl, -np.array([off[k] for k in keys]))
    out.meta.source = "measured"
    return out, off


@pytest.fixture(scope="session")
def h200() -> GpuProfile:
    # the seed's build on the H200: the stock start a fit moves away from (``--gpu h200``
    # is K1's fit already)
    return load_profile("h200-stock")


@pytest.fixture(scope="session")
def sim22(h200: GpuProfile) -> Timeline:
    return simulate(LaunchConfig(2, 2), h200, seed=1).timeline


@pytest.fixture(scope="session")
def real22(sim22: Timeline) -> tuple[Timeline, dict[int, float]]:
    return with_offsets(sim22, 0)


@pytest.fixture(scope="session")
def skew():
    """``with_offsets`` for tests that perturb their own launches."""
    return with_offsets
