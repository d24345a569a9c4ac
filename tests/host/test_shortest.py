"""The shortest failing host sequence: a longer sequence reduced to the steps that fail,
a sequence with no shorter failing one kept, and the candidates the search takes."""

from __future__ import annotations

from kda_sim.checks.findings import Category, failing
from kda_sim.checks.sequence import check_sequence
from kda_sim.host.run import run_sequence
from kda_sim.host.shortest import candidates, shortest, unrolled
from kda_sim.host.spec_text import parse, render
from kda_sim.host.steps import LaunchStep, Replay, Zero
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile

AITER = get("aiter_splitk")
DEEPGEMM = get("deepgemm_gridid")


def _categories(spec, gpu: str, text: str) -> set[Category]:
    cfg = spec.default_config()
    seq = run_sequence(spec, cfg, load_profile(gpu, spec), parse(text))
    return {f.category for f in failing(check_sequence(seq))}


def test_a_longer_failing_sequence_is_reduced_to_the_launch_and_the_replay() -> None:
    given = "zero=SEM; zero=SEM; launch; replay*3"
    cats = _categories(AITER, "mi355x", given)
    assert Category.DEADLOCK in cats
    prof = load_profile("mi355x", AITER)
    least = shortest(AITER, AITER.default_config(), prof, parse(given), cats)
    assert (least.text, least.steps, least.given_steps, least.minimal) == (
        "launch; replay",
        2,
        6,
        True,
    )
    assert Category.DEADLOCK in _categories(AITER, "mi355x", least.text)  # it still fails
    assert not _categories(AITER, "mi355x", "launch")  # and the one shorter passes


def test_a_sequence_with_no_shorter_failing_one_stands() -> None:
    cats = _categories(DEEPGEMM, "b200", "launch; replay")
    prof = load_profile("b200", DEEPGEMM)
    least = shortest(DEEPGEMM, DEEPGEMM.default_config(), prof, parse("launch; replay"), cats)
    assert (least.text, least.steps, least.tried, least.minimal) == ("launch; replay", 2, 1, True)
    assert "no shorter one of its steps fails" in least.line()


def test_candidates_put_the_given_order_first_and_skip_what_cannot_run() -> None:
    given = unrolled(parse("zero=SEM; launch; replay*2"))
    assert given == (Zero(("SEM",)), LaunchStep(), Replay(), Replay())
    two = list(candidates(given, 2))
    assert two[:2] == [(Zero(("SEM",)), LaunchStep()), (LaunchStep(), Replay())]
    assert (Replay(), LaunchStep()) not in two  # a replay before any launch
    assert (LaunchStep(), Zero(("SEM",))) not in two  # ends in a zeroing
    assert (LaunchStep(), LaunchStep()) in two  # an arrangement the given does not have
    assert len(two) == len(set(two))


def test_render_reads_back_as_the_same_steps() -> None:
    text = "zero=SEM; launch zero=SEM grid=worker & launch grid=scheduler; replay*2 update"
    seq = parse(text)
    assert render(seq.steps) == text
    assert unrolled(parse(render(unrolled(seq)))) == unrolled(seq)


def test_a_long_run_of_one_step_is_cut_to_the_length_tried() -> None:
    given = unrolled(parse("launch; replay*1000"))
    three = list(candidates(given, 3))
    assert (LaunchStep(), Replay(), Replay()) == three[0]
    assert len(three) == len(set(three)) <= 2**3


def test_a_long_failing_sequence_is_reduced_quickly() -> None:
    given = "zero=SEM; launch; replay*200"
    cats = _categories(AITER, "mi355x", "zero=SEM; launch; replay")
    prof = load_profile("mi355x", AITER)
    least = shortest(AITER, AITER.default_config(), prof, parse(given), cats)
    assert (least.text, least.given_steps, least.tried) == ("launch; replay", 202, 3)
