"""Hypothesis profiles: ``ci`` (default) keeps the whole suite inside CI's budget;
``thorough`` (HYPOTHESIS_PROFILE=thorough) runs the same properties longer."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, settings

settings.register_profile(
    "ci", deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)
settings.register_profile(
    "thorough", deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=2000
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory):
    """What the product caches (kda_sim.cache) goes to a folder of the test session's own,
    never the user's ~/.cache."""
    mp = pytest.MonkeyPatch()
    mp.setenv("KDA_SIM_CACHE", str(tmp_path_factory.mktemp("kda-sim-cache")))
    yield
    mp.undo()
