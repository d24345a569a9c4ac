"""The launch-to-launch comparison (kda_sim.compare.spread) on the bundled 1x1 trace: a
launch against itself differs by nothing, and against a copy whose every time runs 10 %
slower by exactly what that makes."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import pytest

from kda_sim.compare.spread import launches_by_shape, paths, report, spread, table, trace_name
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline import Timeline

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"


def _stretched(tl: Timeline, f: float) -> Timeline:
    """Every time of the launch f times as far from its start."""
    out = copy.deepcopy(tl)
    o = tl.origin

    def s(t: float | None) -> float | None:
        return None if t is None else o + f * (t - o)

    for c in out.ctas:
        c.start, c.end = s(c.start), s(c.end)
        for st in c.stages:
            st.start, st.end = s(st.start), s(st.end)
        for p in c.polls:
            p.first_issue, p.satisfied, p.put_time = s(p.first_issue), s(p.satisfied), s(p.put_time)
        for u in c.puts:
            u.time = s(u.time)
        for ld in c.loads:
            ld.issue, ld.done = s(ld.issue), s(ld.done)
    return out


def test_a_launch_against_itself_differs_by_nothing() -> None:
    tl = read_kernel_trace(TRACE)
    r = spread([tl, copy.deepcopy(tl)])
    assert r["makespan_range_frac"] == 0
    assert r["pair_makespan_err_frac"]["max"] == 0
    assert r["pair_start_err_median_frac"]["max"] == 0
    # one path, taken by both, through the stages a K1 launch runs (slice first)
    (taken,) = r["path"]["taken"]
    assert taken["launches"] == 2 and taken["kinds"][0] == "slice"
    assert r["path"]["pair_agree_frac"] == 1


def test_paths_are_counted_and_pairs_agree_as_often_as_they_share_one() -> None:
    a, b = ("slice", "gate"), ("slice", "mix")
    r = paths([a, b, a, a])
    assert r["taken"] == [{"kinds": list(a), "launches": 3}, {"kinds": list(b), "launches": 1}]
    assert r["pair_agree_frac"] == pytest.approx(6 / 12)  # 3 x 2 ordered pairs share a
    assert paths([a, b])["pair_agree_frac"] == 0


def test_a_stretched_launch_differs_by_the_stretch() -> None:
    tl = read_kernel_trace(TRACE)
    r = spread([tl, _stretched(tl, 1.1)])
    # b against a: (1.1 m - m) / m; a against b: (m - 1.1 m) / (1.1 m)
    assert r["pair_makespan_err_frac"]["max"] == pytest.approx(0.1, rel=1e-6)
    assert r["pair_makespan_err_frac"]["min"] == pytest.approx(0.1 / 1.1, rel=1e-6)
    assert r["makespan_range_frac"] == pytest.approx(0.1 / 1.05, rel=1e-6)
    assert 0 < r["pair_start_err_median_frac"]["min"] < 0.1


def test_one_launch_is_no_spread() -> None:
    with pytest.raises(InvalidInput, match="two or more"):
        spread([read_kernel_trace(TRACE)])


def test_launches_are_grouped_by_shape_and_other_files_left_alone(tmp_path: Path) -> None:
    for name in (trace_name(1, 1, 0), trace_name(1, 1, 1), trace_name(2, 4, 0), "notes.json"):
        (tmp_path / name).write_text("{}")
    (tmp_path / "k1_R1_L1_x.json").write_text("{}")
    groups = launches_by_shape(tmp_path)
    assert list(groups) == [(1, 1), (2, 4)]
    assert [p.name for p in groups[(1, 1)]] == ["k1_R1_L1_0.json", "k1_R1_L1_1.json"]
    with pytest.raises(InvalidInput, match="not a folder"):
        launches_by_shape(tmp_path / "k1_R1_L1_0.json")
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InvalidInput, match="no k1_R"):
        launches_by_shape(empty)


def test_report_groups_launches_by_shape_and_names_the_model(tmp_path: Path) -> None:
    for i in range(2):
        shutil.copy(TRACE, tmp_path / trace_name(1, 1, i))
    (tmp_path / "notes.json").write_text("{}")  # not a launch: ignored
    r = report(tmp_path)
    assert list(r) == ["1x1"]
    assert r["1x1"]["between_launches"]["launches"] == 2
    assert r["1x1"]["model"]["profile"] == "h200-k1"
    assert r["1x1"]["model"]["makespan_err_frac"]["max"] > 0
    stock = report(tmp_path, "h200-stock")["1x1"]["model"]  # another model, named
    assert stock["profile"] == "h200-stock" and "the seed's build" in stock["costs"]
    assert stock["makespan_err_frac"]["max"] > r["1x1"]["model"]["makespan_err_frac"]["max"]
    path = r["1x1"]["model"]["path"]
    assert path["agree_frac"] in (0.0, 1.0) and len(path["taken"]) == 1  # two copies: one path
    line = table(r).splitlines()[1]
    assert line.split()[:2] == ["1x1", "2"] and line.endswith("h200-k1")
    assert line.split()[-4:-1] == ["1", "100%", f"{100 * path['agree_frac']:.0f}%"]
    (summary,) = [x for x in table(r).splitlines() if x.startswith("critical path")]
    assert summary.endswith(f"launches 1.0 of 1, the model and a launch {path['agree_frac']:.1f}")


def test_a_shape_with_one_launch_is_named(tmp_path: Path) -> None:
    shutil.copy(TRACE, tmp_path / trace_name(1, 1, 0))
    with pytest.raises(InvalidInput, match=r"k1_R1_L1_0\.json: one launch of 1x1"):
        report(tmp_path)


def test_ticket_launches_spread_on_their_own_takes(tmp_path: Path) -> None:
    """Two jittered ticket launches take their items in different orders; each is laid on
    the model as its own takes place it, and the model (the launch's own profile) set
    against each."""
    from kda_sim.engine import simulate
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.machine.profile import load_profile
    from kda_sim.timeline.chrome import write_chrome

    prof = load_profile("h200-k1")
    takes = []
    for i, seed in enumerate((1, 2)):
        tl = simulate(LaunchConfig(1, 1, kda_tickets=True), prof, seed=seed).timeline
        takes.append(tl.meta.extra["ticket_takes"])
        write_chrome(tl, tmp_path / trace_name(1, 1, i))
    assert [r[3] for r in takes[0]] != [r[3] for r in takes[1]]  # two placements
    rep = report(tmp_path, profile="h200-k1")["1x1"]
    assert rep["between_launches"]["launches"] == 2
    assert rep["model"]["makespan_err_frac"]["max"] < 0.15  # nominal against jittered


def test_the_grid_barrier_spreads_on_its_own_axes(tmp_path: Path) -> None:
    # the second kernel's launches are named by its sweep axes (ctas, rounds) and read as
    # its own: every column, the critical path's too, is the kernel's
    import gzip

    src = TRACE.parent / "gridbarrier_h100_ctas66_rounds2.json.gz"
    for i in range(2):
        name = trace_name(66, 2, i, "gridbarrier")
        assert name == f"gridbarrier_ctas66_rounds2_{i}.json"
        (tmp_path / name).write_bytes(gzip.decompress(src.read_bytes()))
    r = report(tmp_path, kernel="gridbarrier")
    assert list(r) == ["66x2"]
    path = r["66x2"]["between_launches"]["path"]
    assert path["pair_agree_frac"] == 1 and set(path["taken"][0]["kinds"]) <= {"work", "barrier"}
    assert r["66x2"]["model"]["path"]["agree_frac"] in (0.0, 1.0)
