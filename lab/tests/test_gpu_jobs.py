"""lab/gpu_jobs.py: what the record / report scripts check before any launch, and how a
report is written."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.errors import InvalidInput
from lab.gpu_jobs import before_launches, emit, report_to


def test_an_existing_path_is_refused_first_and_kept(tmp_path: Path) -> None:
    kept = tmp_path / "mine.json"
    kept.write_text("mine")
    with pytest.raises(InvalidInput, match="exists"):
        before_launches([tmp_path / "new.json", kept], force=False)
    assert kept.read_text() == "mine"


def test_no_gpu_is_said_as_invalid_input(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("a GPU is here")
    with pytest.raises(InvalidInput, match="no CUDA GPU"):
        before_launches([tmp_path / "new.json"], force=False)


def test_emit_writes_the_report_and_prints_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "r.json"
    emit('{"a": 1}', out)
    assert out.read_text() == '{"a": 1}\n'
    emit("{}", None)
    assert capsys.readouterr().out == '{"a": 1}\n{}\n'


def test_a_report_over_an_existing_file_is_refused_before_it_is_made(tmp_path: Path) -> None:
    kept = tmp_path / "mine.json"
    kept.write_text("mine")
    made: list[int] = []
    with pytest.raises(InvalidInput, match="exists"):
        report_to(lambda: made.append(1), kept, force=False)
    assert made == [] and kept.read_text() == "mine"
    report_to(lambda: {"a": 1}, kept, force=True)
    assert kept.read_text() == '{\n "a": 1\n}\n'
