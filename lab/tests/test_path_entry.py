"""lab/path_entry.py: where the critical path enters its first kda task, and the race
there, in a launch and in seeded runs of the model; bad input exits 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.importers import load_trace
from lab.cta_spread import seeded_run, spread_map
from lab.path_entry import CHAIN, ENTRIES, entry_row, main, side_summary

TRACES = Path(__file__).resolve().parents[2] / "traces"
TRACE = TRACES / "k1_h200_R4_L1.json.gz"


def test_a_launchs_entry() -> None:
    row = entry_row(load_trace(TRACE))
    assert row is not None and row["entry"] in ENTRIES
    assert row["proj_by"]["role"] == "gemv"  # f_a and beta come from the gemv
    assert set(row["chain"]) <= set(CHAIN)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_models_entry_follows_its_races(seed: int) -> None:
    """In a simulated run every put is recorded, so the entry is what the two races
    say: at k.gates the gemv's put came last, else the QK chunk's k.conv entered by its
    PROJ put where that came after the poll began, by its own order where not."""
    sim = seeded_run(load_trace(TRACE), "h200-k1", spread_map(0.025, ("gemv0", "gemv1")), seed)
    row = entry_row(sim)
    assert row is not None
    if row["entry"] == "k.gates":
        assert row["gates_slack"] > 0
    else:
        assert row["gates_slack"] <= 0
        assert (row["conv_slack"] > 0) == (row["entry"] == "k.conv")
    s = side_summary([row, None])
    assert s["n"] == 1 and s["entry"][row["entry"]] == 1.0


def test_bad_input_exits_2(tmp_path: Path) -> None:
    assert main([str(tmp_path / "none"), "--profile", "h200-k1"]) == 2
