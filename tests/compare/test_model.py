"""A ticket launch laid on the model: its items placed on the CTAs that took them, from
the takes its trace records (kda_sim.compare.model.config_of)."""

from __future__ import annotations

import copy
from dataclasses import replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from kda_sim.compare.launch import placement_of
from kda_sim.compare.model import config_of, model_view, shifted
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers import load_trace
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.model import (
    CellRange,
    CtaTrack,
    LoadSpan,
    Meta,
    PollRecord,
    PutRecord,
    StageSpan,
    StuckWait,
    Timeline,
)


@lru_cache(maxsize=4)
def _ticket_run(R: int, L: int) -> Timeline:
    return simulate(LaunchConfig(R, L, kda_tickets=True), load_profile("h200-k1")).timeline


def _stages(tl: Timeline) -> dict[tuple[int, str, int], tuple[float, float]]:
    return {(c.cta, s.name, s.task): (s.start, s.end) for c in tl.ctas for s in c.stages}


@pytest.mark.parametrize(("R", "L"), [(1, 1), (4, 1)])
def test_placed_where_the_run_took_them_the_run_is_reproduced(R: int, L: int) -> None:
    """The engine records a ticket launch's takes as a traced one does; placed on them,
    the static programs run the same launch, stage for stage. At R = 4 a CTA takes a
    second item: a placed CTA's later task pays no cold_code, as a loop's item does not."""
    run = _ticket_run(R, L)
    takes = run.meta.extra["ticket_takes"]
    assert len(takes) == 96 * R + 256  # every item, then one take past them a CTA
    cfg = config_of(run)
    assert cfg.placed and cfg.label().endswith("kda_tickets placed")
    assert max(len(t) for t in cfg.placed) == (3 if R == 4 else 2)
    again = simulate(cfg, load_profile("h200-k1")).timeline
    assert again.makespan == pytest.approx(run.makespan, abs=1e-6)
    a, b = _stages(run), _stages(again)
    assert a.keys() == b.keys()
    assert max(abs(a[k][0] - b[k][0]) + abs(a[k][1] - b[k][1]) for k in a) < 1e-6


def test_a_placed_launch_has_a_model_view_with_no_mismatch() -> None:
    mv = model_view(_ticket_run(1, 1))
    assert not mv.mismatches and len(mv.edges) > 0


def test_a_ticket_trace_without_its_takes_is_refused_by_name() -> None:
    tl = copy.deepcopy(_ticket_run(1, 1))
    del tl.meta.extra["ticket_takes"]
    assert not getattr(config_of(tl), "placed", ())
    with pytest.raises(InvalidInput, match="records which CTA took which ticket"):
        model_view(tl)


def test_takes_that_are_no_run_are_named() -> None:
    tl = copy.deepcopy(_ticket_run(1, 1))
    tl.meta.extra["ticket_takes"] = [r for r in tl.meta.extra["ticket_takes"] if r[3] != 5]
    with pytest.raises(InvalidInput, match=r"the trace's configuration: .*items \[5\]"):
        config_of(tl)


def test_a_taken_item_pays_its_prologue_placed_or_not() -> None:
    """``ticket_item``: from a take's return to the item's first op. The loop and its
    placed programs pay it alike, once an item taken (not for the take past the items)."""
    prof = load_profile("h200-k1").with_params(ticket_item=900.0)
    run = simulate(LaunchConfig(1, 1, kda_tickets=True), prof).timeline
    again = simulate(config_of(run), prof).timeline
    assert again.makespan == pytest.approx(run.makespan, abs=1e-6)
    first = {(c.cta, s.task): s.start for c in run.ctas for s in reversed(c.stages)}
    gaps = [first[(c, t)] - ret for c, _i, ret, t in run.meta.extra["ticket_takes"] if t < 96]
    assert len(gaps) == 96 and min(gaps) == pytest.approx(900.0)
    assert run.makespan > _ticket_run(1, 1).makespan + 800.0  # on the critical path


def test_placement_of_a_trace_is_its_units_where_the_gpu_has_them() -> None:
    traces = Path(__file__).resolve().parents[2] / "traces"
    tl = load_trace(traces / "k1_h200_R1_L2.json.gz")
    h200 = load_profile("h200")
    place = placement_of(tl, h200)
    assert place == tuple(c.unit for c in tl.ctas)
    # the H200's scheduler leaves eight SMs with one CTA, none of them the last eight
    alone = [u for u in set(place) if place.count(u) == 1]
    assert len(alone) == 8 and set(alone) != set(range(124, 132))
    small = replace(h200, units=100)  # a unit past the profile's count: no placement
    assert placement_of(tl, small) is None
    tl.ctas[3].unit = None  # a CTA whose unit was not recorded: no placement
    assert placement_of(tl, h200) is None


@pytest.mark.parametrize("last_resets", [False, True])
def test_a_counter_wait_and_its_adds_are_laid_on_their_ops(last_resets: bool) -> None:
    """The grid barrier's waits and adds, recorded as polls and puts, each land on their
    op (a wait in the last arriver's branch too), none left over."""
    cfg = GridBarrierConfig(ctas=6, rounds=3, last_resets=last_resets)
    tl = simulate(cfg, load_profile("h200", "gridbarrier"), seed=2, jitter=0.1).timeline
    mv = model_view(tl)
    assert mv.mismatches == []
    for c, v in zip(tl.ctas, mv.views, strict=True):
        assert sorted(v.poll_rec.values()) == list(range(len(c.polls)))
        assert sorted(v.put_rec.values()) == list(range(len(c.puts)))
        for k, i in v.poll_rec.items():  # the op's bounds are its record's times
            assert v.lb[k] == c.polls[i].first_issue and v.ub[k] == c.polls[i].satisfied


def _shifted_by_deepcopy(tl: Timeline, offset_of_cta: np.ndarray) -> Timeline:
    """``shifted`` as it was written first (a deep copy, then every time moved): the
    reference the record-by-record copy must equal."""
    out = copy.deepcopy(tl)
    for c in out.ctas:
        d = float(offset_of_cta[c.cta])
        if d == 0.0:
            continue
        c.start = None if c.start is None else c.start - d
        c.end = None if c.end is None else c.end - d
        for s in c.stages:
            s.start, s.end = s.start - d, s.end - d
        for p in c.polls:
            p.first_issue -= d
            p.satisfied = None if p.satisfied is None else p.satisfied - d
        for u in c.puts:
            u.time -= d
        for ld in c.loads:
            ld.issue -= d
            ld.done = None if ld.done is None else ld.done - d
    for c in out.ctas:
        for p in c.polls:
            if p.put_time is not None and p.producer is not None:
                p.put_time -= float(offset_of_cta[p.producer])
    return out


def _every_field_set() -> Timeline:
    """Two CTAs whose records set every field (none left at its default), so that a copy
    that dropped one would differ."""
    cells = [CellRange("ONRM", 3, 9, 7)]
    ctas = [
        CtaTrack(
            b,
            "kda",
            unit=b + 5,
            xcd=1,
            start=100.0 + b,
            end=900.0 + b,
            stages=[StageSpan("gemv", 2, 110.0 + b, 300.5)],
            polls=[
                PollRecord(
                    "gemv", 2, "ONRM", 7, 2, 120.25, 280.0 + b, 4, 1 - b, 250.0, 0, cells, 3, 64, 9
                ),
                PollRecord("gemv", 2, "PROJ", 1, 1, 130.0, None, None),
            ],
            puts=[PutRecord("gemv", 2, "ONRM", 7, 3, 260.0 + b)],
            loads=[LoadSpan("w", "weight", 4096, 111.0, 200.0 + b, "gemv", 2)],
        )
        for b in range(2)
    ]
    meta = Meta("measured", "h200", 1, 1, extra={"resources": {"threads": 256}})
    stuck = [StuckWait(0, "gemv", 2, "ONRM", 3, 1, "waits", 1, 0, 5.0)]
    return Timeline(meta, ctas, stuck)


@pytest.mark.parametrize("offsets", [(0.0, 0.0), (12.5, -3.25), (0.0, 7.0)])
def test_shifted_equals_a_deep_copy_moved_and_shares_nothing(offsets: tuple[float, ...]) -> None:
    tl = _every_field_set()
    before = copy.deepcopy(tl)
    off = np.array(offsets)
    out = shifted(tl, off)
    assert out == _shifted_by_deepcopy(tl, off)
    assert tl == before  # the input is left as it was
    old = {id(x) for c in tl.ctas for x in (c, *c.stages, *c.polls, *c.puts, *c.loads)}
    old |= {id(x) for c in tl.ctas for p in c.polls for x in (p.cells, *p.cells)}
    new = [x for c in out.ctas for x in (c, *c.stages, *c.polls, *c.puts, *c.loads)]
    new += [x for c in out.ctas for p in c.polls for x in (p.cells, *p.cells)]
    assert not old & {id(x) for x in new}
    assert out.meta is not tl.meta and out.meta.extra is not tl.meta.extra
    assert out.stuck[0] is not tl.stuck[0]


def test_shifted_a_simulated_launch_as_a_deep_copy_would() -> None:
    tl = _ticket_run(1, 1)
    off = np.linspace(-40.0, 55.0, len(tl.ctas))
    assert shifted(tl, off) == _shifted_by_deepcopy(tl, off)
