"""Running a sequence: epochs frozen by replays, memory carried, the sequence stopped at
a hang, grids renumbered."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.host import run as host_run
from kda_sim.host.memory import PutCells
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile


def _run(kernel: str, text: str, gpu: str = "h200", fold_events: bool = True, **cfg: object):
    spec = get(kernel)
    base = spec.config_type(**cfg)
    prof = load_profile(gpu, kernel=kernel)
    return run_sequence(spec, base, prof, parse(text), fold_events=fold_events)


def test_replays_freeze_the_epoch_unless_updated() -> None:
    assert [r.epoch for r in _run("pingpong", "launch; replay*2; launch").runs] == [1, 1, 1, 2]
    assert [r.epoch for r in _run("pingpong", "launch; replay*2 update").runs] == [1, 2, 3]
    labels = [r.label for r in _run("pingpong", "launch; replay*2").runs]
    assert labels == ["launch 0", "replay 1 of launch 0", "replay 2 of launch 0"]


def test_a_counter_is_carried_and_zeroed_only_where_asked() -> None:
    runs = _run("splitk", "launch; launch", reset=False, wait="ge").runs
    assert runs[1].initial.words == {0: 2}  # two splits' arrivals left by launch 0
    assert runs[1].word_from[0].startswith("launch 0 (CTA")
    runs = _run("splitk", "launch; zero=SEM; launch", wait="ge").runs
    assert runs[1].initial.words == {}


def test_a_hang_stops_the_sequence() -> None:
    seq = _run("splitk", "launch; replay*5")
    assert seq.runs[-1].result.deadlock
    assert len(seq.runs) + seq.not_run == 6
    assert seq.not_run > 0


def test_grids_together_share_one_launch() -> None:
    seq = _run("schedworker", "launch grid=scheduler & launch grid=worker", workers=3)
    (run,) = seq.runs
    assert [(g.first, g.ctas) for g in run.grids] == [(0, 1), (1, 3)]
    assert run.cta(0) == "grid 0 CTA 0" and run.cta(3) == "grid 1 CTA 2"
    assert not run.result.deadlock
    roles = [t.role for t in run.result.timeline.ctas]
    assert roles == ["scheduler", "worker", "worker", "worker"]


def test_a_sequence_runs_unfolded_where_asked() -> None:
    text = "launch; replay*2 update"
    folded, unfolded = _run("pingpong", text), _run("pingpong", text, fold_events=False)
    for f, u in zip(folded.runs, unfolded.runs, strict=True):
        assert f.result.timeline.makespan == u.result.timeline.makespan
        assert u.result.calls == 0 < f.result.calls  # unfolded: every join an event
        assert u.result.events > f.result.events


def test_a_launch_run_again_has_its_put_cells_split_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The runner splits a launch's put cells once and hands the memory that split at
    every run of the launch (a replay, or the same configuration launched again); a
    launch of another configuration gets its own."""
    split = PutCells.split
    made: list[PutCells] = []
    handed: list[PutCells] = []

    def counted(space: object, put_cells: dict) -> PutCells:
        made.append(split(space, put_cells))  # type: ignore[arg-type]
        return made[-1]

    absorb = host_run.Memory.absorb

    def seen(mem: object, space: object, final: object, puts: PutCells, *rest: object) -> None:
        handed.append(puts)
        absorb(mem, space, final, puts, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(PutCells, "split", counted)
    monkeypatch.setattr(host_run.Memory, "absorb", seen)
    seq = _run("pingpong", "launch; replay*2; launch; launch rounds=2")
    assert len(seq.runs) == 5
    assert len(made) == 2  # the default configuration's launch, and rounds=2's
    assert handed[:4] == [made[0]] * 4 and all(h is made[0] for h in handed[:4])
    assert handed[4] is made[1]
    assert made[1].refs != made[0].refs


def test_bad_fields_and_regions_are_named() -> None:
    with pytest.raises(InvalidInput, match="'nope=1'"):
        _run("pingpong", "launch nope=1")
    with pytest.raises(InvalidInput, match="'rounds=x'"):
        _run("pingpong", "launch rounds=x")
    with pytest.raises(InvalidInput, match="'zero=SEM'"):
        _run("pingpong", "zero=SEM; launch")
    with pytest.raises(InvalidInput, match="same regions"):
        _run("pingpong", "launch rounds=1 & launch rounds=2")
