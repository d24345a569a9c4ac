"""The --sequence text: each form parses to its steps; a bad token is named."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.host.spec_text import parse
from kda_sim.host.steps import LaunchStep, Replay, Together, Zero


def test_every_form() -> None:
    seq = parse("zero=SEM,OUT; launch zero=A x=3; replay*3 update; launch*2 ; replay")
    assert seq.steps == (
        Zero(("SEM", "OUT")),
        LaunchStep(("A",), (("x", "3"),)),
        Replay(3, True),
        LaunchStep(),
        LaunchStep(),
        Replay(1, False),
    )


def test_grids_together_keep_their_order() -> None:
    (step,) = parse("launch grid=b & launch grid=a").steps
    assert step == Together((LaunchStep((), (("grid", "b"),)), LaunchStep((), (("grid", "a"),))))


@pytest.mark.parametrize(
    ("text", "token"),
    [
        ("launch; replay*x", "replay*x"),
        ("launch; replay*0", "replay*0"),
        ("launch; jump", "jump"),
        ("launch; replay fast", "fast"),
        ("launch zero=", "zero="),
        ("launch =3", "=3"),
        ("launch;;", "''"),
        ("replay; launch", "replay"),
        ("zero=SEM", "zero=SEM"),
        ("launch & replay", "replay"),
        ("launch*2 & launch", "launch*2"),
    ],
)
def test_a_bad_token_is_named(text: str, token: str) -> None:
    with pytest.raises(InvalidInput) as e:
        parse(text)
    assert token in str(e.value)
    assert "--sequence" in str(e.value)
