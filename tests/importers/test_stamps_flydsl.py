"""The FlyDSL K1's [blocks, 18 + 5 T] stamps (kda_sim.kernels.k1.stamps): every task of
every CTA decoded at every shape, round-tripped from simulated launches, and a tensor
that is not the launch it is said to be refused with the mismatch named."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.engine import simulate
from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.kda import tasks_of
from kda_sim.kernels.k1.stamp_launch import COLUMNS as RECORD
from kda_sim.kernels.k1.stamp_launch import FORMAT, launch_record
from kda_sim.kernels.k1.stamps import (
    CTA_ID,
    END,
    EXT_BASE,
    KDA_POINTS,
    POINTS,
    TASKS_RUN,
    ext_width,
    stamps_timeline,
)
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.model import Timeline

T0 = 10**9
ROLE_POINT = {"slice": 1, "gate": 2, "mix": 3, "load_x": 4, "gemv0": 5, "gemv1": 6}
KDA = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")


def tick(ns: float) -> int:
    return T0 + round(ns / 10)


def flydsl_stamps_of(tl: Timeline, cfg: LaunchConfig) -> np.ndarray:
    """What the FlyDSL K1's timeline build writes for the launch ``tl`` simulates."""
    arr = np.zeros((cfg.blocks, ext_width(cfg.n_tasks, cfg.blocks)), dtype=np.int64)
    for c in tl.ctas:
        row = arr[c.cta]
        row[0] = tick(c.start)
        tasks = tasks_of(c.cta, cfg)
        for s in c.stages:
            if s.name in ROLE_POINT:
                row[ROLE_POINT[s.name]] = tick(s.end)
            else:
                n, p = tasks.index(s.task), KDA.index(s.name)
                row[EXT_BASE + 5 * n + p] = tick(s.end)
                row[KDA_POINTS[p]] = row[EXT_BASE + 5 * n + p] if n == len(tasks) - 1 else 0
        if c.role == "attn" and row[2] == 0:
            row[2] = row[1]  # every attn CTA stamps the gate point
        row[END] = max(row[:POINTS].max(), row[EXT_BASE:].max()) + 1
        row[CTA_ID], row[TASKS_RUN] = c.cta, len(tasks)
        row[list(RECORD)] = launch_record(cfg)
    return arr


# (R, L, kda0): one task a CTA, two (288 tasks), four (864), kda0 moved, L > 1
SHAPES = [(1, 1, 0), (3, 1, 0), (3, 2, 77), (9, 1, 5)]


@pytest.fixture(scope="module", params=SHAPES, ids=lambda s: f"R{s[0]}L{s[1]}k{s[2]}")
def launch(request: pytest.FixtureRequest) -> tuple[LaunchConfig, Timeline, np.ndarray]:
    R, L, kda0 = request.param
    cfg = LaunchConfig(R, L, kda0=kda0)
    sim = simulate(cfg, load_profile("mi355x")).timeline
    return cfg, sim, flydsl_stamps_of(sim, cfg)


def decode(cfg: LaunchConfig, arr: np.ndarray, **claim: int) -> Timeline:
    shape = {k: claim.get(k, getattr(cfg, k)) for k in ("R", "L", "nb", "kda0")}
    return stamps_timeline(arr, **shape)


def test_every_task_of_every_cta_is_decoded(launch) -> None:
    cfg, sim, arr = launch
    tl = decode(cfg, arr)
    assert tl.meta.extra["only_last_task"] is False and tl.meta.extra["k_stage_start_lost"] == []
    got = {(c.cta, s.name, s.task): s for c in tl.ctas for s in c.stages}
    want = {(c.cta, s.name, s.task): s for c in sim.ctas for s in c.stages if s.name in KDA}
    assert {k for k in got if k[1] in KDA} == set(want)
    t0 = min(c.start for c in sim.ctas if c.start is not None)
    for key, s in want.items():
        assert got[key].end == pytest.approx(s.end - t0, abs=10)
    # a CTA's second task starts where its first one's k.norm ended
    for c in tl.ctas:
        norms = [s for s in c.stages if s.name == "k.norm"]
        stages = [s for s in c.stages if s.name == "k.stage"]
        for a, b in zip(norms, stages[1:], strict=False):
            assert b.start == a.end


def test_a_tensor_of_another_launch_is_refused(launch) -> None:
    cfg, _, arr = launch
    with pytest.raises(TraceFormatError, match=r"columns; the FlyDSL K1 at R=\d+"):
        decode(cfg, arr, R=1 if cfg.R > 2 else 3)  # another task count a CTA: another width
    if cfg.kda0 != 0:  # the same width, other CTAs run the extra tasks
        with pytest.raises(TraceFormatError, match=f"at kda0={cfg.kda0}, read as kda0=0"):
            decode(cfg, arr, kda0=0)
        arr = arr.copy()
        arr[:, RECORD[-1]] = 0  # the record's kda0 blanked: the task counts still tell
        with pytest.raises(TraceFormatError, match="kda0=0 runs"):
            decode(cfg, arr, kda0=0)


@pytest.mark.parametrize(
    ("edit", "needle"),
    [
        (lambda a: a.__setitem__((3, CTA_ID), 4), "holds CTA 4's stamps"),
        (lambda a: a.__setitem__((100, TASKS_RUN), 2), "ran 2 kda task(s)"),
        (lambda a: a.__setitem__((3, KDA_POINTS[0]), 7), "not its last task's"),
        (lambda a: a.__setitem__((200, a.shape[1] - 1), T0 + 5), "stamps past its"),
        (lambda a: a.__setitem__((0, [KDA_POINTS[-1], END, a.shape[1] - 1]), 0), None),
        (lambda a: a.__setitem__((0, EXT_BASE), a[0, 3] - 1), "before point 3 (mix)"),
        (lambda a: a.__setitem__((0, EXT_BASE + 1), a[0, EXT_BASE] - 1), "column 19 (k.conv"),
        (lambda a: a.__setitem__((0, END), 1), "column 15 (end) is stamped at tick 1, before"),
    ],
)
def test_rows_not_of_the_launch_are_named(edit, needle: str | None) -> None:
    cfg = LaunchConfig(3, 1)  # T = 2: CTAs 0..31 run two tasks, 32.. one
    arr = flydsl_stamps_of(simulate(cfg, load_profile("mi355x")).timeline, cfg)
    edit(arr)
    if needle is None:  # the last column of CTA 0 unstamped: its last task is cut short
        tl = decode(cfg, arr)
        assert [s.name for s in tl.ctas[0].stages if s.task == 256][-1] == "k.recur"
        assert tl.ctas[0].end is None
        return
    with pytest.raises(TraceFormatError) as e:
        decode(cfg, arr)
    assert needle in str(e.value)


def test_the_twins_width_still_loads_only_the_last_task() -> None:
    cfg = LaunchConfig(3, 1)
    arr = flydsl_stamps_of(simulate(cfg, load_profile("mi355x")).timeline, cfg)
    tl = decode(cfg, arr[:, :POINTS])
    assert tl.meta.extra["only_last_task"] is True and 0 in tl.meta.extra["k_stage_start_lost"]
    with pytest.raises(TraceFormatError, match=r"expected \[blocks, 15\]"):
        decode(cfg, arr[:, :16])


def test_compare_loads_it_and_refuses_another_launch(tmp_path, capsys) -> None:
    from kda_sim.cli import main

    cfg = LaunchConfig(3, 1)
    sim = simulate(cfg, load_profile("mi355x")).timeline
    np.save(tmp_path / "s.npy", flydsl_stamps_of(sim, cfg))
    assert main(["compare", str(tmp_path / "s.npy"), "--R", "3", "--L", "1", "--json"]) == 0
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "s.npy"), "--R", "1", "--L", "1"]) == 2
    assert "the FlyDSL K1 at R=1 on 256 CTAs writes 23" in capsys.readouterr().err


@pytest.mark.parametrize("rows", [255, 128, 257])
def test_rows_other_than_the_launchs_ctas_are_refused(rows: int) -> None:
    """The FlyDSL K1 is 256 CTAs: a tensor cut (or padded) to another count is not its
    launch, even where the configuration would take that many blocks."""
    cfg = LaunchConfig(2, 1)
    arr = flydsl_stamps_of(simulate(cfg, load_profile("mi355x")).timeline, cfg)
    arr = np.concatenate([arr, arr[:1]]) if rows > len(arr) else arr[:rows]
    with pytest.raises(TraceFormatError, match=f"{rows} rows \\(CTAs\\); the FlyDSL K1 is one"):
        decode(cfg, arr)


# --- the launch record (columns 12..14): L and nb, which the stamps' times cannot tell --


@pytest.fixture(scope="module")
def r2l1() -> tuple[LaunchConfig, np.ndarray]:
    cfg = LaunchConfig(2, 1)
    return cfg, flydsl_stamps_of(simulate(cfg, load_profile("mi355x")).timeline, cfg)


@pytest.mark.parametrize(
    ("claim", "said"),
    [
        ({"L": 2}, "a launch at L=1, read as L=2"),
        ({"nb": 4}, "a launch at nb=8, read as nb=4"),
        ({"L": 2, "nb": 4}, "a launch at L=1 nb=8, read as L=2 nb=4"),
    ],
)
def test_a_tensor_read_at_another_L_or_nb_is_refused(r2l1, claim: dict, said: str) -> None:
    cfg, arr = r2l1
    with pytest.raises(TraceFormatError) as e:
        decode(cfg, arr, **claim)
    assert str(e.value) == f"stamps: CTA 0: the stamps record {said}"
    assert e.value.what == next(iter(claim))


def test_a_variant_the_launch_did_not_run_is_refused(r2l1) -> None:
    _, arr = r2l1
    with pytest.raises(TraceFormatError, match="at onw_first=off, read as onw_first=on"):
        stamps_timeline(arr, R=2, L=1, onw_first=True)


def test_rows_of_two_launches_are_refused_row_by_row(r2l1) -> None:
    cfg, arr = r2l1
    other = LaunchConfig(2, 2)
    mixed = arr.copy()
    mixed[128:] = flydsl_stamps_of(simulate(other, load_profile("mi355x")).timeline, other)[128:]
    for claim, first in ((cfg, 128), (other, 0)):
        with pytest.raises(TraceFormatError) as e:
            decode(claim, mixed)
        assert f"CTA {first}: " in str(e.value) and "rows of more than one launch" in str(e.value)


def test_a_row_without_its_record_is_refused(r2l1) -> None:
    cfg, arr = r2l1
    old = arr.copy()
    old[:, list(RECORD)] = 0  # as the build wrote before it recorded its launch
    with pytest.raises(TraceFormatError, match=r"CTA 0: no launch record in columns 12\.\.14"):
        decode(cfg, old)
    one = arr.copy()
    one[77, RECORD[0]] = 5
    with pytest.raises(TraceFormatError, match="CTA 77: column 12 holds 5, not a launch record"):
        decode(cfg, one)
    one[77, RECORD[0]] = FORMAT + 1  # a later record format: not read as this one
    with pytest.raises(TraceFormatError, match="CTA 77: a launch record of format 2; this"):
        decode(cfg, one)
    never = arr.copy()
    never[100] = 0  # never flushed (a CTA that never ran): no record asked of it
    assert decode(cfg, never).ctas[100].start is None


def test_a_cut_to_the_twins_columns_keeps_its_record(r2l1) -> None:
    cfg, arr = r2l1
    assert decode(cfg, arr[:, :POINTS]).meta.extra["only_last_task"] is True
    with pytest.raises(TraceFormatError, match="a launch at L=1, read as L=2"):
        decode(cfg, arr[:, :POINTS], L=2)


@pytest.mark.parametrize(
    ("flags", "said"), [(["--L", "2"], "L=1, read as L=2"), (["--nb", "4"], "nb=8, read as nb=4")]
)
def test_compare_refuses_another_shape_naming_it(r2l1, tmp_path, capsys, flags, said) -> None:
    from kda_sim.cli import main

    np.save(tmp_path / "s.npy", r2l1[1])
    shape = {"--R": "2", "--L": "1"} | dict(zip(flags[::2], flags[1::2], strict=True))
    args = [a for kv in shape.items() for a in kv]
    assert main(["compare", str(tmp_path / "s.npy"), *args]) == 2
    assert f"the stamps record a launch at {said}" in capsys.readouterr().err
    assert main(["compare", str(tmp_path / "s.npy"), "--R", "2", "--L", "1", "--json"]) == 0
