"""lab/norm_try.py: k.norm's ONRM+PROJ polls read from one build's launches against the
puts that released them, a mixed directory refused (exit 2) before any table."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from kda_sim.compare.diff import annotate_producers
from kda_sim.compare.model import model_view
from kda_sim.importers import load_trace
from kda_sim.kernels.k1.constants import NH, NVCH
from lab.norm_try import main, norm_rows

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_every_norm_poll_is_read_against_its_releasing_put(tmp_path: Path) -> None:
    d = tmp_path / "spin"
    d.mkdir()
    shutil.copy(TRACES / "k1_h200_R2_L2.json.gz", d / "k1_R2_L2_0.json")
    assert main([str(d), "--json", str(tmp_path / "out.json")]) == 0
    s = json.loads((tmp_path / "out.json").read_text())["builds"][0]["shapes"]["2x2"]
    tl = load_trace(TRACES / "k1_h200_R2_L2.json.gz")
    ann = annotate_producers(tl, model_view(tl))
    norms = [p for c in ann.ctas for p in c.polls if p.stage == "k.norm"]
    assert s["polls"] == len(norms) == 2 * NH * NVCH  # one a kda task: R x heads x chunks
    assert sum(s["retries"].values()) == len(norms)
    waited = sorted(p.satisfied - p.put_time for p in norms if p.retries and p.put_time)
    assert s["waited"] == len(waited) > 0
    assert min(waited) <= s["seen"] <= max(waited)
    rows = norm_rows(tl)
    assert {r["chunk"] for r in rows} == set(range(NVCH))
    # a head's other polls waiting at a put: at most its other chunks'
    assert max(r["waiting"] for r in rows if r["waiting"] is not None) <= NVCH - 1


def test_a_directory_of_two_builds_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    d = tmp_path / "b"
    d.mkdir()
    shutil.copy(TRACES / "k1_h200_R1_L1.json.gz", d / "k1_R1_L1_0.json")
    doc = json.loads(gzip.decompress((TRACES / "k1_h200_R1_L2.json.gz").read_bytes()))
    doc["otherData"]["meta"]["extra"]["build"] = {"norm_delay_ns": 5000}
    (d / "k1_R1_L2_0.json").write_text(json.dumps(doc))
    out = tmp_path / "out.json"
    assert main([str(d), "--json", str(out)]) == 2
    assert "norm_delay_ns" in capsys.readouterr().err and not out.exists()
