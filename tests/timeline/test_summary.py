"""Per-stage figures of a timeline: kda stages by task slot."""

from __future__ import annotations

import statistics
from pathlib import Path

from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline.summary import slot_stats

TRACES = Path(__file__).resolve().parents[2] / "traces"


def test_slots_split_the_ctas_first_and_second_tasks() -> None:
    tl = read_kernel_trace(TRACES / "k1_h200_R4_L4.json.gz")
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
    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    assert {s.slot for s in slot_stats(tl)} == {0}


def test_side_by_side_pairs_the_slots_of_two_runs_and_is_empty_for_one_task() -> None:
    from kda_sim.timeline.summary import slots_side_by_side

    tl = read_kernel_trace(TRACES / "k1_h200_R4_L4.json.gz")
    rows = slots_side_by_side({"real": tl, "sim": None, "again": tl})
    assert len(rows) == 10  # 5 stages x 2 slots
    r = next(r for r in rows if r["stage"] == "k.recur" and r["slot"] == 1)
    assert r["real_count"] == r["again_count"] == 128
    assert r["dur_real_median_ns"] == r["dur_again_median_ns"]
    assert "sim_count" not in r
    one = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    assert slots_side_by_side({"real": one}) == []


def test_partners_group_a_role_stage_by_what_shares_the_unit() -> None:
    from kda_sim.timeline.summary import partner_stats

    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    got = {(s.stage, s.partners): s for s in partner_stats(tl)}
    gemv0 = {k[1]: v for k, v in got.items() if k[0] == "gemv0"}
    assert sum(v.count for v in gemv0.values()) == 197
    units: dict[int, list[str]] = {}
    for c in tl.ctas:
        units.setdefault(c.unit, []).append(c.role)
    shared = [
        next(s.end - s.start for s in c.stages if s.name == "gemv0")
        for c in tl.ctas
        if c.role == "gemv" and sorted(units[c.unit]) == ["gemv", "gemv"]
    ]
    assert gemv0["gemv"].count == len(shared) > 0
    assert gemv0["gemv"].median_ns == statistics.median(shared)
    assert gemv0["gemv"].max_ns == max(shared)
    assert not any(s.stage.startswith("k.") for s in partner_stats(tl))  # role stages only


def test_partners_side_by_side_drops_stages_with_one_kind_of_partner() -> None:
    import dataclasses

    from kda_sim.timeline.summary import partners_side_by_side

    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    rows = partners_side_by_side({"real": tl, "sim": None})
    assert {r["stage"] for r in rows} >= {"gemv0", "gemv1", "load_x"}
    assert all("sim_count" not in r for r in rows)
    alone = dataclasses.replace(tl, ctas=[dataclasses.replace(c, unit=c.cta) for c in tl.ctas])
    assert partners_side_by_side({"real": alone}) == []


def test_fmt_ns_writes_the_unit_a_person_reads() -> None:
    from kda_sim.timeline.summary import fmt_ns

    assert fmt_ns(850) == "850 ns"
    assert fmt_ns(2304) == "2.30 us"
    assert fmt_ns(-663, signed=True) == "-663 ns"
    assert fmt_ns(388, signed=True) == "+388 ns"
    assert fmt_ns(1_250_000) == "1.25 ms"
    assert fmt_ns(999.7) == "1.00 us"
    assert fmt_ns(None) == "-"


def test_ctas_of_no_recorded_unit_share_none() -> None:
    """Stamp tensors record no unit: their CTAs are not partners of each other."""
    import dataclasses

    from kda_sim.timeline.summary import partner_stats

    tl = read_kernel_trace(TRACES / "k1_h200_R1_L1.json.gz")
    unknown = dataclasses.replace(tl, ctas=[dataclasses.replace(c, unit=None) for c in tl.ctas])
    assert {s.partners for s in partner_stats(unknown)} == {""}
    assert sum(s.count for s in partner_stats(unknown)) == sum(s.count for s in partner_stats(tl))
