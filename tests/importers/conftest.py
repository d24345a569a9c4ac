"""One small simulated launch a session, shared by the importer tests (a launch costs
0.3 to 1.5 s here)."""

from __future__ import annotations

import json

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.model import Timeline


@pytest.fixture(scope="session")
def sim_timeline() -> Timeline:
    tl = simulate(LaunchConfig(1, 1), load_profile("h200"), seed=5).timeline
    tl.meta.source = "measured"
    return tl


@pytest.fixture(scope="session")
def chrome_text(sim_timeline: Timeline) -> str:
    return json.dumps(to_chrome(sim_timeline), separators=(",", ":"))
