"""The counterexample's figure: stuck CTAs of a hang, crosses where a replay's waits
passed on an old value."""

from __future__ import annotations

from kda_sim.app.bug_checks import case_of, run_case
from kda_sim.app.bug_figures import STALE_TRACE, counterexample_figure


def _names(fig) -> list[str]:
    return [d.name for d in fig.data]


def test_a_hang_shows_its_stuck_and_never_resident_ctas() -> None:
    bug = run_case(case_of("flashmoe_h20"), False)
    fig = counterexample_figure(bug.launches[0], "bug")
    names = _names(fig)
    assert "stuck (waits)" in names and "never resident (no free slot)" in names
    assert STALE_TRACE not in names
    assert fig.layout.title.text == "bug"


def test_a_stale_replay_marks_each_pass_on_its_row() -> None:
    replay = run_case(case_of("deepgemm_gridid"), False).launches[1]
    fig = counterexample_figure(replay, "bug")
    tr = next(d for d in fig.data if d.name == STALE_TRACE)
    assert len(tr.x) == len(replay.stale)
    assert sorted(tr.y) == sorted(s.cta for s in replay.stale)  # every CTA a row, in order
    assert all(x >= 0 for x in tr.x)
    assert "stuck (waits)" not in _names(fig)


def test_a_fixed_launch_has_no_marks() -> None:
    fix = run_case(case_of("deepgemm_gridid"), True).launches[1]
    names = _names(counterexample_figure(fix, "fix"))
    assert STALE_TRACE not in names and "stuck (waits)" not in names
