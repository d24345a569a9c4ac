"""A corpus bug's two checks as the bug view gets them: the CLI's own report, and the
launch of the counterexample (the one that hangs, or the replay that passes stale)."""

from __future__ import annotations

import pytest

from kda_sim.app.bug_checks import case_of, run_case
from kda_sim.cli import main


@pytest.mark.parametrize("kernel", ["flashmoe_h20", "deepgemm_gridid"])
@pytest.mark.parametrize("fixed", [False, True])
def test_the_report_is_the_clis(
    kernel: str, fixed: bool, capsys: pytest.CaptureFixture[str]
) -> None:
    case = case_of(kernel)
    code = main(case.argv(fixed))
    run = run_case(case, fixed)
    assert capsys.readouterr().out == run.report + "\n"
    assert run.ok == (code == 0) == fixed
    assert run.command.startswith(f"kda-sim check --kernel {kernel} --gpu {case.gpu}")


def test_a_launch_that_hangs_is_the_counterexample_and_its_fix_finishes() -> None:
    case = case_of("flashmoe_h20")
    bug, fix = run_case(case, False), run_case(case, True)
    assert [f.category.value for f in bug.failing] == ["deadlock"]
    assert len(bug.launches) == 1 and bug.launches[bug.shown].hangs
    assert not fix.findings and not fix.launches[0].hangs
    # the H20 holds 78 of the 132 blocks: the rest never start
    never = [c for c in bug.launches[0].timeline.ctas if c.start is None]
    assert len(never) == 132 - 78


def test_a_replay_that_passes_on_an_old_tag_is_the_counterexample() -> None:
    case = case_of("deepgemm_gridid")
    bug, fix = run_case(case, False), run_case(case, True)
    assert [s.label for s in bug.launches] == ["launch 0", "replay 1 of launch 0"]
    assert bug.shown == 1
    first, replay = bug.launches
    assert not first.stale and not replay.hangs
    assert replay.stale and all("READY" in s.what for s in replay.stale)
    assert {s.left_by for s in replay.stale} <= {f"launch 0 (CTA {c})" for c in range(8)}
    assert {f.category.value for f in bug.failing} == {"stale"}
    assert not any(s.stale or s.hangs for s in fix.launches)


def test_a_host_fix_runs_its_own_sequence() -> None:
    case = case_of("aiter_splitk")
    bug, fix = run_case(case, False), run_case(case, True)
    assert "--sequence 'zero=SEM; launch; replay'" in bug.command
    assert "--sequence 'launch zero=SEM; replay'" in fix.command
    assert bug.launches[bug.shown].label == "replay 1 of launch 0"
    assert bug.launches[bug.shown].hangs and fix.ok
