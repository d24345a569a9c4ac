"""Shared fixtures for the checks' tests; ``checks_scale.examples`` sizes their properties.

The Hypothesis profiles live in ``tests/conftest.py`` (``ci`` by default, ``thorough``
with HYPOTHESIS_PROFILE=thorough).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from kda_sim.machine.profile import GpuProfile, load_profile

sys.path.insert(0, str(Path(__file__).parent))  # checks_scale, for every test below here


@pytest.fixture(scope="session")
def mi355x() -> GpuProfile:
    return load_profile("mi355x")


@pytest.fixture(scope="session")
def h200() -> GpuProfile:
    # the seed's build on the H200 (one CTA an SM from S = 5): the residency regimes and
    # deadlocks these tests reason about; ``--gpu h200`` is the Triton K1 we ship
    return load_profile("h200-stock")
