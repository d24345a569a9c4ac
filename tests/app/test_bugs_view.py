"""The bug corpus view through streamlit.testing: the table, a picked bug's finding and
its fix's pass, the counterexample drawn beside the fix's run."""

from __future__ import annotations

from pathlib import Path

from apphelp import TIMEOUT, figure_of, goto, no_failure, texts
from streamlit.testing.v1 import AppTest

from kda_sim.app.bug_figures import STALE_TRACE
from kda_sim.kernels.bugs.corpus import cases


def _script() -> None:
    from kda_sim.app.views import bugs

    bugs.render()


def _view() -> AppTest:
    return no_failure(AppTest.from_function(_script, default_timeout=TIMEOUT).run())


def _pick(at: AppTest, kernel: str) -> AppTest:
    at.selectbox(key="bug_pick").set_value(kernel).run()
    return no_failure(at)


def _trace_names(at: AppTest, index: int) -> list[str]:
    return [d.get("name") for d in figure_of(at, index)["data"]]


def test_the_table_lists_every_bug_of_the_corpus() -> None:
    at = _view()
    table = at.dataframe[0].value
    corpus = cases()
    assert list(table["bug"]) == [c.kernel for c in corpus]
    assert list(table["thread"]) == [c.threads[0] for c in corpus]
    assert list(table["culprit"]) == [c.culprit for c in corpus]
    assert at.selectbox(key="bug_pick").options == [f"{c.kernel} ({c.project})" for c in corpus]


def test_a_picked_hang_shows_its_finding_the_fix_passing_and_the_stuck_launch() -> None:
    at = _pick(_view(), "flashmoe_h20")
    shown = texts(at.markdown)
    assert "https://github.com/osayamenja/FlashMoE/issues/3" in shown  # the docstring
    found = texts(at.error)
    assert "[deadlock]" in found and "READY[0]" in found and "fix:" in found
    assert "PASS" in texts(at.success)
    assert "kda-sim check --kernel flashmoe_h20 --gpu h20 --fix true" in shown
    bug, fix = _trace_names(at, 0), _trace_names(at, 1)
    assert "stuck (waits)" in bug and "never resident (no free slot)" in bug
    assert "wait-for chain" in bug
    assert "stuck (waits)" not in fix
    hang = "the launch (nominal engine run): hangs, 132 of 132 CTAs stuck, 54 never resident"
    assert f"**bug** · {hang}" in shown
    assert "**fix** · the launch (nominal engine run): finishes" in shown


def test_a_picked_stale_replay_is_drawn_with_its_stale_passes() -> None:
    at = _pick(_view(), "deepgemm_gridid")
    assert "[stale]" in texts(at.error) and "READY[" in texts(at.error)
    assert "PASS" in texts(at.success)
    assert at.radio(key="bug_launch").value == "replay 1 of launch 0"
    assert STALE_TRACE in _trace_names(at, 0)
    assert STALE_TRACE not in _trace_names(at, 1)
    at.radio(key="bug_launch").set_value("launch 0").run()
    assert STALE_TRACE not in _trace_names(no_failure(at), 0)


def test_a_host_sequence_bug_shows_its_shortest_failing_sequence() -> None:
    at = _pick(_view(), "aiter_splitk")  # the case's 'zero=SEM; launch; replay'
    head = at.error[0].value
    assert "**shortest:** launch; replay (2 steps of the given 3" in head, head


def test_the_view_is_in_the_apps_navigation(empty_traces: Path) -> None:
    at = AppTest.from_file(
        str(Path(__file__).resolve().parents[2] / "app.py"), default_timeout=TIMEOUT
    )
    at = goto(no_failure(at.run()), "Bug corpus")
    assert list(at.dataframe[0].value["bug"]) == [c.kernel for c in cases()]
    assert "[deadlock]" in texts(at.error)  # the first bug, checked
    assert "h200 R=2 L=2" not in texts(at.markdown)  # no run's banner: the view needs none


def test_every_bug_shows_its_culprit_and_its_fix_passing() -> None:
    at = _view()
    for case in cases():
        _pick(at, case.kernel)
        head = at.error[0].value  # the first finding shown is the one naming the culprit
        assert f"[{case.category}]" in head and case.culprit in head, (case.kernel, head)
        assert "PASS" in texts(at.success), case.kernel
        assert len(at.get("plotly_chart")) == 2, case.kernel


def test_grids_run_together_say_which_rows_are_which_grid() -> None:
    at = _pick(_view(), "mirage_b200")
    assert "[deadlock]" in at.error[0].value and "grid 1 CTA" in at.error[0].value
    # 80 scheduler blocks, then 128 workers (the fix's: 20 + 128, the B200's 148 SMs)
    captions = texts(at.caption)
    assert "Rows: grid 0 is CTAs 0-79, grid 1 is CTAs 80-207." in captions
    assert "Rows: grid 0 is CTAs 0-19, grid 1 is CTAs 20-147." in captions
