"""The sweep benchmark runs each tree's own ``kda_sim`` (its checkout first on the path),
and a run that fails stops it naming the tree (it times nothing here)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import sweep_bench as B

ROOT = Path(B.__file__).resolve().parents[1]


def test_a_tree_and_its_shim_come_first_on_the_path(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("PYTHONPATH", "/elsewhere")
    assert B.env_for(tmp_path)["PYTHONPATH"] == f"{tmp_path}:/elsewhere"
    (tmp_path / ".shim").mkdir()
    assert B.env_for(tmp_path)["PYTHONPATH"] == f"{tmp_path}:{tmp_path / '.shim'}:/elsewhere"


@pytest.mark.parametrize("run", [B.run_process, B.run_inside])
def test_a_refused_sweep_stops_it_naming_the_tree(run) -> None:
    with pytest.raises(SystemExit, match=f"{ROOT}: .*exit"):
        run(ROOT, ["sweep", "--kernel", "pingpong"])


def test_the_process_run_returns_its_time_and_output() -> None:
    wall, cpu, out = B.run_process(ROOT, ["--help"])
    assert wall > 0 and cpu > 0 and "safety map over R x L" in out
