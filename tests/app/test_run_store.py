"""The bundled traces' runs kept on disk (kda_sim/app/run_store.py through
data.bundled_run): found again by a restarted server, equal to the run made, never
stale when the trace, the profile or the code changes."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from kda_sim import cache
from kda_sim.app import data, run_store
from kda_sim.timeline.chrome import read_chrome

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R1_L1.json.gz"
NAME = f"trace {TRACE.name}"

pytestmark = pytest.mark.skipif(not TRACE.exists(), reason="needs the bundled H200 traces")


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache folder, and the page's memory caches emptied: a fresh server."""
    d = tmp_path / "cache"
    monkeypatch.setenv("KDA_SIM_CACHE", str(d))
    data._bundled_run.clear()
    yield d
    data._bundled_run.clear()


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    d = tmp_path / "traces"
    d.mkdir()
    return Path(shutil.copy(TRACE, d / TRACE.name))


def _restart() -> None:
    """What a restarted server forgets: everything in memory, not the cache folder."""
    data._bundled_run.clear()


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """data.run_of_trace, counted: how many runs were made rather than found."""
    made: list[str] = []
    real = data.run_of_trace

    def counted(name: str, kind: str, tl: object) -> data.Run:
        made.append(name)
        return real(name, kind, tl)  # type: ignore[arg-type]

    monkeypatch.setattr(data, "run_of_trace", counted)
    return made


def test_a_restarted_server_finds_the_run_equal_to_the_one_made(
    store: Path, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting(monkeypatch)
    first, key1 = data.bundled_run(trace, NAME)
    assert made == [NAME]
    assert list((store / run_store.RUNS).glob("*.pickle")), "the run was not kept"
    _restart()
    again, key2 = data.bundled_run(trace, NAME)
    assert made == [NAME], "the restarted server made the run again"
    assert key1 == key2 and again is not first
    # what every view reads: equal, whether made or read back
    fresh = data.run_of_trace(NAME, "bundled", read_chrome(trace))
    for run in (first, again):
        assert run.kind == fresh.kind and run.note == fresh.note and run.name == fresh.name
        assert run.real == fresh.real and run.sim == fresh.sim
        assert run.real_linked == fresh.real_linked
    assert again.sim is not None and again.sim.meta.source == "simulated"
    assert again.real is not None and again.real.meta.source == "measured"


def test_the_store_is_the_cache_folder_not_the_tree(store: Path, trace: Path) -> None:
    data.bundled_run(trace, NAME)
    kept = [p for p in store.rglob("*") if p.is_file()]
    assert kept and all(p.is_relative_to(store) for p in kept)
    assert not list(ROOT.glob(f"**/{run_store.RUNS}"))


def test_a_changed_trace_is_simulated_again(
    store: Path, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting(monkeypatch)
    run1, key1 = data.bundled_run(trace, NAME)
    obj = json.loads(gzip.decompress(trace.read_bytes()))
    # the same file name, one stage of one CTA half as long: other content
    ev = next(e for e in obj["traceEvents"] if e.get("cat") == "stage")
    a = ev["args"]
    a["end"] = a["start"] + (a["end"] - a["start"]) / 2
    trace.write_bytes(gzip.compress(json.dumps(obj).encode()))
    _restart()
    run2, key2 = data.bundled_run(trace, NAME)
    assert key1 != key2 and made == [NAME, NAME]
    assert run2.real == read_chrome(trace) != run1.real


def test_another_profile_identity_is_simulated_again(
    store: Path, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting(monkeypatch)
    _, key1 = data.bundled_run(trace, NAME)
    # the same profile name coming to mean other costs (a costs file rewritten)
    monkeypatch.setattr(data, "profile_id", lambda gpu, kernel="k1": f"other costs of {gpu}")
    _restart()
    _, key2 = data.bundled_run(trace, NAME)
    assert key1 != key2 and made == [NAME, NAME]


def test_other_code_looks_up_another_entry(store: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = run_store.run_entry("d", NAME, "bundled", "p")
    monkeypatch.setattr(cache, "code_version", lambda: "another build")
    assert run_store.run_entry("d", NAME, "bundled", "p") != before


def test_an_entry_that_does_not_load_is_made_again(
    store: Path, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = _counting(monkeypatch)
    data.bundled_run(trace, NAME)
    (entry,) = (store / run_store.RUNS).glob("*.pickle")
    entry.write_bytes(b"not a pickle")
    _restart()
    run, _ = data.bundled_run(trace, NAME)
    assert made == [NAME, NAME] and run.sim is not None
    _restart()
    data.bundled_run(trace, NAME)  # overwritten with a good one: found this time
    assert made == [NAME, NAME]


def test_an_unwritable_cache_folder_still_serves_the_run(
    tmp_path: Path, trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("KDA_SIM_CACHE", str(blocker / "cache"))  # under a file: not a folder
    data._bundled_run.clear()
    try:
        run, _ = data.bundled_run(trace, NAME)
    finally:
        data._bundled_run.clear()
    assert run.sim is not None and run.real is not None


def test_a_trace_rewritten_while_read_is_refused_not_kept(trace: Path) -> None:
    from kda_sim.errors import TraceFormatError

    with pytest.raises(TraceFormatError, match="changed while it was read"):
        data._read_hashed(trace, "0" * 64)  # the digest of other bytes than the file's


STAMP = (("profiles/h200.json", 1, 2),)


def test_a_profile_identity_is_kept_by_its_files_stamp(store: Path) -> None:
    loads: list[str] = []

    def load() -> str:
        loads.append("loaded")
        return "identity A"

    assert run_store.profile_identity("h200", "k1", STAMP, load) == "identity A"
    # a restarted server: read back, the profile not loaded again
    assert run_store.profile_identity("h200", "k1", STAMP, lambda: "not asked") == "identity A"
    assert loads == ["loaded"]
    assert list((store / run_store.IDENTITIES).glob("*.json"))


def test_a_changed_profile_file_loads_the_identity_again(store: Path) -> None:
    run_store.profile_identity("h200", "k1", STAMP, lambda: "identity A")
    touched = (("profiles/h200.json", 3, 2),)  # another modification time
    assert run_store.profile_identity("h200", "k1", touched, lambda: "identity B") == "identity B"
    # another kernel's costs of the same files: its own identity
    assert run_store.profile_identity("h200", "ticket", STAMP, lambda: "identity C") == "identity C"


def test_a_profile_that_does_not_load_is_not_kept(store: Path) -> None:
    assert run_store.profile_identity("h200", "k1", STAMP, lambda: "error: no costs") == (
        "error: no costs"
    )
    assert run_store.profile_identity("h200", "k1", STAMP, lambda: "identity A") == "identity A"


def test_the_page_keeps_the_bundled_profile_identity(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """data.profile_id through the store: a fresh server (its memo emptied) does not load
    the profile it has the identity of."""
    data._profile_id.cache_clear()
    first = data.profile_id("h200", "k1")
    assert not first.startswith("error")
    data._profile_id.cache_clear()

    def no_load(*args: object, **kwargs: object) -> None:
        raise AssertionError("the profile was loaded again")

    monkeypatch.setattr(data, "load_profile", no_load)
    assert data.profile_id("h200", "k1") == first
    data._profile_id.cache_clear()


RUN_KEY = "bundled:digest|identity"
PNG = run_store.PNG_MAGIC + b"a picture"


def test_a_picture_is_drawn_once_and_found_by_a_restarted_server(store: Path) -> None:
    drawn: list[str] = []

    def draw() -> bytes:
        drawn.append("drawn")
        return PNG

    entry = run_store.picture_entry(RUN_KEY, "overlay, every CTA")
    assert run_store.stored_png(entry, draw) == PNG
    assert entry.is_relative_to(store / run_store.PICTURES) and entry.read_bytes() == PNG
    assert run_store.stored_png(entry, lambda: b"not asked") == PNG
    assert drawn == ["drawn"]


def test_another_view_run_or_code_is_another_picture(
    store: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    entry = run_store.picture_entry(RUN_KEY, "overlay")
    assert run_store.picture_entry(RUN_KEY, "side by side") != entry
    assert run_store.picture_entry("bundled:other|identity", "overlay") != entry
    monkeypatch.setattr(cache, "code_version", lambda: "another build")
    assert run_store.picture_entry(RUN_KEY, "overlay") != entry


def test_an_entry_that_is_no_png_is_drawn_again(store: Path) -> None:
    entry = run_store.picture_entry(RUN_KEY, "overlay")
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"<html>not a picture</html>")
    assert run_store.stored_png(entry, lambda: PNG) == PNG
    assert entry.read_bytes() == PNG
