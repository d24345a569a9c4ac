"""lab/trace_spread.py record: nothing overwritten and no launch without a GPU, each said
as exit 2 before any launch; the traces are named as ``kda-sim spread`` reads them."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.compare.spread import NAME
from kda_sim.errors import InvalidInput
from lab.trace_spread import build_options, main


def test_nothing_is_overwritten_and_a_bad_shape_is_named(tmp_path: Path, capsys) -> None:
    kept = tmp_path / "k1_R1_L1_0.json"
    kept.write_text("mine")
    # record refuses before any launch (so before it needs a GPU), and keeps the file
    assert main(["record", "--shapes", "1x1", "--launches", "1", "--dir", str(tmp_path)]) == 2
    assert kept.read_text() == "mine" and "--force" in capsys.readouterr().err
    assert main(["record", "--shapes", "1y1", "--dir", str(tmp_path / "new")]) == 2
    assert not (tmp_path / "new").exists()
    assert NAME.fullmatch(kept.name)  # the name kda-sim spread reads


def test_without_a_gpu_record_exits_2_with_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    assert main(["record", "--shapes", "1x1", "--launches", "1", "--dir", str(tmp_path)]) == 2
    assert "no CUDA GPU" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize(
    ("flags", "what"),
    [
        (["--probe", "static_item"], "kda_tickets build"),
        (["--kda-tickets", "--probe", "take"], "static build"),
    ],
)
def test_a_probe_on_the_wrong_schedule_is_named_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], what: str
) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "s"
    assert main(["record", "--shapes", "1x1", "--launches", "1", "--dir", str(out), *flags]) == 2
    err = capsys.readouterr().err
    assert "probe" in err and what in err and "no CUDA GPU" not in err
    assert not out.exists()


def test_a_negative_gate_back_off_is_refused_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "s"
    args = ["record", "--shapes", "1x1", "--launches", "1", "--dir", str(out)]
    assert main([*args, "--gate-sleep-ns", "-128"]) == 2
    err = capsys.readouterr().err
    assert "--gate-sleep-ns -128" in err and "no CUDA GPU" not in err
    assert not out.exists()


@pytest.mark.parametrize(
    ("item", "what"),
    [
        ("gate_delay_ns=-5", "gate_delay_ns = -5"),
        ("gate_delay_ns=5x", "an integer"),
        ("nw_first=1", "a Build field"),
        ("cfg=1", "a Build field"),
        ("gate_stagger_ns", "FIELD=N"),
    ],
)
def test_a_bad_lab_build_is_named_before_anything(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], item: str, what: str
) -> None:
    pytest.importorskip("torch")
    out = tmp_path / "s"
    args = ["record", "--shapes", "1x1", "--launches", "1", "--dir", str(out)]
    assert main([*args, "--build", item]) == 2
    err = capsys.readouterr().err
    assert what in err and "no CUDA GPU" not in err
    assert not out.exists()


def test_a_field_named_twice_is_refused() -> None:
    with pytest.raises(InvalidInput, match="named twice"):
        build_options(["gate_delay_ns=1", "gate_delay_ns=2"])
    assert build_options(["gate_delay_ns=4000", "gate_stagger_ns=2500"]) == {
        "gate_delay_ns": 4000,
        "gate_stagger_ns": 2500,
    }
