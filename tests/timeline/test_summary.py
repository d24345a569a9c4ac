"""Per-stage figures of a timeline: kda stages by task slot."""

from __future__ import annotations

import statistics
from pathlib import Path

from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline.summary import slot_stats

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_slots_split_the_ctas_first_and_second_tasks() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R4_L4.json")
    got = {(s.stage, s.slot): s for s in slot_stats(tl)}
    assert {slot for _, slot in got} == {0, 1}
    assert got[("k.recur", 0)].count == 256 and got[("k.recur", 1)].count == 128
    second = []
    for c in tl.ctas:
        tasks = sorted({s.task for s in c.stages if s.task >= 0})
        if len(tasks) == 2:
            second += [
                s.end - s.start for s in c.stages if s.task == tasks[1] and s.name == "k.conv"
            ]
    assert got[("k.conv", 1)].median_ns == statistics.median(second)
    # slot 0 first, in the stages' order
    assert [s.stage for s in slot_stats(tl)][:2] == ["k.stage", "k.conv"]


def test_one_task_a_cta_is_one_slot() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json")
    assert {s.slot for s in slot_stats(tl)} == {0}


def test_side_by_side_pairs_the_slots_of_two_runs_and_is_empty_for_one_task() -> None:
    from kda_sim.timeline.summary import slots_side_by_side

    tl = read_kernel_trace(TRACES / "k1_h200_R4_L4.json")
    rows = slots_side_by_side({"real": tl, "sim": None, "again": tl})
    assert len(rows) == 10  # 5 stages x 2 slots
    r = next(r for r in rows if r["stage"] == "k.recur" and r["slot"] == 1)
    assert r["real_count"] == r["again_count"] == 128
    assert r["dur_real_median_ns"] == r["dur_again_median_ns"]
    assert "sim_count" not in r
    one = read_kernel_trace(TRACES / "k1_h200_R1_L1.json")
    assert slots_side_by_side({"real": one}) == []
