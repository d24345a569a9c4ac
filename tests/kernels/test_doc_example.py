"""docs/adding-a-kernel.md's grid barrier, as the page gives it: a kernel file that
simulates, checks and exports."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.timeline.chrome import read_chrome

DOC = Path(__file__).resolve().parents[2] / "docs" / "adding-a-kernel.md"


def _example() -> str:
    text = DOC.read_text()
    section = text[text.index("## Counters, tickets, a grid barrier") :]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)


def test_the_doc_example_simulates_checks_and_exports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "mybarrier.py"
    f.write_text(_example())
    out = tmp_path / "b.json"
    assert main(["simulate", "--kernel", str(f), "--ctas", "6", "--out", str(out)]) == 0
    tl = read_chrome(out)
    assert tl.meta.kernel == "mybarrier" and not tl.deadlock
    assert [p.label for p in tl.ctas[0].polls] == ["ARRIVE", "ARRIVE"]
    capsys.readouterr()
    assert main(["check", "--kernel", str(f), "--seeds", "1", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["ok"] and rep["aba"] == 0 and rep["deadlock"]["static"] is None
