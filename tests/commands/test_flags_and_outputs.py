"""Flags and output paths are checked before any work: exit 2 naming the flag and path;
outputs are written atomically and --force is still asked for at write time."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import kda_sim.commands.simulate as simulate_cmd
from kda_sim.cli import main
from kda_sim.commands.common import finite_json, write_output
from kda_sim.errors import InvalidInput

SIM = ["simulate", "--gpu", "h200", "--R", "1", "--L", "1"]


@pytest.fixture
def no_work(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*a: object, **k: object) -> None:
        raise AssertionError("simulated before the flags were checked")

    monkeypatch.setattr(simulate_cmd, "simulate", refuse)


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        ([*SIM, "--seed", "-1"], "--seed"),
        ([*SIM, "--seed", "1", "--jitter", "nan"], "--jitter"),
        ([*SIM, "--seed", "1", "--jitter", "inf"], "--jitter"),
        ([*SIM, "--seed", "1", "--jitter", "1.5"], "--jitter"),
        (["check", "--gpu", "h200", "--jitter", "nan"], "--jitter"),
        (["check", "--gpu", "h200", "--seeds", "-2"], "--seeds"),
        (["floor", "--poll-ns", "nan"], "--poll-ns"),
        (["floor", "--stream-tbps", "inf"], "--stream-tbps"),
    ],
)
def test_a_bad_number_is_refused_by_argparse(argv, flag, capsys, no_work) -> None:
    with pytest.raises(SystemExit) as e:
        main(argv)
    assert e.value.code == 2
    assert flag in capsys.readouterr().err


def test_outputs_checked_before_the_work(tmp_path: Path, capsys, no_work) -> None:
    (tmp_path / "d").mkdir()
    cases = [
        (["--out", str(tmp_path / "no" / "t.json")], "no such directory"),
        (["--png", str(tmp_path / "g.xyz")], "unknown figure suffix"),
        (["--out", str(tmp_path / "d")], "is a directory"),
        (["--out", str(tmp_path / "d"), "--force"], "is a directory"),
        (["--out", str(tmp_path / "x.png"), "--png", str(tmp_path / "x.png")], "one file"),
    ]
    for extra, said in cases:
        assert main([*SIM, *extra]) == 2, extra
        err = capsys.readouterr().err
        assert said in err and extra[0] in err, (extra, err)


def test_a_symlink_loop_is_refused(tmp_path: Path, capsys, no_work) -> None:
    loop = tmp_path / "loop.json"
    loop.symlink_to(loop)
    assert main([*SIM, "--out", str(loop), "--force"]) == 2
    assert "--out" in capsys.readouterr().err


def test_simulate_writes_both_outputs(tmp_path: Path) -> None:
    out, png = tmp_path / "t.json", tmp_path / "g.png"
    assert main([*SIM, "--out", str(out), "--png", str(png)]) == 0
    assert out.stat().st_size > 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.png", "t.json"]  # no temp left


def test_a_file_that_appears_during_the_work_is_kept_without_force(tmp_path: Path) -> None:
    path = tmp_path / "r.json"

    def write(tmp: Path) -> None:
        path.write_text("theirs")  # another process, while we worked
        tmp.write_text("ours")

    with pytest.raises(InvalidInput, match="--force"):
        write_output(path, write, force=False, flag="--out")
    assert path.read_text() == "theirs" and list(tmp_path.iterdir()) == [path]
    write_output(path, lambda tmp: tmp.write_text("ours"), force=True, flag="--out")
    assert path.read_text() == "ours"


def test_a_dangling_symlink_is_replaced_not_written_through(tmp_path: Path) -> None:
    link, target = tmp_path / "r.json", tmp_path / "elsewhere.json"
    link.symlink_to(target)
    write_output(link, lambda tmp: tmp.write_text("ours"), force=True)
    assert not target.exists() and not link.is_symlink() and link.read_text() == "ours"


def test_finite_json_writes_null_and_says_why() -> None:
    text = finite_json({"a": float("nan"), "b": [1.0, float("-inf")], "c": {"d": 2.5}})
    d = json.loads(text)  # strict: json.loads would take NaN, so check the text too
    assert "NaN" not in text and "Infinity" not in text
    assert d["a"] is None and d["b"] == [1.0, None] and d["c"] == {"d": 2.5}
    assert set(d["non_finite"]) == {"a", "b[1]"}
    assert "nan" in d["non_finite"]["a"] and "-inf" in d["non_finite"]["b[1]"]
    assert "non_finite" not in json.loads(finite_json({"a": 1.0}))
