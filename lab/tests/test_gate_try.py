"""lab/gate_try.py: gate's PART polls read from one build's launches, a mislabelled or
mixed directory refused (exit 2) before any table."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from kda_sim.importers import load_trace
from lab.gate_try import gate_rows, main

TRACES = Path(__file__).resolve().parents[2] / "traces"


def _copy(src: str, dst: Path) -> Path:
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(TRACES / src, dst)
    return dst


def test_every_gate_poll_is_read_against_the_last_slice(tmp_path: Path) -> None:
    d = tmp_path / "spin"
    _copy("k1_h200_R4_L4.json.gz", d / "k1_R4_L4_0.json")
    _copy("k1_h200_R1_L1.json.gz", d / "k1_R1_L1_0.json")
    assert main([str(d), "--json", str(tmp_path / "out.json")]) == 0
    rep = json.loads((tmp_path / "out.json").read_text())["builds"][0]
    tl = load_trace(TRACES / "k1_h200_R4_L4.json.gz")
    polls = [p for c in tl.ctas for p in c.polls if p.stage == "gate"]
    s = rep["shapes"]["4x4"]
    assert s["polls"] == len(polls) == 16 and sum(s["retries"].values()) == 16
    assert rep["shapes"]["1x1"]["polls"] == 1 and rep["build"] == {}
    last = max(sp.end for c in tl.ctas for sp in c.stages if sp.name == "slice")
    rows = gate_rows(tl)
    assert min(r["seen"] for r in rows) == min(p.satisfied for p in polls) - last
    (first,) = [r for r in rows if r["first"]]  # one a launch: the earliest issued
    assert first["issue"] == min(r["issue"] for r in rows) and s["first_seen"] == first["seen"]


def test_polls_apart_in_time_have_none_beside() -> None:
    tl = load_trace(TRACES / "k1_h200_R4_L4.json.gz")
    assert max(r["beside"] for r in gate_rows(tl)) > 0  # the shipped build's polls overlap
    gates = [p for c in tl.ctas for p in c.polls if p.stage == "gate"]
    for i, p in enumerate(gates):
        shift = 10_000.0 * i  # each poll moved past the one before it
        object.__setattr__(p, "first_issue", p.first_issue + shift)
        object.__setattr__(p, "satisfied", p.satisfied + shift)
    assert {r["beside"] for r in gate_rows(tl)} == {0}


@pytest.mark.parametrize("case", ["mislabelled", "mixed", "empty"])
def test_a_directory_that_is_not_one_build_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    d = tmp_path / "b"
    d.mkdir()
    if case == "mislabelled":
        _copy("k1_h200_R2_L2.json.gz", d / "k1_R1_L1_0.json")
    elif case == "mixed":
        _copy("k1_h200_R1_L1.json.gz", d / "k1_R1_L1_0.json")
        doc = json.loads(gzip.decompress((TRACES / "k1_h200_R1_L2.json.gz").read_bytes()))
        doc["otherData"]["meta"]["extra"]["build"] = {"gate_delay_ns": 5000}
        (d / "k1_R1_L2_0.json").write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    assert main([str(d), "--json", str(out)]) == 2
    err = capsys.readouterr().err
    assert {"mislabelled": "R=2, L=2", "mixed": "gate_delay_ns", "empty": "no k1_R"}[case] in err
    assert not out.exists()
