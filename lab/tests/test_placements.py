"""lab.placements: distinct placements over launches, and the SMs holding one CTA."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.machine import load_gpu
from kda_sim.timeline.chrome import write_chrome
from lab.placements import alone, main, placement, summary


def _launch(tmp_path: Path, name: str, units: tuple[int, int]) -> Path:
    tl = simulate(PingPongConfig(), load_gpu("h200"), placement=units).timeline
    out = tmp_path / name
    write_chrome(tl, out)
    return out


def test_launches_group_by_placement_and_name_the_ctas_alone(tmp_path: Path, capsys) -> None:
    a = _launch(tmp_path, "a.json", (5, 5))  # both CTAs on SM 5
    b = _launch(tmp_path, "b.json", (5, 5))
    c = _launch(tmp_path, "c.json", (7, 3))  # each alone
    assert alone((5, 5)) == {} and alone((7, 3)) == {7: 0, 3: 1}
    d = summary({"a": (5, 5), "b": (5, 5), "c": (7, 3)})
    assert [p["traces"] for p in d["placements"]] == [2, 1]  # most traces first
    assert d["placements"][1]["alone"] == {"3": 1, "7": 0}
    assert main([str(a), str(b), str(c)]) == 0
    out = capsys.readouterr().out
    assert "3 traces, 2 distinct placements" in out and "CTAs alone on their SM: [0, 1]" in out


def test_a_trace_without_sms_is_refused(tmp_path: Path, capsys) -> None:
    tl = simulate(PingPongConfig(), load_gpu("h200")).timeline
    tl.ctas[1].unit = None
    with pytest.raises(Exception, match="SM"):
        placement(tl)
    p = tmp_path / "x.json"
    write_chrome(tl, p)
    assert main([str(p)]) == 2
    assert "SM" in capsys.readouterr().err
