"""The run picker: every registered kernel simulated with its defaults and shown by every
view, its flags as widgets, a kernel file by path, broken kernels said with file:line."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from apphelp import figure_of, goto, no_failure, texts
from streamlit.testing.v1 import AppTest

from kda_sim.app import picker
from kda_sim.engine import simulate
from kda_sim.kernels.registry import DEFAULT_KERNEL, get, names
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import load_profile


def pick(at: AppTest, choice: str) -> AppTest:
    at.sidebar.selectbox(key="run_choice").set_value(choice).run()
    return at


def expected_rows(kernel: str) -> list[tuple[int, str]]:
    """(CTA, role) of the kernel's default launch, in the order the timeline draws them:
    by the kernel's role order, then CTA."""
    spec = get(kernel)
    programs = spec.build(spec.default_config()).programs
    order = {r: i for i, r in enumerate(spec.roles)}
    rows = [(p.cta, str(p.role)) for p in programs]
    return sorted(rows, key=lambda x: (order.get(x[1], len(order)), x[0]))


@pytest.mark.parametrize("kernel", names())
def test_every_kernel_simulates_and_its_timeline_has_its_ctas_and_roles(
    empty_traces: Path, make_app, kernel: str
) -> None:
    at = no_failure(pick(make_app(), f"kernel {kernel}"))
    # a kernel whose default launch hangs by design (schedworker's one grid waits on the
    # other's) is shown as stuck, and drawn all the same; nothing else may be an error
    stuck = [e for e in at.error if str(e.value).startswith("This run does not finish")]
    assert len(stuck) == len(at.error), texts(at.error)
    spec = get(kernel)
    hangs = simulate(spec.default_config(), load_profile("h200")).deadlock
    assert bool(stuck) == hangs
    rows = expected_rows(kernel)
    n = len(rows)
    labels = {m.label: m.value for m in at.metric}
    if not hangs:
        assert labels["CTAs finished"] == f"{n} / {n}"
    roles = list(dict.fromkeys(r for _, r in rows))
    assert at.multiselect(key="tl_roles").options == roles
    layout = figure_of(at)["layout"]["yaxis"]
    assert layout["ticktext"] == [f"CTA {rows[i][0]}" for i in layout["tickvals"]]
    if n <= 40:  # every row labelled
        assert len(layout["ticktext"]) == n
    spec = get(kernel)
    drawn = {d["name"] for d in figure_of(at)["data"]}
    assert set(spec.stages) & drawn, (spec.stages, drawn)


@pytest.mark.parametrize("kernel", [k for k in names() if k != DEFAULT_KERNEL])
def test_every_view_shows_another_kernel_or_says_why_not(
    empty_traces: Path, make_app, kernel: str
) -> None:
    at = pick(make_app(), f"kernel {kernel}")
    spec = get(kernel)
    for view in ("Follow a hand-off", "Compare", "What-if", "Tags", "Take it away"):
        goto(at, view)
    goto(at, "Safety map")
    if hook(spec, "sweep_axes") is None:
        assert f"No safety map for {spec.name}" in texts(at.info)
    at.button(key="sm_check_go").click().run()
    no_failure(at)
    assert f"{spec.label(spec.default_config())}" in texts(at.code)


def test_the_kernels_flags_are_widgets_and_a_bad_value_is_its_message(
    empty_traces: Path, make_app
) -> None:
    at = pick(make_app(), "kernel ticketqueue")
    at.sidebar.number_input(key="kc|ticketqueue|items").set_value(5).run()
    assert "items=5" in texts(at.markdown)
    at.sidebar.number_input(key="kc|ticketqueue|ctas").set_value(0).run()
    no_failure(at)
    assert "ctas = 0: at least 1" in texts(at.error)
    # nothing drawn for a launch that cannot run: no chart, no picture of one
    assert not at.get("plotly_chart") and not at.get("image")


def test_a_ticket_wait_on_a_larger_ticket_shows_deadlock_with_its_chain(
    empty_traces: Path, make_app
) -> None:
    at = pick(make_app(), "kernel ticketqueue")
    at.sidebar.checkbox(key="kc|ticketqueue|bad_wait").check().run()
    assert "does not finish" in texts(at.error)
    goto(at, "Safety map")
    at.button(key="sm_check_go").click().run()
    no_failure(at)
    errors = texts(at.error)
    assert "DEADLOCK on h200" in errors
    assert "Wait-for chain at residency 1: item 0" in errors
    assert "DEADLOCKS" in texts(at.code)


def test_what_if_takes_the_kernels_own_fields(empty_traces: Path, make_app) -> None:
    at = goto(pick(make_app(), "kernel ticketqueue"), "What-if")
    assert "Finishes in" in texts(at.success)
    at.checkbox(key="wi|ticketqueue|bad_wait").check().run()
    no_failure(at)
    assert "DEADLOCK on h200" in texts(at.error)
    at.checkbox(key="wi|ticketqueue|bad_wait").uncheck().run()
    at.checkbox(key="wi_switches").check().run()
    table = at.dataframe[0].value.set_index("on")
    assert table.loc["none", "verdict"] == "finishes"
    assert table.loc["bad_wait", "verdict"] == "deadlocks"
    at.number_input(key="wi|ticketqueue|items").set_value(0).run()
    no_failure(at)
    assert "items = 0: at least 1" in texts(at.warning)


def test_the_hand_off_view_follows_a_counter_word(empty_traces: Path, make_app) -> None:
    at = goto(pick(make_app(), "kernel ticketqueue"), "Follow a hand-off")
    # the default pick is the longest hand-off on the critical path: a DONE flag wait
    table = at.dataframe[0].value
    assert table["put"].str.startswith("DONE[").all()
    assert table["released it"].any()


def test_a_kernel_file_by_path(empty_traces: Path, make_app) -> None:
    at = pick(make_app(), picker.FILE_CHOICE)
    assert "Name a kernel file" in texts(at.info)
    path = picker.EXAMPLES_DIR / "pingpong.py"
    at.sidebar.text_input(key="kf_path").set_value(str(path)).run()
    no_failure(at)
    assert not at.error, texts(at.error)
    assert {m.label: m.value for m in at.metric}["CTAs finished"] == "2 / 2"
    at.sidebar.text_input(key="kf_path").set_value("").run()
    at.sidebar.selectbox(key="kf_example").set_value("gridbarrier.py").run()
    no_failure(at)
    spec = get("gridbarrier")
    n = len(spec.build(spec.default_config()).programs)
    assert {m.label: m.value for m in at.metric}["CTAs finished"] == f"{n} / {n}"


BROKEN_BUILD = """\
from dataclasses import dataclass

from kda_sim.kernels.spec import Kernel


@dataclass(frozen=True)
class Cfg:
    ctas: int = 2


def build(cfg):
    return 1 // 0


KERNEL = Kernel(
    name="broken_build",
    config_type=Cfg,
    build_fn=build,
    regions_fn=lambda cfg: {"A": 1},
    roles=("w",),
    stages=("s",),
)
"""


@pytest.mark.parametrize(
    ("text", "line", "words"),
    [
        (BROKEN_BUILD, 12, "ZeroDivisionError"),
        ("x = 1\nKERNEL = (\n", 2, "SyntaxError"),
        ("import math\nraise RuntimeError('no GPU here')\n", 2, "no GPU here"),
    ],
)
def test_a_broken_kernel_file_shows_its_file_and_line(
    empty_traces: Path, make_app, tmp_path: Path, text: str, line: int, words: str
) -> None:
    path = tmp_path / "my_kernel.py"
    path.write_text(textwrap.dedent(text))
    at = pick(make_app(), picker.FILE_CHOICE)
    at.sidebar.text_input(key="kf_path").set_value(str(path)).run()
    no_failure(at)
    msg = texts(at.error)
    assert f"{path.resolve()}:{line}" in msg and words in msg, msg
