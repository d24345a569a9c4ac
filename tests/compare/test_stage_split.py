"""A stage's duration split into its poll waits, its exposed loads and the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_sim.compare.stage_split import (
    split_by_kind,
    split_side_by_side,
    split_spans,
    union_length,
    used_loads,
)
from kda_sim.importers import read_kernel_trace
from kda_sim.timeline.model import Timeline

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_union_length_counts_overlaps_once_and_clips() -> None:
    assert union_length([(0.0, 10.0), (5.0, 15.0), (20.0, 30.0)], 0.0, 100.0) == 25.0
    assert union_length([(0.0, 10.0), (5.0, 15.0)], 8.0, 12.0) == 4.0
    assert union_length([(50.0, 60.0)], 0.0, 40.0) == 0.0
    assert union_length([], 0.0, 1.0) == 0.0


def test_simulated_parts_add_up_and_name_the_waits(sim22: Timeline) -> None:
    spans = split_spans(sim22)
    assert len(spans) == sum(len(c.stages) for c in sim22.ctas)
    for sp in spans:
        assert sp.load is not None and sp.wait >= 0 and sp.load >= 0
        assert sp.wait + sp.load <= sp.dur + 1e-6
    # k.recur polls nothing; k.conv's wait is its one PROJ poll, to the ns
    assert all(sp.wait == 0 for sp in spans if sp.stage == "k.recur")
    c = next(c for c in sim22.ctas if any(s.name == "k.conv" for s in c.stages))
    conv = next(sp for sp in spans if sp.cta == c.cta and sp.stage == "k.conv")
    (poll,) = [p for p in c.polls if p.stage == "k.conv" and p.task == conv.task]
    assert conv.wait == pytest.approx(poll.satisfied - poll.first_issue)
    # the slice waits on its own source rows: the exposed part of that load shows
    assert split_by_kind(spans)["slice"]["load_ns"] > 0


def test_loads_count_only_in_the_stage_that_uses_them(sim22: Timeline) -> None:
    uses = used_loads(sim22)
    gemv = next(c.cta for c in sim22.ctas if any(s.name == "gemv0" for s in c.stages))
    assert uses[(gemv, "gemv0", -1)] == {"w.rg0"}
    assert "k.in" in next(v for (_, st, _), v in uses.items() if st == "k.conv")
    # k.stage issues k.in and k.fb but uses neither: none of their flight is its load
    by = split_by_kind(split_spans(sim22))
    assert by["k.stage"]["load_ns"] == 0


def test_a_measured_trace_has_waits_but_no_load_share() -> None:
    real = read_kernel_trace(TRACES / "k1_h200_R2_L1.json.gz")
    spans = split_spans(real)
    assert all(sp.load is None for sp in spans)
    by = split_by_kind(spans)
    assert by["k.conv"]["load_ns"] is None and by["k.conv"]["wait_ns"] > 0
    assert by["gemv0"]["wait_ns"] == 0  # no poll inside the gemv
    gate = next(sp for sp in spans if sp.stage == "gate")
    c = real.ctas[gate.cta]
    (poll,) = [p for p in c.polls if p.stage == "gate"]
    assert gate.wait == pytest.approx(poll.satisfied - poll.first_issue)
    assert gate.compute == pytest.approx(gate.dur - gate.wait)


def test_side_by_side_reports_the_duration_error(sim22: Timeline) -> None:
    rows = split_side_by_side(sim22, sim22)
    assert rows["k.conv"]["dur_err"] == 0.0
    assert rows["k.conv"]["real_wait_ns"] == rows["k.conv"]["sim_wait_ns"]
