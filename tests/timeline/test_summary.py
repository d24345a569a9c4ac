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
