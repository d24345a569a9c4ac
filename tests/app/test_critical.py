"""The critical path, the sources of a poll and the wait-for chain, read off timelines."""

from __future__ import annotations

import pytest

from kda_sim.engine import simulate
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import get
from kda_sim.machine.profile import load_profile
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.timeline.critical import (
    critical_path,
    poll_sources,
    shortest_chain,
    stuck_since,
    wait_for_chain,
)
from kda_sim.timeline.model import CtaTrack, Meta, PollRecord, PutRecord, StageSpan, Timeline


def _poll(stage: str, issue: float, sat: float, producer: int, put_time: float) -> PollRecord:
    return PollRecord(stage, -1, "X", 1, 1, issue, sat, 1, producer, put_time, 0)


def tiny() -> Timeline:
    """A puts at 10 (B waits from 2 to 12); B puts at 15 (C waits from 1 to 17);
    D starts on A's unit when A ends (a slot hand-over) and ends last."""
    a = CtaTrack(0, "attn", unit=0, start=0.0, end=11.0)
    a.stages = [StageSpan("slice", -1, 0.0, 10.0)]
    a.puts = [PutRecord("slice", -1, "PART", 1, 0, 10.0)]
    b = CtaTrack(1, "attn", unit=1, start=0.0, end=16.0)
    b.stages = [StageSpan("gate", -1, 0.0, 16.0)]
    b.polls = [_poll("gate", 2.0, 12.0, 0, 10.0)]
    b.puts = [PutRecord("gate", -1, "WGT", 1, 0, 15.0)]
    c = CtaTrack(2, "gemv", unit=2, start=0.0, end=30.0)
    c.stages = [StageSpan("load_x", -1, 0.0, 30.0)]
    # waited, but the put (at 15) is later than a poll that began at 1: binding
    c.polls = [_poll("load_x", 1.0, 17.0, 1, 15.0)]
    d = CtaTrack(3, "idle", unit=0, start=11.5, end=25.0)
    d.stages = [StageSpan("k.stage", 0, 11.5, 25.0)]
    return Timeline(Meta("measured", "h200", 1, 1), [a, b, c, d])


def test_tiny_path_walks_puts_and_program_order() -> None:
    cp = critical_path(tiny())
    assert cp is not None
    kinds = [(s.kind, s.cta, s.src) for s in cp.steps]
    assert kinds == [
        ("run", 0, None),
        ("handoff", 1, 0),
        ("run", 1, None),
        ("handoff", 2, 1),
        ("run", 2, None),
    ]
    assert cp.steps[0].start == 0.0 and cp.steps[-1].end == 30.0
    assert cp.length == 30.0
    assert cp.by_stage["(hand-off latency)"] == pytest.approx(2.0 + 2.0)
    assert cp.ctas == [0, 1, 2]


def test_slot_handover_is_followed() -> None:
    tl = tiny()
    tl.ctas[2].end = 20.0  # now D (ends 25) is last; it started when A freed unit 0
    tl.ctas[2].stages[0].end = 20.0
    cp = critical_path(tl)
    assert cp is not None
    assert [(s.kind, s.cta) for s in cp.steps] == [("run", 0), ("slot", 3), ("run", 3)]
    assert cp.by_stage["(waiting for a slot)"] == pytest.approx(0.5)


def test_a_put_before_the_poll_is_not_a_dependency() -> None:
    tl = tiny()
    tl.ctas[2].polls[0].put_time = 0.5  # the pair was there before the poll began
    cp = critical_path(tl)
    assert cp is not None
    assert [s.kind for s in cp.steps] == ["run"] and cp.steps[0].cta == 2


@pytest.fixture(scope="module")
def sim() -> Timeline:
    return simulate(LaunchConfig(2, 2), load_profile("h200")).timeline


def test_simulated_path_is_contiguous_and_spans_the_launch(sim: Timeline) -> None:
    cp = critical_path(sim)
    assert cp is not None
    for a, b in zip(cp.steps, cp.steps[1:], strict=False):
        assert b.start == pytest.approx(a.end)
    assert cp.steps[-1].end == max(c.end for c in sim.ctas)
    assert cp.length <= sim.makespan + 1e-6
    assert cp.length >= 0.95 * sim.makespan  # the walk reaches back to the launch start
    assert sum(cp.by_stage.values()) == pytest.approx(cp.length)
    # the chain starts in an attn slice and passes the XRDY flag to a gemv CTA
    assert sim.ctas[cp.steps[0].cta].role == "attn"
    assert "XRDY" in [s.label for s in cp.handoffs()]


def test_poll_sources_match_the_handoff_graph(sim: Timeline) -> None:
    ho = handoffs_of(LaunchConfig(2, 2))
    for cta in (0, 3, 60, 200):
        for k, p in enumerate(sim.ctas[cta].polls):
            src = poll_sources(sim, cta, k)
            ops = [r for r, _ in ho.polls if r[0] == cta]
            assert len(src) == len(ho.producers[ops[k]])
            for s in src:
                put = sim.ctas[s.cta].puts[s.put_index]
                assert put.region in p.label  # ONRM+PROJ polls take ONRM and PROJ puts
            last = [s for s in src if s.last]
            if p.producer is not None:
                assert [(s.cta, s.put_index) for s in last] == [(p.producer, p.put_ref)]


def test_poll_sources_fall_back_to_the_record() -> None:
    tl = tiny()  # its configuration's programs have 256 CTAs, not 4
    assert [(s.cta, s.put_index, s.last) for s in poll_sources(tl, 2, 0)] == [(1, 0, True)]


def test_wait_for_chain_of_a_deadlock() -> None:
    # the seed's build: one CTA an SM at 4x2
    tl = simulate(LaunchConfig(4, 2), load_profile("h200-stock")).timeline
    assert tl.deadlock
    chain = wait_for_chain(tl, 0)
    assert chain[0].cta == 0 and chain[0].producer == chain[1].cta
    assert tl.ctas[chain[-1].cta].start is None  # ends at a CTA that never got a slot
    assert "never became resident" in chain[-1].reason
    assert stuck_since(tl, 0) == min(p.first_issue for p in tl.ctas[0].polls if p.satisfied is None)
    assert not any(c.finished for c in tl.ctas)
    assert critical_path(tl) is None  # no CTA finished: nothing ends last


def test_the_shortest_chain_has_the_fewest_links_of_any_stuck_cta() -> None:
    # mirage#761's hang: stuck CTAs whose chains take 2, 3 and 4 links
    spec = get("mirage_b200")
    seq = parse("launch grid=scheduler & launch grid=worker")
    run = run_sequence(spec, spec.default_config(), load_profile("b200", spec), seq)
    tl = run.runs[0].result.timeline
    least = shortest_chain(tl)
    every = [wait_for_chain(tl, s.cta) for s in tl.stuck if s.producer is not None]
    assert least and len(least) == min(map(len, every)) < max(map(len, every))
    assert least[-1].producer in {w.cta for w in least}  # it closes on itself: a cycle
