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
def _private_cache(tmp_path_factory: pytest.TempPathFactory, worker_id: str):
    """What the product caches (kda_sim.cache) goes to a folder of the test session's own,
    never the user's ~/.cache; one folder for all of the session's xdist workers (their
    temporary folders' parent), so a counterpart one worker simulated the other reads: an
    entry is keyed by all it was made from and takes its name in one step."""
    if worker_id == "master":
        folder = tmp_path_factory.mktemp("kda-sim-cache")
    else:
        folder = tmp_path_factory.getbasetemp().parent / "kda-sim-cache"
        folder.mkdir(exist_ok=True)
    mp = pytest.MonkeyPatch()
    mp.setenv("KDA_SIM_CACHE", str(folder))
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _one_job_unless_asked():
    """A command's --jobs default (the cores) is one process here: a pool started by every
    CLI test would cost each its workers' start on CI's two cores; the tests of sharing
    (tests/test_parallel.py and the commands') pass --jobs or ``jobs`` themselves."""
    from kda_sim import parallel

    mp = pytest.MonkeyPatch()
    mp.setattr(parallel, "default_jobs", lambda: 1)
    yield
    mp.undo()


@pytest.fixture
def fresh_python():
    """``run(code)``: ``code`` run by a new interpreter (``python -c``), its stdout
    stripped; what a test of imports needs (this process has imported everything)."""
    import subprocess
    import sys

    def run(code: str) -> str:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        return out.stdout.strip()

    return run
