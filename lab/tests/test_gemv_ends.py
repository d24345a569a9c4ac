"""The gemv CTAs' ends by what shares their SM: read from a trace and from the model."""

from __future__ import annotations

import json
from pathlib import Path

from lab import gemv_ends as ge

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_two_gemv_ctas_on_an_sm_end_later_from_two_tokens_on() -> None:
    # 2x1 (S = 2): the gemv CTAs beside another end about 4 us after the rest; the model
    # with no sharing ends both classes together
    r = ge.row(TRACES / "k1_h200_R2_L1.json.gz", "h200-k1")
    real, model = r["real"], r["model"]
    assert r["shape"] == "2x1"
    assert real["gemv-mate"]["median"] - real["other"]["median"] > 2000
    assert abs(model["gemv-mate"]["median"] - model["other"]["median"]) < 200
    assert real["gemv-mate"]["p10"] <= real["gemv-mate"]["median"] <= real["gemv-mate"]["p90"]


def test_table_and_bad_input(tmp_path: Path, capsys) -> None:
    out = tmp_path / "rows.json"
    assert (
        ge.main(["--profile", "h200-k1", str(TRACES / "k1_h200_R1_L1.json.gz"), "--json", str(out)])
        == 0
    )
    text = capsys.readouterr().out
    assert text.splitlines()[2].startswith("| 1x1 |")
    assert json.loads(out.read_text())[0]["shape"] == "1x1"
    assert (
        ge.main(["--profile", "h200-k1", str(TRACES / "k1_h200_R1_L1.json.gz"), "--json", str(out)])
        == 2
    )
    assert "not overwriting" in capsys.readouterr().err
    assert ge.main(["--profile", "no-such-gpu", str(TRACES / "k1_h200_R1_L1.json.gz")]) == 2
