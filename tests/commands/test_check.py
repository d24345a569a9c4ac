"""``kda-sim check --tags`` as a user runs it: a frozen epoch analysed where it is frozen,
findings that name the polling CTA of the configuration given, every fault applied to
every scheme or refused by name, and a slot the launcher forbids refused before any work;
one launch's report the same for any ``--jobs``, and ``--jobs 0`` refused; ``--mutant``
applying a generic fault at a site of any kernel and saying whether it was caught."""

from __future__ import annotations

import json
from typing import Any

import pytest

import kda_sim.commands.check as check_cmd
from kda_sim.checks.tags.footprint import StepModel, step_model
from kda_sim.cli import main
from kda_sim.kernels import registry
from kda_sim.kernels.k1.tags import K1Tags

TAGS = ["check", "--tags"]
# zeroed per step with one tag slot: slot 0's tag is the cleared value 0 at epoch -1 only
CLEARED_AT_MINUS_1 = [*TAGS, "--policy", "zeroed-per-step", "--fault", "frozen-epoch"]
CLEARED_AT_MINUS_1 += ["--tag-slots", "1"]


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("analysed before the flags were checked")

    monkeypatch.setattr(K1Tags, "step_model", refuse)
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


# -- another kernel's tag check: the command asks the kernel's tag_model hook -----------------
class PingPongTags:
    """A tag check for pingpong: a step shape is its ``rounds``, every launch puts and
    polls ``VAL[0 .. rounds)``; an 8-bit step tag keeping 3 epoch bits, 4 slots a step."""

    schemes = ("step_tag", "layer+1")
    tag_slots, epoch_bits, tag_bits = 4, 3, 8

    def parse_shapes(self, text: str) -> tuple[tuple[int, ...], ...]:
        return tuple((int(x),) for x in text.split(","))

    def shape_of(self, cfg: Any) -> tuple[int, ...]:
        return (cfg.rounds,)

    def nb_of(self, cfg: Any) -> int:
        return 1

    def step_model(self, shapes: Any, nb_per_slot: Any, layout: Any, cfg: Any) -> StepModel:
        class Names:
            def pair(self, addr: int, shape: int, slot: int) -> str:
                return f"VAL[{addr}]"

            def reader(self, addr: int, shape: int, slot: int) -> str:
                return "CTA 1 in consume"

        def launch(a: int, nb: int) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
            return [(0, shapes[a][0])], [(0, shapes[a][0])]

        return step_model(tuple(f"{s[0]} rounds" for s in shapes), nb_per_slot, launch, Names())


class WithTags:
    def __init__(self, spec: Any) -> None:
        self._spec = spec
        self.name = "pptags"
        self.tag_model = PingPongTags()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._spec, name)


@pytest.fixture
def pptags(monkeypatch: pytest.MonkeyPatch) -> None:
    kernel = WithTags(registry.get("pingpong"))
    monkeypatch.setitem(registry._loaded, "pptags", kernel)


def test_another_kernels_tag_model_is_what_tags_checks(
    pptags: None, capsys: pytest.CaptureFixture
) -> None:
    argv = [*TAGS, "--kernel", "pptags", "--slots", "2"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "(epoch % 2^3) * 4 + slot + 1 in int8" in out and out.rstrip().endswith(
        "SAFE: no poll can pass on a pair its own launch did not write"
    )
    # a step of 1 round leaves VAL[1] alone: a 2-round step finds its own tag there when
    # the one before it ran 2^3 steps earlier
    assert main([*TAGS, "--kernel", "pptags", "--shapes", "2,1", "--json"]) == 1
    stale = json.loads(capsys.readouterr().out)["findings"][0]
    assert "VAL[1]" in stale["message"] and stale["details"]["reader"] == "CTA 1 in consume"
    assert stale["details"]["gap"] == 1 << 3
    assert main([*argv, "--scheme", "counter64"]) == 2
    assert "not a tag scheme of pptags" in capsys.readouterr().err


def test_a_kernel_without_a_tag_model_is_refused_naming_it(
    capsys: pytest.CaptureFixture, no_work: None
) -> None:
    assert main([*TAGS, "--kernel", "pingpong", "--rounds", "x"]) == 2
    err = capsys.readouterr().err
    assert "pingpong defines no tag_model" in err and "--rounds" not in err


@pytest.mark.parametrize("extra", [[], ["--mutant", "missing-put"]])
def test_the_report_does_not_depend_on_jobs(
    extra: list[str], capsys: pytest.CaptureFixture
) -> None:
    """The dynamic checks' runs (nominal, 3 seeds, the extremes, the visibility runs) in
    two worker processes give the serial report, byte for byte; the mutant's transformed
    launch travels to the workers."""
    argv = ["check", "--gpu", "mi355x", "--seeds", "3", "--json", *extra]
    reports = []
    for jobs in ("1", "2"):
        code = main([*argv, "--jobs", jobs])
        reports.append((code, capsys.readouterr().out))
    assert reports[0] == reports[1]
    assert reports[0][0] == (1 if extra else 0)


@pytest.mark.parametrize("command", [["check"], ["sweep"], ["calibrate", "t.json", "--out", "o"]])
def test_no_jobs_is_refused(command: list[str], capsys: pytest.CaptureFixture) -> None:
    with pytest.raises(SystemExit) as exit_:  # argparse's refusal, before any work
        main([*command, "--jobs", "0"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert "--jobs: 0: must be >= 1" in err and "Traceback" not in err


# -- --mutant: a generic fault at a site of any kernel's launch -----------------------------------
def test_a_generic_fault_at_a_site_is_caught_naming_its_culprit(capsys) -> None:
    argv = ["check", "--kernel", "gridbarrier", "--seeds", "0", "--mutant", "early-clear@2"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert out.startswith("mutant early-clear@2/barrier: a CTA clears a word another unit")
    assert "(CTA 2, op 6; caught as [reset-race])" in out
    assert "[reset-race] CTA 2 (member) in barrier (task 0), op 6 clears ARRIVE[0]" in out
    assert out.rstrip().endswith("mutant caught: [reset-race] names CTA 2, op 6")


def test_without_a_site_the_first_is_taken_and_json_says_caught(capsys) -> None:
    argv = ["check", "--kernel", "pingpong", "--seeds", "0", "--mutant", "remove-put", "--json"]
    assert main(argv) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["mutant"]["name"] == "remove-put" and rep["mutant"]["caught"] is True
    assert "the missing put (the kernel does not say who" in rep["mutant"]["text"]
    assert any(f["category"] == "writers" for f in rep["findings"])


def test_k1s_named_data_flow_mutants_still_run_and_name_their_culprit(capsys) -> None:
    argv = ["check", "--R", "1", "--L", "1", "--seeds", "0", "--mutant", "poll-drops-a-cell"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "mutant poll-drops-a-cell: gemv CTA 56 reads slice 1's x rows" in out
    assert "mutant caught: [coverage] names CTA 56" in out


def test_the_list_names_the_injectors_sites_and_catalogue(capsys) -> None:
    assert main(["check", "--kernel", "splitk", "--mutant", "list"]) == 0
    out = capsys.readouterr().out
    assert "  duplicate-item: " in out and "  early-clear: " in out
    assert "no site in this launch" in out  # splitk has no (value, tag) pair to drop
    assert "catalogue" not in out  # splitk has none


@pytest.mark.parametrize(
    ("mutant", "message"),
    [
        ("bogus", "--mutant bogus: not a mutation of gridbarrier (it has none) nor a generic"),
        ("early-clear@99", "--mutant early-clear@99: no site @99 in this launch (its sites"),
        ("no-drain", "--mutant no-drain: no site in this launch (the fault applies nowhere"),
        ("early-clear@x/y", "a site is CTA, CTA/STAGE or CTA/STAGE#N"),
    ],
)
def test_an_unknown_mutant_or_site_exits_2_naming_it(mutant, message, capsys) -> None:
    assert main(["check", "--kernel", "gridbarrier", "--mutant", mutant]) == 2
    assert message in capsys.readouterr().err


def test_a_k1_catalogue_name_takes_no_site(capsys) -> None:
    assert main(["check", "--mutant", "poll-drops-a-cell@3"]) == 2
    assert "is a fault of k1's catalogue, at its own site" in capsys.readouterr().err


def test_checks_default_jobs_are_the_idle_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` without ``--jobs`` shares its runs among the cores idle at its start."""
    import argparse

    from kda_sim.commands import check as check_cmd
    from kda_sim.commands import common

    p = argparse.ArgumentParser()
    check_cmd.add_parser(p.add_subparsers())
    args = p.parse_args(["check"])
    assert args.jobs == common.IDLE_CORES
    for idle in (1, 2, 5):
        monkeypatch.setattr(common, "idle_jobs", lambda idle=idle: idle)
        assert common.jobs_of(args) == idle
    assert common.jobs_of(p.parse_args(["check", "--jobs", "3"])) == 3
