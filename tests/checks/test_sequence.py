"""Checks over host sequences: a frozen-epoch replay passes on an old tag and its fixes
pass; host zeroing inside vs outside the captured graph; a counter left by an earlier
launch; two grids in either order racing for slots; a clear of one grid racing the
other's adds where the two run together."""

from __future__ import annotations

import pytest

from kda_sim.checks.findings import Category, failing
from kda_sim.checks.sequence import check_sequence
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile


def _check(kernel: str, text: str, gpu: str = "h200", occupancy: int | None = None, **cfg):
    spec = get(kernel)
    prof = load_profile(gpu, kernel=kernel)
    seq = run_sequence(spec, spec.config_type(**cfg), prof, parse(text), occupancy=occupancy)
    return seq, check_sequence(seq)


def test_a_frozen_epoch_replay_passes_on_the_old_tag() -> None:
    seq, fs = _check("pingpong", "launch; replay*2")
    assert [f.category for f in fs] == [Category.STALE, Category.STALE]
    first = fs[0]
    assert first.details["label"] == "replay 1 of launch 0"
    assert first.details["cta"] == "CTA 1" and first.details["pair"] == "VAL[0]"
    assert first.details["writer"] == "launch 0 (CTA 0)"
    assert first.details["satisfied_ns"] < first.details["put_ns"]  # read before the put
    assert fs[1].details["writer"] == "replay 1 of launch 0 (CTA 0)"
    assert "replay update" in first.fix
    # the replay's consumer did not wait for its producer: it finished earlier
    assert seq.runs[1].result.timeline.ctas[1].end < seq.runs[0].result.timeline.ctas[1].end


@pytest.mark.parametrize("text", ["launch; replay*2 update", "launch zero=VAL; replay*2"])
def test_the_fixes_of_a_frozen_epoch_pass(text: str) -> None:
    seq, fs = _check("pingpong", text)
    assert fs == [] and len(seq.runs) == 3


def test_fresh_launches_never_pass_on_an_old_tag() -> None:
    assert _check("pingpong", "launch*3", rounds=2)[1] == []


def test_a_counter_zeroed_outside_the_graph_hangs_a_replay() -> None:
    seq, fs = _check("splitk", "zero=SEM; launch; replay*3")
    hang = [f for f in fs if f.category is Category.DEADLOCK]
    assert len(hang) == 1 and seq.runs[-1].result.deadlock
    d = hang[0].details
    assert d["word"] == "SEM[0]" and d["cta"] == "CTA 0" and d["left"] >= 2
    assert d["label"].startswith("replay")
    assert "launch zero=SEM" in hang[0].fix
    assert seq.not_run == 3 - (len(seq.runs) - 1)


def test_a_counter_zeroed_inside_the_graph_passes() -> None:
    seq, fs = _check("splitk", "launch zero=SEM; replay*3")
    assert fs == [] and len(seq.runs) == 4


def test_a_counter_reset_by_the_kernel_passes() -> None:
    assert _check("splitk", "launch; replay*3", reset=True)[1] == []


def test_a_clear_at_one_grids_end_races_the_other_grid_run_together() -> None:
    # in one stream the kernel boundary orders the reducer's clear before the next launch
    assert _check("splitk", "launch; launch", reset=True)[1] == []
    seq, fs = _check("splitk", "launch & launch", reset=True)
    races = [f for f in fs if f.category is Category.RESET_RACE]
    assert races and races[0].details["label"] == seq.runs[0].label
    f = next(f for f in races if f.details["clearer"]["cta"] == 0)
    assert "grid 0 CTA 0 (reducer)" in f.message and "clears SEM[0]" in f.message
    assert "grid 1 CTA 1 (split)" in f.message  # the other grid's add
    assert f.fix.startswith("order the grids")


def test_a_ge_wait_on_a_left_counter_passes_early() -> None:
    seq, fs = _check("splitk", "launch; replay", wait="ge", splits=4)
    assert fs and all(f.category is Category.STALE for f in fs)
    d = fs[0].details
    assert d["label"] == "replay 1 of launch 0" and d["word"] == "SEM[0]" and d["left"] == 4
    assert d["writer"].startswith("launch 0 (CTA")
    assert not seq.runs[1].result.deadlock  # it does not hang: it reduces too early
    assert _check("splitk", "launch zero=SEM; replay", wait="ge", splits=4)[1] == []


@pytest.mark.parametrize(
    "order", [("scheduler", "worker"), ("worker", "scheduler")], ids=["sched-first", "work-first"]
)
def test_two_grids_race_for_slots_in_either_order(order: tuple[str, str]) -> None:
    text = " & ".join(f"launch grid={g}" for g in order)
    # one CTA a CU (256 slots): 1 scheduler + 256 workers do not fit, 255 do
    seq, fs = _check("schedworker", text, gpu="mi355x", occupancy=1, workers=256)
    (f,) = failing(fs)
    assert f.category is Category.DEADLOCK
    assert f.details["slots"] == 256 and sorted(f.details["grids"]) == [1, 256]
    assert f.details["cta"] == "grid 1 CTA " + ("255" if order[0] == "scheduler" else "0")
    assert "at most 256 CTAs" in f.fix
    seq, fs = _check("schedworker", text, gpu="mi355x", occupancy=1, workers=255)
    assert fs == [] and not seq.runs[0].result.deadlock


def test_a_ticket_counter_left_by_the_last_launch_skips_every_item(capsys) -> None:
    """monomoe without its last-ticket clear: the second launch's first take returns past
    the items, so it "finishes" having run none of them: found, with the counter named."""
    from kda_sim.cli import main

    argv = ["check", "--kernel", "monomoe", "--gpu", "h200", "--sequence", "launch; launch"]
    assert main([*argv, "--no-clear", "true"]) == 1
    out = capsys.readouterr().out
    assert "launch 1: the ticket counter TICKET[0] of loop moe held 29" in out
    assert "items 0..24 of 25 never run" in out
    assert main(argv) == 0  # cleared by the last taker: the second launch runs them all
