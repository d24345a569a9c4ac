"""The digest comparison: equal digests pass, a differing result or check report fails,
a folder that is not there exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from lab import result_digests


def _tree(root: Path, rows: list[str], report: str) -> Path:
    (root / "cases").mkdir(parents=True)
    (root / "cases" / "1.tsv").write_text("".join(f"{r}\n" for r in rows))
    (root / result_digests.REPORTS).write_text(report)
    return root


def test_equal_digests_and_reports_pass(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    rows = ["a1\tr1\tcfg one", "a2\tr2\tcfg two"]
    base = _tree(tmp_path / "base", rows, "== x bug rc=1\nreport\n")
    new = _tree(tmp_path / "new", rows[::-1], "== x bug rc=1\nreport\n")
    assert result_digests.main(["compare", str(base), str(new)]) == 0
    assert "both 2" in capsys.readouterr().out


def test_a_differing_result_or_report_fails(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = _tree(tmp_path / "base", ["a1\tr1\tcfg one"], "same\n")
    new = _tree(tmp_path / "new", ["a1\tr9\tcfg one"], "same\n")
    assert result_digests.main(["compare", str(base), str(new)]) == 1
    assert "DIFF a1 cfg one" in capsys.readouterr().out
    other = _tree(tmp_path / "other", ["a1\tr1\tcfg one"], "changed\n")
    assert result_digests.main(["compare", str(base), str(other)]) == 1


def test_a_missing_folder_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert result_digests.main(["compare", str(tmp_path / "no"), str(tmp_path)]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_runs_sharing_no_arguments_are_paired_in_order(
    tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A profile printed with a field more changes every call's argument digest: two
    record runs are then compared call by call in order, not passed with nothing
    compared."""
    base = _tree(tmp_path / "base", ["a1\tr1\tcfg one", "a2\tr2\tcfg two"], "same\n")
    new = _tree(tmp_path / "new", ["b1\tr1\tcfg one", "b2\tr2\tcfg two"], "same\n")
    assert result_digests.main(["compare", str(base), str(new)]) == 0
    assert "in order, calls whose result or label differs: 0" in capsys.readouterr().out
    moved = _tree(tmp_path / "moved", ["b1\tr1\tcfg one", "b2\tr9\tcfg two"], "same\n")
    assert result_digests.main(["compare", str(base), str(moved)]) == 1
    assert "DIFF cfg two / cfg two" in capsys.readouterr().out
    short = _tree(tmp_path / "short", ["b1\tr1\tcfg one"], "same\n")
    assert result_digests.main(["compare", str(base), str(short)]) == 1
    assert "not compared" in capsys.readouterr().out


def test_a_profile_is_keyed_by_its_written_form() -> None:
    """A figure left unset is not in a call's argument key (so a field added with a
    default keeps every key), and a figure set is."""
    import dataclasses

    from kda_sim.machine import load_profile

    prof = load_profile("h200")
    assert "compute_front" in repr(prof)  # the dataclass prints every field
    args = (("cfg", prof), [("seed", 3)])
    key = repr(result_digests._as_written(args))
    assert "compute_front" not in key and "'seed', 3" in key
    fronted = dataclasses.replace(prof, compute_front={"k.recur": 0.7})
    assert "compute_front" in repr(result_digests._as_written((("cfg", fronted), [])))
