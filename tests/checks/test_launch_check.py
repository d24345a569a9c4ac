"""One check path for every kernel: ``check_launch`` and its report on the pingpong
variants, and a further check added to :data:`SECTIONS` showing in both reports."""

from __future__ import annotations

import json

import pytest
from pingpong_variants import VariantConfig

from kda_sim.checks import launch_check
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.launch_check import (
    CheckInput,
    Section,
    check_launch,
    launch_json,
    launch_text,
)
from kda_sim.cli import main
from kda_sim.machine.profile import load_profile


def test_every_check_runs_on_a_kernel_that_is_not_k1(mi355x) -> None:
    rep = check_launch(VariantConfig(flagged=True, drain=False, weights_first=True), mi355x)
    assert rep.static.finishes and rep.dynamic.finishes
    assert rep.failing() == {Category.VISIBILITY, Category.ROLE}
    text = launch_text(rep)
    assert text.startswith("mi355x  pingpong-variants rounds=1 flagged=True drain=False")
    assert "STALE READS" in text and "1 polls behind weight loads, 0 accepted" in text
    assert "tags (--tags): not available for pingpong-variants" in text
    assert text.endswith("FAIL: role, visibility")
    js = launch_json(rep)
    assert js["kernel"] == "pingpong-variants" and js["config"]["drain"] is False
    assert js["visibility"]["ok"] is False and js["role_rule"]["polls_behind_weights"] == 1


def test_the_cli_checks_a_variant_by_its_own_flags(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["check", "--kernel", "pingpong-variants", "--gpu", "mi355x", "--seeds", "1"]
    assert main([*base, "--flagged", "true"]) == 0
    assert "visibility, 2 runs with stores acked late: ok\n" in capsys.readouterr().out
    assert main(base) == 0
    assert "ok (nothing to check: no load of flagged data)" in capsys.readouterr().out
    assert main([*base, "--flagged", "true", "--drain", "false", "--json"]) == 1
    assert json.loads(capsys.readouterr().out)["failing"] == ["visibility"]
    assert main([*base, "--mutant", "missing-put"]) == 2
    assert "not a mutation of pingpong-variants" in capsys.readouterr().err


def test_a_further_check_is_one_entry_of_sections(monkeypatch, mi355x) -> None:
    def polls(inp: CheckInput) -> Section:
        n = sum(len(t.polls) for t in inp.nominal.timeline.ctas)
        bad = Finding(Category.ROLE, Severity.FAIL, f"{n} polls in {len(inp.launch.programs)}")
        return Section("polls", f"  polls: {n}", {"count": n}, [bad])

    monkeypatch.setattr(launch_check, "SECTIONS", (polls,))
    rep = check_launch(VariantConfig(rounds=3), mi355x, seeds=(), extreme=False)
    assert not rep.ok and rep.sections[0].data == {"count": 3}
    assert "  polls: 3\n" in launch_text(rep) and "3 polls in 2" in launch_text(rep)
    assert launch_json(rep)["polls"] == {"count": 3}


@pytest.mark.parametrize("seeds", [0, 1, 4])
def test_the_visibility_check_runs_every_seed_asked_for(
    seeds: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--seeds N``: the adversarial run and N jittered ones (it used to run one seed
    whatever N said)."""
    argv = ["check", "--kernel", "pingpong-variants", "--gpu", "mi355x", "--flagged", "true"]
    assert main([*argv, "--drain", "false", "--seeds", str(seeds), "--json"]) == 1
    vis = json.loads(capsys.readouterr().out)["visibility"]
    assert vis["runs"] == 1 + seeds and vis["ok"] is False
    rep = check_launch(
        VariantConfig(flagged=True, drain=False),
        load_profile("mi355x"),
        seeds=tuple(range(1, seeds + 1)),
        extreme=False,
    )
    # every run of the no-drain launch reads the flagged data before it landed
    assert rep.visibility.runs == 1 + seeds and len(rep.visibility.stale) == 1 + seeds
