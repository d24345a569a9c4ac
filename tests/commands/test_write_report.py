"""kda_sim.commands.common.write_report, the reports' shared writer: JSON on stdout and in
--out, the table on stderr, the figure to --png, and an existing file refused before the
report is made (its work not done, the file kept)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.commands.common import write_report
from kda_sim.errors import InvalidInput


def _table(r: dict) -> str:
    return f"table of {r['a']}"


def _plot(r: dict, out: Path) -> None:
    out.write_text(f"figure of {r['a']}")


def test_report_table_and_figure_go_where_asked(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    assert write_report(lambda: {"a": 1}, _table, _plot, out, png, False) == {"a": 1}
    assert json.loads(out.read_text()) == {"a": 1} and png.read_text() == "figure of 1"
    cap = capsys.readouterr()
    assert json.loads(cap.out) == {"a": 1} and cap.err == "table of 1\n"
    write_report(lambda: {"a": 2}, _table, None, None, tmp_path / "no.png", False)
    assert not (tmp_path / "no.png").exists()  # a report without a figure draws none


@pytest.mark.parametrize("kept", ["out", "png"])
def test_an_existing_file_is_refused_before_the_report_is_made(tmp_path: Path, kept: str) -> None:
    paths = {"out": tmp_path / "r.json", "png": tmp_path / "r.png"}
    paths[kept].write_text("mine")
    made: list[int] = []

    def make() -> dict:
        made.append(1)
        return {"a": 1}

    with pytest.raises(InvalidInput, match="exists; pass --force"):
        write_report(make, _table, _plot, paths["out"], paths["png"], False)
    assert made == [] and paths[kept].read_text() == "mine"
    write_report(make, _table, _plot, paths["out"], paths["png"], True)
    assert made == [1] and json.loads(paths["out"].read_text()) == {"a": 1}
