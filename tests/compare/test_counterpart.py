"""A measured trace's simulated counterpart, made on demand and cached outside the tree
(``kda-sim simulate --like``): the same launch as ``kda-sim compare`` simulates, a cache
entry that a changed input never finds, another kernel's measured launch (the bundled grid
barrier's) as well, and a message (exit 2) for what is neither."""

from __future__ import annotations

import gzip
import json
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim import cache
from kda_sim.cli import main
from kda_sim.compare.counterpart import counterpart, counterpart_path, like_profile
from kda_sim.compare.launch import occupancy_of
from kda_sim.engine import simulate
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline.chrome import read_chrome

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R1_L1.json.gz"
needs_trace = pytest.mark.skipif(not TRACE.is_file(), reason="no bundled trace in traces/")
GRIDBARRIER = ROOT / "traces" / "gridbarrier_h100_ctas66_rounds4.json.gz"


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    d = tmp_path / "cache"
    monkeypatch.setenv(cache.ENV, str(d))
    return d


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(cache.ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", "/x/cache")
    assert cache.cache_dir() == Path("/x/cache/kda-sim")
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.cache_dir() == Path.home() / ".cache" / "kda-sim"
    monkeypatch.setenv(cache.ENV, "/y")
    assert cache.cache_dir() == Path("/y")


def test_cached_file_is_made_once(cache_dir: Path) -> None:
    calls = []

    def make(p: Path) -> None:
        calls.append(p)
        p.write_text("made")

    a = cache.cached_file("k", "e.txt", make)
    b = cache.cached_file("k", "e.txt", make)
    assert a == b == cache_dir / "k" / "e.txt" and a.read_text() == "made"
    assert len(calls) == 1 and calls[0] != a  # written under another name, then renamed
    assert sorted(p.name for p in a.parent.iterdir()) == ["e.txt"]
    assert cache.key("a", {"x": 1}) == cache.key("a", {"x": 1}) != cache.key("a", {"x": 2})


def test_a_failed_make_leaves_no_entry(cache_dir: Path) -> None:
    def make(p: Path) -> None:
        p.write_text("half")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        cache.cached_file("k", "e.txt", make)
    assert list((cache_dir / "k").iterdir()) == []


@needs_trace
def test_counterpart_is_what_compare_simulates_and_is_cached(cache_dir: Path) -> None:
    real = read_kernel_trace(TRACE)
    prof = like_profile(real)
    assert prof.name == "h200-k1" and prof.streamed_weights
    want = simulate(real.meta.config(), prof, occupancy=occupancy_of(real)).timeline
    path = counterpart_path(TRACE)
    assert path.is_relative_to(cache_dir)
    tl = counterpart(TRACE)
    assert tl.makespan == pytest.approx(want.makespan)
    assert tl.meta.config() == real.meta.config() and tl.meta.source == "simulated"
    assert tl.meta.extra["simulates"] == TRACE.name
    assert tl.meta.extra["simulation"]["profile"] == "h200-k1"
    mtime = path.stat().st_mtime_ns
    assert counterpart_path(TRACE) == path and path.stat().st_mtime_ns == mtime  # a hit
    # another profile is another entry
    assert counterpart_path(TRACE, "h200") != path
    assert tl.meta.extra["simulation"]["costs"].startswith("k1 costs fitted on h200")


@needs_trace
def test_the_counterpart_cache_keys_on_the_costs_not_the_name(
    cache_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An entry made when ``h200`` meant the stock costs can never be served now that it
    means the fitted ones: the key holds the profile's identity, not its name alone."""
    from kda_sim.compare import counterpart as cp
    from kda_sim.machine.profile import load_profile

    fitted, stock = counterpart_path(TRACE, "h200"), counterpart_path(TRACE, "h200-stock")
    assert fitted != stock
    assert (
        read_chrome(stock)
        .meta.extra["simulation"]["costs"]
        .startswith("k1 stock costs for h200: the seed's build")
    )
    # the stock costs under the name "h200", as before the change: another entry
    old = replace(load_profile("h200-stock"), name="h200")
    monkeypatch.setattr(cp, "like_profile", lambda tl, explicit=None: old)
    assert counterpart_path(TRACE, "h200") not in (fitted, stock)


@needs_trace
def test_a_changed_trace_is_a_new_entry(cache_dir: Path, tmp_path: Path) -> None:
    mine = tmp_path / "t.json"
    mine.write_bytes(gzip.decompress(TRACE.read_bytes()))  # plain: edited below
    first = counterpart_path(mine)
    d = json.loads(mine.read_text())
    d["otherData"]["meta"]["R"] = 2  # the same file name, another launch
    mine.write_text(json.dumps(d))
    second = counterpart_path(mine)
    assert second != first and read_chrome(second).meta.R == 2


@needs_trace
def test_simulate_like_writes_the_counterpart(cache_dir: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "sim.json"
    assert main(["simulate", "--like", str(TRACE), "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "measured makespan" in text and "h200-k1" in text and f"wrote {out}" in text
    tl = read_chrome(out)
    assert tl.makespan == pytest.approx(counterpart(TRACE).makespan)
    assert main(["simulate", "--like", str(TRACE), "--out", str(out)]) == 2  # kept
    assert "--force" in capsys.readouterr().err
    assert main(["simulate", "--like", str(TRACE), "--json", "--seed", "3"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["config"] == read_kernel_trace(TRACE).meta.config().to_dict()
    assert d["makespan_ns"] != tl.makespan  # jittered: simulated now, not the cached one


@needs_trace
@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--like", "traces/none.json"], "no such trace file"),
        (["--like", str(TRACE), "--R", "3"], "--R: --like takes the configuration"),
        (["--like", str(TRACE), "--nw-first"], "--nw-first: --like takes"),
    ],
)
def test_simulate_like_bad_input_exits_2(cache_dir: Path, argv, said, capsys) -> None:
    assert main(["simulate", *argv]) == 2
    assert said in capsys.readouterr().err


def test_simulate_like_refuses_what_is_not_a_k1_trace(cache_dir: Path, tmp_path: Path, capsys):
    sim = tmp_path / "sim.json"
    assert main(["simulate", "--gpu", "h200", "--R", "1", "--L", "1", "--out", str(sim)]) == 0
    capsys.readouterr()
    assert main(["simulate", "--like", str(sim)]) == 2
    assert "not of our K1" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{")
    assert main(["simulate", "--like", str(tmp_path / "x.json")]) == 2
    assert "not JSON" in capsys.readouterr().err
    assert not list(cache_dir.rglob("*.json"))


@pytest.mark.skipif(not GRIDBARRIER.is_file(), reason="no grid-barrier trace in traces/")
def test_simulate_like_runs_another_kernels_launch(cache_dir: Path, tmp_path: Path, capsys):
    """The grid barrier's H100 launch: its kernel and configuration on the h100 profile,
    the launch ``compare`` simulates against it, cached as K1's counterparts are."""
    out = tmp_path / "sim.json"
    assert main(["simulate", "--like", str(GRIDBARRIER), "--out", str(out), "--json"]) == 0
    capsys.readouterr()
    sim = read_chrome(out)
    real = read_kernel_trace(GRIDBARRIER)
    assert (sim.meta.source, sim.meta.kernel, sim.meta.gpu) == ("simulated", "gridbarrier", "h100")
    assert sim.meta.params == real.meta.params and len(sim.ctas) == len(real.ctas) == 66
    assert [c.unit for c in sim.ctas] == [c.unit for c in real.ctas]  # placed as recorded
    (entry,) = cache_dir.rglob("*.json")
    assert read_chrome(entry).makespan == sim.makespan
    assert main(["compare", str(GRIDBARRIER), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["comparison"]["sim_makespan_ns"] == sim.makespan
    # --kernel checks the trace's kernel; the kernel's own flags are the trace's to say
    like = ["simulate", "--like", str(GRIDBARRIER)]
    assert main([*like, "--kernel", "gridbarrier", "--json"]) == 0
    capsys.readouterr()
    assert main([*like, "--kernel", "pingpong"]) == 2
    assert "a gridbarrier launch, not one of --kernel pingpong" in capsys.readouterr().err
    assert main([*like, "--kernel", "gridbarrier", "--rounds", "3"]) == 2
    assert "--rounds: --like takes the configuration from the trace" in capsys.readouterr().err


@needs_trace
def test_compare_runs_against_the_cached_counterpart(cache_dir: Path, capsys) -> None:
    assert main(["compare", str(TRACE), "--json"]) in (0, 1)
    d = json.loads(capsys.readouterr().out)
    (entry,) = cache_dir.rglob("*.json")
    assert d["comparison"]["sim_makespan_ns"] == pytest.approx(read_chrome(entry).makespan)
    assert counterpart_path(TRACE) == entry  # what simulate --like finds
