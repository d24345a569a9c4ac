"""The measured H100 traces of our K1 in ``traces/`` (``k1_h100_*``, the static build's first
cold launch of each shape): each reads as the launch it names; on a shape the fit did not
see, ``kda-sim compare`` picks the fitted ``h100-k1`` from its meta, conforms and lands
within the bundled fit's held-out table (docs/calibration.md, "The bundled H100 fit"),
and ``--gpu h100-stock`` runs the stock costs, which do not."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.importers import load_trace

TRACES = Path(__file__).resolve().parents[2] / "traces"
NAME = re.compile(r"k1_h100_R(\d)_L(\d)\.json\.gz")
BUNDLED = sorted(TRACES.glob("k1_h100_R?_L?.json.gz"))
FIT = ("R1_L1", "R1_L2", "R1_L4", "R4_L4")  # the calibrate command of docs/calibration.md
HELD = ("R2_L1", "R2_L2", "R2_L4", "R4_L1", "R4_L2")
# the held-out rows' largest |makespan error| (3.4 %) and start error median (2.65 %),
# rounded up: a fit or an engine that moves past them no longer says what the table says
# (every trace's conformance: tests/compare/test_real_traces.py)
MAKESPAN_BOUND, START_BOUND = 0.04, 0.03
STOCK_SAID = "k1 stock costs for h100: the seed's build"

pytestmark = pytest.mark.skipif(not BUNDLED, reason="no K1 H100 trace in traces/")


def _shape(path: Path) -> tuple[int, int]:
    m = NAME.fullmatch(path.name)
    assert m, path.name
    return int(m[1]), int(m[2])


def test_the_nine_shapes_are_bundled() -> None:
    assert sorted(map(_shape, BUNDLED)) == [(r, ell) for r in (1, 2, 4) for ell in (1, 2, 4)]
    assert sorted(f"R{r}_L{ell}" for r, ell in map(_shape, BUNDLED)) == sorted(FIT + HELD)


@pytest.mark.parametrize("path", BUNDLED, ids=[p.name for p in BUNDLED])
def test_a_bundled_trace_reads_as_the_launch_it_names(path: Path) -> None:
    tl = load_trace(path)
    m, x = tl.meta, tl.meta.extra
    assert (m.source, m.measured_build(), (m.R, m.L)) == ("measured", "k1", _shape(path))
    assert m.gpu == "NVIDIA H100 80GB HBM3" and x["sms"] == 132
    # the static build (no ticket schedule), a cold launch: the first of its shape, eager
    assert x["build"] == {} and (x["replays"], x["warmup"]) == (1, 0)
    res = x["resources"]
    assert (res["threads"], res["shared_bytes"], res["ctas_per_sm"]) == (256, 49152, 2)
    assert res["regs_per_thread"] <= 128 and res["spills"] == 0  # 1x4's build: 126
    assert len(tl.ctas) == 256


@pytest.mark.parametrize("shape", HELD)
def test_compare_picks_h100_k1_conforms_and_lands_within_the_held_out_table(
    shape: str, capsys
) -> None:
    path = TRACES / f"k1_h100_{shape}.json.gz"
    assert main(["compare", str(path), "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["sim"] == "simulated on h100-k1"
    assert rep["costs"].startswith("k1 costs fitted on h100 by kda-sim calibrate (")
    assert rep["costs"].endswith("the Triton K1 we ship (kernel/triton), as its H100 traces ran")
    assert rep["conformance"]["conforms"], rep["conformance"]["findings"][:5]
    cmp = rep["comparison"]
    assert cmp["only_real"] == 0 and cmp["only_sim"] == 0
    assert abs(cmp["makespan_err"]) <= MAKESPAN_BOUND, cmp["makespan_err"]
    assert cmp["start_err_frac"]["median"] <= START_BOUND, cmp["start_err_frac"]


def test_h100_stock_runs_the_stock_costs_which_miss_the_trace(capsys) -> None:
    """The same held-out trace on ``--gpu h100-stock`` (the H200's assumed figures on the
    h100 GPU, the seed's build): said so, and far from it (the table's stock column:
    -34.9 %), where the fit is within the bound above."""
    path = TRACES / "k1_h100_R2_L2.json.gz"
    assert main(["compare", str(path), "--gpu", "h100-stock", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["sim"] == "simulated on h100-stock" and rep["costs"].startswith(STOCK_SAID)
    assert rep["comparison"]["makespan_err"] < -0.25
