"""``kda-sim check --sequence``: exit 0 when the sequence is safe, 1 with the finding,
2 naming the bad token."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.cli import main


def test_a_frozen_epoch_replay_exits_1_naming_the_replay(capsys: pytest.CaptureFixture) -> None:
    code = main(["check", "--kernel", "pingpong", "--gpu", "h200", "--sequence", "launch; replay"])
    out = capsys.readouterr().out
    assert code == 1
    assert "[stale] replay 1 of launch 0 (epoch 1): CTA 1 polls VAL" in out
    assert "written by launch 0 (CTA 0)" in out and "fix:" in out and "UNSAFE" in out


def test_the_fixed_sequence_exits_0(capsys: pytest.CaptureFixture) -> None:
    argv = ["check", "--kernel", "splitk", "--sequence", "launch zero=SEM; replay*2", "--json"]
    assert main(argv) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["safe"] and [r["label"] for r in rep["launches"]][-1] == "replay 2 of launch 0"


def test_kernel_flags_apply_to_every_launch(capsys: pytest.CaptureFixture) -> None:
    argv = ["check", "--kernel", "splitk", "--sequence", "launch; replay", "--reset", "true"]
    assert main(argv) == 0


@pytest.mark.parametrize(
    ("spec", "token"), [("launch; replay*x", "replay*x"), ("launch zero=NOPE", "zero=NOPE")]
)
def test_a_bad_sequence_exits_2_naming_the_token(
    spec: str, token: str, capsys: pytest.CaptureFixture
) -> None:
    assert main(["check", "--kernel", "splitk", "--sequence", spec]) == 2
    assert token in capsys.readouterr().err


def test_k1_takes_a_sequence_too(capsys: pytest.CaptureFixture) -> None:
    argv = ["check", "--R", "1", "--L", "1", "--nb", "1", "--sequence", "launch; launch"]
    assert main(argv) == 0
    assert "launch 1 (epoch 2): finishes" in capsys.readouterr().out


def test_the_docs_example_output_is_what_check_prints(capsys: pytest.CaptureFixture) -> None:
    doc = (Path(__file__).resolve().parents[2] / "docs" / "adding-a-kernel.md").read_text()
    section = doc[doc.index("## Host sequences") :]
    quoted = section[section.index("[stale] replay 1") :].split("\n")[0].rstrip()
    main(["check", "--kernel", "pingpong", "--gpu", "h200", "--sequence", "launch; replay"])
    assert quoted in capsys.readouterr().out.replace("\n", " ")
