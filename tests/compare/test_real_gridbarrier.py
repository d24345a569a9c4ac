"""The measured H100 grid-barrier traces in ``traces/`` (``gridbarrier_h100_*``, the
probe's run 114): a second kernel's real launches read, conform to its model under
``kda-sim compare --kernel gridbarrier``, and a quick fit on two of them predicts the
others' makespans where the stock h100 profile does not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.importers import load_trace

TRACES = Path(__file__).resolve().parents[2] / "traces"
NAME = re.compile(r"gridbarrier_h100_ctas(\d+)_rounds(\d+)\.json\.gz")
BUNDLED = sorted(TRACES.glob("gridbarrier_h100_ctas*_rounds*.json.gz"))
FIT = ("ctas8_rounds2", "ctas132_rounds4")  # the calibrate command of docs/calibration.md
HELD = ("ctas66_rounds2", "ctas66_rounds4", "ctas132_rounds2", "ctas8_rounds4")

pytestmark = pytest.mark.skipif(not BUNDLED, reason="no grid-barrier trace in traces/")


def _shape(path: Path) -> tuple[int, int]:
    m = NAME.fullmatch(path.name)
    assert m, path.name
    return int(m[1]), int(m[2])


def _path(shape: str) -> str:
    return str(TRACES / f"gridbarrier_h100_{shape}.json.gz")


def test_the_six_configurations_are_bundled() -> None:
    assert sorted(map(_shape, BUNDLED)) == [(c, r) for c in (8, 66, 132) for r in (2, 4)]


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_a_bundled_trace_reads_as_the_launch_it_names(path: Path) -> None:
    ctas, rounds = _shape(path)
    tl = load_trace(path)
    assert (tl.meta.source, tl.meta.kernel) == ("measured", "gridbarrier")
    assert "H100" in tl.meta.gpu
    assert tl.meta.params == {"ctas": ctas, "rounds": rounds, "broken": False, "last_resets": False}
    assert tl.meta.extra["after_compile"] is False  # a later launch, not the compile's first
    assert len(tl.ctas) == ctas and len({c.unit for c in tl.ctas}) == ctas  # one CTA an SM
    for c in tl.ctas:  # works and barriers alternate, a work first and last
        assert [s.name for s in c.stages] == ["work", "barrier"] * rounds + ["work"]
        assert len(c.polls) == rounds


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_compare_conforms_and_matches_every_stage(path: Path, capsys) -> None:
    ctas, rounds = _shape(path)
    assert main(["compare", str(path), "--kernel", "gridbarrier", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["kernel"] == "gridbarrier" and rep["sim"] == "simulated on h100"
    assert rep["conformance"]["conforms"], rep["conformance"]["findings"][:5]
    cmp = rep["comparison"]
    assert cmp["matched"] == ctas * (2 * rounds + 1)
    assert cmp["only_real"] == 0 and cmp["only_sim"] == 0


def test_a_quick_fit_on_two_shapes_predicts_the_held_out_makespans(tmp_path: Path, capsys) -> None:
    # measured (budget 2, one cost pass, 2.6 s): held out -4.8, -0.3, -5.8, +3.9 %;
    # the stock h100 profile -56.4, -52.5, -56.7, -50.6 %
    argv = ["calibrate", *map(_path, FIT), "--out", str(tmp_path / "fit.json")]
    argv += ["--budget", "2", "--cost-passes", "1", "--no-progress", "--json"]
    assert main([*argv, "--holdout", *map(_path, HELD)]) == 0
    rep = json.loads(capsys.readouterr().out)
    held = [r for r in rep["rows"] if r["set"] == "held out"]
    assert [r["trace"] for r in held] == [f"gridbarrier_h100_{s}.json.gz" for s in HELD]
    for r in held:
        assert abs(r["makespan_err"]) < 0.10, r
        assert abs(r["makespan_err_before"]) > 0.40, r
    fitted = json.loads((tmp_path / "fit.json").read_text())
    assert fitted["kernel"] == "gridbarrier" and fitted["gpu"] == "h100"
