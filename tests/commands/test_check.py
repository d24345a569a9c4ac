"""``kda-sim check --tags`` as a user runs it: a frozen epoch analysed where it is frozen,
findings that name the polling CTA of the configuration given, every fault applied to
every scheme or refused by name, and a slot the launcher forbids refused before any work."""

from __future__ import annotations

import json

import pytest

import kda_sim.commands.check as check_cmd
from kda_sim.cli import main

TAGS = ["check", "--tags"]
# zeroed per step with one tag slot: slot 0's tag is the cleared value 0 at epoch -1 only
CLEARED_AT_MINUS_1 = [*TAGS, "--policy", "zeroed-per-step", "--fault", "frozen-epoch"]
CLEARED_AT_MINUS_1 += ["--tag-slots", "1"]


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("analysed before the flags were checked")

    monkeypatch.setattr(check_cmd, "k1_step_model", refuse)
    monkeypatch.setattr(check_cmd, "analyse", refuse)


def test_a_frozen_epoch_is_analysed_at_the_epoch_given(capsys: pytest.CaptureFixture) -> None:
    assert main([*CLEARED_AT_MINUS_1, "--epoch0", "-1"]) == 1
    out = capsys.readouterr().out
    assert "frozen at -1" in out and "analysed over epoch -1 only" in out
    assert "holds the cleared value 0" in out and out.rstrip().endswith("UNSAFE")
    assert main([*CLEARED_AT_MINUS_1, "--epoch0", "0"]) == 0
    out = capsys.readouterr().out
    assert "frozen at 0" in out and "analysed over epoch 0 only" in out


def test_a_frozen_epoch_without_one_given_is_analysed_at_every_value(
    capsys: pytest.CaptureFixture,
) -> None:
    assert main([*CLEARED_AT_MINUS_1, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert "every epoch it can be frozen at" in d["epochs"]
    assert "frozen at any value" in d["scheme"]
    stale = d["findings"][0]
    assert stale["category"] == "stale" and stale["details"]["reader_epoch"] == -1


@pytest.mark.parametrize(
    ("flags", "reader"),
    [
        ([], "CTA 0 in k.gates, task 0"),
        (["--kda0", "5"], "CTA 5 in k.gates, task 0"),
        (["--kda0", "200"], "CTA 200 in k.gates, task 0"),
        (["--kda-tickets"], "whichever CTA takes its ticket in k.gates, task 0"),
    ],
)
def test_the_reader_is_the_configurations(
    flags: list[str], reader: str, capsys: pytest.CaptureFixture
) -> None:
    argv = [*TAGS, "--shapes", "1x1,2x2", "--nb-per-slot", "1,8", "--fault", "drop-slot"]
    assert main([*argv, *flags, "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["findings"][0]["details"]["reader"] == reader


def test_gate_local_names_the_stage_that_polls_part(capsys: pytest.CaptureFixture) -> None:
    argv = [*TAGS, "--shapes", "4x1,1x1", "--slots", "1", "--json"]
    assert main(argv) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["details"]["reader"] == (
        "CTA 0 in gate"
    )
    assert main([*argv, "--gate-local"]) == 1
    assert json.loads(capsys.readouterr().out)["findings"][0]["details"]["reader"] == (
        "CTA 0 in mix"
    )


@pytest.mark.parametrize("scheme", ["step_tag", "layer+1", "counter64"])
def test_drop_slot_applies_to_every_scheme(scheme: str, capsys: pytest.CaptureFixture) -> None:
    argv = [*TAGS, "--scheme", scheme, "--slots", "2"]
    assert main(argv) == 0
    assert main([*argv, "--fault", "drop-slot"]) == 1
    assert "stale pass (same step" in capsys.readouterr().out


def test_frozen_epoch_is_refused_by_name_where_the_tag_has_no_epoch(
    capsys: pytest.CaptureFixture, no_work: None
) -> None:
    assert main([*TAGS, "--scheme", "layer+1", "--fault", "frozen-epoch"]) == 2
    err = capsys.readouterr().err
    assert "--fault frozen-epoch" in err and "--scheme layer+1" in err


@pytest.mark.parametrize(
    ("flags", "named"),
    [
        (["--slots", "257"], "--slots 257"),
        (["--slots", "300", "--nb", "1"], "--slots 300"),
        (["--slots", "3", "--tag-slots", "2"], "--slots 3"),
        (["--nb-per-slot", "1,1,8", "--tag-slots", "2"], "--nb-per-slot 1,1,8"),
        (["--slots", "300", "--scheme", "layer+1"], "--slots 300"),
    ],
)
def test_more_slots_than_tag_slots_is_an_error_before_any_work(
    flags: list[str], named: str, capsys: pytest.CaptureFixture, no_work: None
) -> None:
    assert main([*TAGS, *flags]) == 2
    err = capsys.readouterr().err
    limit = flags[flags.index("--tag-slots") + 1] if "--tag-slots" in flags else "256"
    assert named in err and f"TAG_SLOTS = {limit}" in err


@pytest.mark.parametrize(
    ("flags", "value"),
    [
        (["--epoch0", str(1 << 31)], "2147483648"),
        (
            [
                "--fault",
                "frozen-epoch",
                "--tag-bits",
                "16",
                "--epoch-bits",
                "8",
                "--epoch0",
                "-40000",
            ],
            "-40000",
        ),
    ],
)
def test_an_epoch_the_counter_cannot_hold_is_refused(
    flags: list[str], value: str, capsys: pytest.CaptureFixture, no_work: None
) -> None:
    assert main([*TAGS, *flags]) == 2
    assert f"--epoch0 {value}" in capsys.readouterr().err
