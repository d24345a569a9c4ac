"""The stage tables: real and simulated side by side, the simulation's error, and the
by-slot table only where a CTA runs a second task."""

from __future__ import annotations

import pytest
from apphelp import measured_like

from kda_sim.app.stage_tables import partner_table, slot_table, stage_table
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile


def test_stage_table_puts_the_runs_side_by_side_with_the_error() -> None:
    real = measured_like()
    sim = simulate(LaunchConfig(2, 2), load_profile("h200"), seed=7).timeline
    table = stage_table(real, sim).set_index("stage")
    assert list(table.index[:2]) == ["slice", "gate"]  # the kernel's stage order
    row = table.loc["k.conv"]
    assert row["sim error %"] == pytest.approx(
        100 * (row["sim mean us"] - row["real mean us"]) / row["real mean us"], abs=0.1
    )
    assert "sim error %" not in stage_table(real, None).columns


def test_slot_table_only_where_a_cta_runs_a_second_task() -> None:
    profile = load_profile("h200")
    assert slot_table(simulate(LaunchConfig(1, 1), profile).timeline, None) is None
    slots = slot_table(None, simulate(LaunchConfig(4, 1), profile).timeline)
    assert slots is not None and set(slots["task slot"]) == {1, 2}
    assert "real count" not in slots.columns


def test_partner_table_tells_apart_what_shares_the_sm() -> None:
    table = partner_table(measured_like(), None)
    assert table is not None
    assert {"attn", "gemv"} <= set(table[table["stage"] == "gemv0"]["beside"])
