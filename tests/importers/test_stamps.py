"""The public twin's [256, 15] stamp tensor: columns, last task only, clear errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers import load_trace
from kda_sim.kernels.k1.stamps import KDA_POINTS, POINTS, read_stamps, stamps_timeline
from kda_sim.timeline.model import Timeline

T0 = 10**9  # s_memrealtime ticks at the launch's start (any value)
POINT_OF = {
    "slice": 1,
    "gate": 2,
    "mix": 3,
    "load_x": 4,
    "gemv0": 5,
    "gemv1": 6,
    "k.stage": 7,
    "k.conv": 8,
    "k.gates": 9,
    "k.recur": 10,
    "k.norm": 11,
}


def stamps_of(tl: Timeline) -> np.ndarray:
    """What the twin's timeline build would have written for ``tl`` (10 ns ticks)."""
    arr = np.zeros((len(tl.ctas), POINTS), dtype=np.int64)
    for c in tl.ctas:
        arr[c.cta, 0] = T0 + round(c.start / 10)
        for s in c.stages:  # later tasks overwrite earlier ones, as in LDS
            arr[c.cta, POINT_OF[s.name]] = T0 + round(s.end / 10)
        if c.role == "attn" and arr[c.cta, 2] == 0:
            arr[c.cta, 2] = arr[c.cta, 1]  # stamped after slice even without gate work
    return arr


def test_columns_and_last_task(sim_timeline: Timeline) -> None:
    arr = stamps_of(sim_timeline)
    tl = stamps_timeline(arr, R=1, L=1, gpu="h200")
    assert tl.meta.source == "measured" and tl.meta.extra["clock_resolution_ns"] == 10.0
    for b in (0, 5, 56, 200):
        got = {(s.name, s.task): s for s in tl.ctas[b].stages}
        for s in sim_timeline.ctas[b].stages:
            if (s.name, s.task) in got:
                assert got[(s.name, s.task)].end == pytest.approx(s.end, abs=10)
    # CTA 1 has no gate work at S = 1: its gate point equals its slice point, no gate span
    assert [s.name for s in tl.ctas[1].stages][:2] == ["slice", "mix"]
    assert tl.ctas[255].stages == [] and tl.ctas[255].end is not None
    # the last stamp is k.norm's end: the CTA's final store drain is not stamped
    last = max(s.end for c in sim_timeline.ctas for s in c.stages)
    assert tl.makespan == pytest.approx(last - sim_timeline.origin, abs=20)


def test_only_last_task_and_lost_kstage_start() -> None:
    from kda_sim.engine import simulate
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.machine.profile import load_profile

    sim = simulate(LaunchConfig(3, 1), load_profile("mi355x")).timeline  # 288 tasks
    tl = stamps_timeline(stamps_of(sim), R=3, L=1)
    c0 = tl.ctas[0]
    assert {s.task for s in c0.stages if s.name.startswith("k.")} == {256}
    assert "k.stage" not in {s.name for s in c0.stages}
    assert 0 in tl.meta.extra["k_stage_start_lost"]
    assert any(s.name == "k.stage" for s in tl.ctas[100].stages)  # one task: start known


def test_files_pt_and_npy(tmp_path: Path, sim_timeline: Timeline) -> None:
    torch = pytest.importorskip("torch")
    arr = stamps_of(sim_timeline)
    np.save(tmp_path / "s.npy", arr)
    torch.save(torch.from_numpy(arr), tmp_path / "s.pt")
    torch.save({"tl": torch.from_numpy(arr)}, tmp_path / "d.pt")
    a = load_trace(tmp_path / "s.npy", R=1, L=1)
    b = load_trace(tmp_path / "s.pt", R=1, L=1)
    c = read_stamps(tmp_path / "d.pt", R=1, L=1)
    assert a.makespan == b.makespan == c.makespan


def test_refuses_pickled_objects(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    import pickle

    class Evil:
        def __reduce__(self):
            return (print, ("unpickled!",))

    (tmp_path / "e.pt").write_bytes(pickle.dumps(Evil()))
    with pytest.raises(TraceFormatError):
        read_stamps(tmp_path / "e.pt", R=1, L=1)
    torch.save({"a": 1, "b": [2]}, tmp_path / "o.pt")
    with pytest.raises(TraceFormatError, match="not a tensor"):
        read_stamps(tmp_path / "o.pt", R=1, L=1)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda a: a.__setitem__((7, 13), 5), "points 12..14"),
        (lambda a: a.__setitem__((0, 4), a[0, 3]), "point 4 (load_x)"),
        (lambda a: a.__setitem__((9, 2), -1), "negative stamp"),
        (lambda a: a.__setitem__((9, 2), 10**18), "not of this launch"),
        (lambda a: a.__setitem__(slice(None), 0), "no CTA stamped"),
    ],
)
def test_wrong_stamps_are_named(sim_timeline: Timeline, edit, needle: str) -> None:
    arr = stamps_of(sim_timeline)
    edit(arr)
    with pytest.raises(TraceFormatError) as e:
        stamps_timeline(arr, R=1, L=1)
    assert needle in str(e.value)


def test_wrong_shape_dtype_and_config(tmp_path: Path) -> None:
    with pytest.raises(TraceFormatError, match="expected"):
        stamps_timeline(np.zeros((256, 12), np.int64), R=1, L=1)
    np.save(tmp_path / "f.npy", np.zeros((256, 15), np.float32))
    with pytest.raises(TraceFormatError, match="dtype"):
        read_stamps(tmp_path / "f.npy", R=1, L=1)
    with pytest.raises(InvalidInput, match="configuration"):
        stamps_timeline(np.ones((256, 15), np.int64), R=100, L=1)


def test_missing_points_mean_unfinished(sim_timeline: Timeline) -> None:
    arr = stamps_of(sim_timeline)
    arr[3, list(KDA_POINTS)] = 0  # CTA 3 stopped before its kda task
    tl = stamps_timeline(arr, R=1, L=1)
    assert tl.ctas[3].end is None and tl.deadlock


@settings(max_examples=60)
@given(
    arr=hnp.arrays(
        dtype=st.sampled_from([np.int64, np.int32, np.uint8, np.float64]),
        shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=20),
        elements=None,
    )
)
def test_fuzz_arrays(arr: np.ndarray) -> None:
    try:
        stamps_timeline(arr, R=1, L=1)
    except InvalidInput as e:
        assert str(e).strip()


@settings(max_examples=40)
@given(data=st.data())
def test_fuzz_mutated_full_arrays(sim_timeline: Timeline, data) -> None:
    arr = stamps_of(sim_timeline)
    for _ in range(data.draw(st.integers(1, 5))):
        i = data.draw(st.integers(0, arr.shape[0] - 1))
        j = data.draw(st.integers(0, POINTS - 1))
        arr[i, j] = data.draw(st.integers(-(2**63), 2**63 - 1))
    try:
        stamps_timeline(arr, R=1, L=1)
    except InvalidInput as e:
        assert str(e).strip()


@settings(max_examples=40)
@given(
    blob=st.binary(max_size=400), cut=st.integers(0, 4000), suffix=st.sampled_from([".npy", ".pt"])
)
def test_fuzz_files(
    tmp_path_factory, sim_timeline: Timeline, blob: bytes, cut: int, suffix: str
) -> None:
    torch = pytest.importorskip("torch")
    d = tmp_path_factory.mktemp("st")
    good = d / f"g{suffix}"
    if suffix == ".npy":
        np.save(good, stamps_of(sim_timeline))
    else:
        torch.save(torch.from_numpy(stamps_of(sim_timeline)), good)
    raw = good.read_bytes()
    for content in (blob, raw[: cut % (len(raw) + 1)], raw[:64] + blob + raw[64:]):
        p = d / f"f{suffix}"
        p.write_bytes(content)
        try:
            read_stamps(p, R=1, L=1)
        except InvalidInput as e:
            assert str(e).strip()


def test_the_variants_are_taken_by_name_and_a_wrong_name_is_said(sim_timeline: Timeline) -> None:
    arr = stamps_of(sim_timeline)
    tl = stamps_timeline(arr, R=1, L=1, gpu="h200", nw_first=True, onw_first=True)
    assert tl.meta.config().variants() == ("nw_first", "onw_first")
    with pytest.raises(InvalidInput, match=r"not a protocol variant: \['nw_frist'\]"):
        stamps_timeline(arr, R=1, L=1, nw_frist=True)


@pytest.mark.parametrize(
    ("point", "after", "needle"),
    [
        (1, 0, "point 1 (slice) is stamped at tick {t}, before point 0 (start)"),
        (3, 2, "point 3 (mix) is stamped at tick {t}, before point 2 (gate)"),
        (11, 10, "point 11 (k.norm) is stamped at tick {t}, before point 10 (k.recur)"),
    ],
)
def test_points_out_of_order_are_named(
    sim_timeline: Timeline, point: int, after: int, needle: str
) -> None:
    arr = stamps_of(sim_timeline)
    cta = next(c for c in range(len(arr)) if arr[c, point] and arr[c, after])
    arr[cta, point] = t = int(arr[cta, after]) - 1
    with pytest.raises(TraceFormatError) as e:
        stamps_timeline(arr, R=1, L=1)
    assert needle.format(t=t) in str(e.value) and f"CTA {cta}" in str(e.value)


def test_equal_stamps_are_in_order(sim_timeline: Timeline) -> None:
    """Two points in one 10 ns tick are in order: only a step back is refused."""
    arr = stamps_of(sim_timeline)
    cta = next(c for c in range(len(arr)) if arr[c, 3] and arr[c, 2])
    arr[cta, 3] = arr[cta, 2]
    mix = next(s for s in stamps_timeline(arr, R=1, L=1).ctas[cta].stages if s.name == "mix")
    assert mix.start == mix.end
