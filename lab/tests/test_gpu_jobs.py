"""lab/gpu_jobs.py: what the record / report scripts check before any launch, and how a
report is written."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from kda_sim.errors import InvalidInput
from lab.gpu_jobs import before_launches, emit, probe_main, report_main, report_to, unwritable


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


def _probe(argv: list[str], ran: list[int]) -> int:
    def args(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--n", type=int, default=1)

    def run(a: argparse.Namespace) -> dict:
        ran.append(a.n)
        return {"rows": [a.n]}

    return probe_main(
        argv,
        name="toy_probe",
        doc="A toy probe.\n",
        add_args=args,
        bad_args=lambda a: "--n at least 1" if a.n < 1 else None,
        run=run,
        report=lambda d: f"rows {d['rows']}",
    )


def test_probe_main_refuses_before_any_launch(tmp_path: Path, capsys) -> None:
    torch = pytest.importorskip("torch")
    ran: list[int] = []
    kept = tmp_path / "mine.json"
    kept.write_text("mine")
    assert _probe(["--out", str(tmp_path / "new.json"), "--n", "0"], ran) == 2
    assert "toy_probe: --n at least 1" in capsys.readouterr().err
    assert _probe(["--out", str(kept)], ran) == 2  # an existing out: kept, not run
    assert "exists" in capsys.readouterr().err and kept.read_text() == "mine"
    if not torch.cuda.is_available():
        assert _probe(["--out", str(tmp_path / "new.json")], ran) == 2
        assert "no CUDA GPU" in capsys.readouterr().err
        assert not (tmp_path / "new.json").exists()
    assert ran == []


def test_probe_main_reports_a_run_and_refuses_other_files(tmp_path: Path, capsys) -> None:
    run = tmp_path / "run.json"
    run.write_text('{"rows": [3]}')
    assert _probe(["--report", str(run)], []) == 0
    assert capsys.readouterr().out == "rows [3]\n"
    run.write_text("{}")
    assert _probe(["--report", str(run)], []) == 2
    assert "not a toy_probe run" in capsys.readouterr().err


def test_report_main_checks_its_files_before_any_work(tmp_path: Path, capsys) -> None:
    made: list[int] = []

    def make() -> dict:
        made.append(1)
        return {"a": 1}

    kept = tmp_path / "mine.json"
    kept.write_text("mine")
    assert unwritable(None, tmp_path / "new.json") is None
    assert report_main("toy", make, str, kept) == 2  # an existing report: kept
    assert report_main("toy", make, str, None, tmp_path / "no" / "x.json") == 2  # no folder
    err = capsys.readouterr().err
    assert f"toy: {kept} exists; not overwriting it" in err and "no such directory" in err
    assert made == [] and kept.read_text() == "mine"
    out = tmp_path / "new.json"
    assert report_main("toy", make, lambda r: f"a is {r['a']}", out) == 0
    assert capsys.readouterr().out == "a is 1\n" and out.read_text() == '{\n "a": 1\n}\n'


def test_report_main_says_bad_input_in_a_line(capsys) -> None:
    def make() -> dict:
        raise InvalidInput("no traces", what="traces")

    assert report_main("toy", make, str, None) == 2
    assert capsys.readouterr().err == "toy: no traces\n"


def test_probe_main_without_its_rounds_and_a_run_that_refuses(
    tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``rounds=False``: the probe's own --rounds (here a list), not the power of two; an
    InvalidInput from ``run`` (what only the GPU tells) is exit 2 naming it, nothing
    written. The GPU faked: the refusal comes before any launch."""
    torch = pytest.importorskip("torch")
    import kda_kernel.triton.trace as trace

    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(trace, "environment", lambda: {"gpu": "fake"})

    def args(ap: argparse.ArgumentParser) -> None:
        ap.add_argument("--rounds", default="2,4")

    def run(a: argparse.Namespace) -> dict:
        if a.rounds == "3":
            raise InvalidInput("3 rounds: not on this GPU", what="rounds")
        return {"rows": a.rounds.split(",")}

    def probe(argv: list[str]) -> int:
        return probe_main(
            argv, name="toy", doc="A toy.\n", run=run, report=str, add_args=args, rounds=False
        )

    out = tmp_path / "run.json"
    assert probe(["--out", str(out), "--rounds", "3"]) == 2
    assert capsys.readouterr().err == "toy: 3 rounds: not on this GPU\n" and not out.exists()
    assert probe(["--out", str(out)]) == 0
    assert json.loads(out.read_text())["rows"] == ["2", "4"]
