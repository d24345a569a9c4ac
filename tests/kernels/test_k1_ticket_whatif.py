"""The ticket what-if table: one row a schedule, the engine's and the checks' verdicts
agree where the static placement deadlocks on the H200 at one CTA an SM."""

from __future__ import annotations

import pytest

from kda_sim.kernels.k1.ticket_whatif import config, markdown, table, with_latency
from kda_sim.machine import load_profile


def test_rows_and_markdown_at_a_deadlocking_shape() -> None:
    rows = table([load_profile("h200-k1")], [(2, 1)], (1,))
    by = {r.schedule: r for r in rows}
    assert set(by) == {"static", "kda_tickets", "gemv_tickets"}
    assert by["static"].makespan_us is None and not by["static"].check_ok
    assert by["kda_tickets"].makespan_us is None and not by["kda_tickets"].check_ok
    assert "put by CTA" in by["kda_tickets"].check
    g = by["gemv_tickets"]
    assert g.makespan_us is not None and g.makespan_us > 0 and g.check_ok
    assert g.resident == 132
    text = markdown(rows)
    assert "| 2 x 1 | deadlock | deadlock | - |" in text and "gemv_tickets: finishes" in text


def test_a_slower_atomic_costs_the_ticket_schedule_time() -> None:
    prof = load_profile("h200-k1")
    fast, slow = (
        table([p], [(1, 1)], (2,), ("gemv_tickets",))[0].makespan_us
        for p in (with_latency(prof, atomic=100.0), with_latency(prof, atomic=1000.0))
    )
    assert slow > fast


def test_an_unknown_schedule_is_refused() -> None:
    with pytest.raises(ValueError, match="schedule"):
        config(1, 1, "dynamic")
