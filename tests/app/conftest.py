"""Fixtures for the app's tests: a traces folder with a 'measured' run, AppTest factories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

# without the app extras (streamlit) the app's tests are not collected, so that the
# rest of the suite (``-m flydsl``, say) collects in a venv that lacks them
try:
    import streamlit  # noqa: F401
except ImportError:
    collect_ignore_glob = ["*.py"]
else:
    from apphelp import APP, TIMEOUT, measured_like, no_failure
    from streamlit.testing.v1 import AppTest

    from kda_sim.timeline.chrome import to_chrome


@pytest.fixture(scope="session")
def run_store_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app's cache folder for this test session: the runs it keeps on disk go here,
    never to the user's cache."""
    return tmp_path_factory.mktemp("kda-sim-cache")


@pytest.fixture(autouse=True)
def private_cache(run_store_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("KDA_SIM_CACHE", str(run_store_dir))
    return run_store_dir


@pytest.fixture(scope="session")
def measured_bytes() -> bytes:
    return json.dumps(to_chrome(measured_like())).encode()


@pytest.fixture
def empty_traces(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "no-traces"
    d.mkdir()
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    return d


@pytest.fixture
def one_trace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, measured_bytes: bytes) -> Path:
    d = tmp_path / "traces"
    d.mkdir()
    (d / "h200_R2_L2.json").write_bytes(measured_bytes)
    monkeypatch.setenv("KDA_SIM_TRACES", str(d))
    return d


@pytest.fixture
def make_app() -> Callable[[], AppTest]:
    def make() -> AppTest:
        at = AppTest.from_file(str(APP), default_timeout=TIMEOUT)
        at.run()
        return no_failure(at)

    return make
