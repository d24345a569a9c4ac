"""The critical path's joins: the runner-up at each choice, its slack, and the rival path."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.timeline.critical import critical_path, kind_sequence, stage_kinds
from kda_sim.timeline.joins import Sources, kinds_within, near_critical
from kda_sim.timeline.model import CtaTrack, Meta, PollRecord, StageSpan, Timeline


def _fan_in(ends: list[float], first_issue: float, lat: float = 100.0) -> tuple[Timeline, Sources]:
    """Producers 0..n-1 run "p{i}" and put at their end; CTA n runs k.stage to
    ``first_issue`` and polls PROJ from all of them in k.conv, satisfied ``lat`` after the
    last put (or after its first issue, where every put came before it)."""
    n = len(ends)
    ctas = []
    for i, e in enumerate(ends):
        c = CtaTrack(i, "gemv", unit=i, start=0.0, end=e)
        c.stages = [StageSpan(f"p{i}", -1, 0.0, e)]
        ctas.append(c)
    last = max(range(n), key=lambda i: ends[i])
    sat = max(ends[last], first_issue) + lat
    w = CtaTrack(n, "gemv", unit=n, start=0.0, end=sat + 500.0)
    w.stages = [
        StageSpan("k.stage", 0, 0.0, first_issue),
        StageSpan("k.conv", 0, first_issue, sat + 500.0),
    ]
    w.polls = [PollRecord("k.conv", 0, "PROJ", n, 1, first_issue, sat, 1, last, ends[last], None)]
    ctas.append(w)

    def sources(cta: int, i: int) -> list[tuple[int, float]]:
        return [(k, e) for k, e in enumerate(ends)] if cta == n and i == 0 else []

    return Timeline(Meta("simulated", "h200", 1, 1), ctas), sources


def _poll_join(tl: Timeline, src: Sources, near: float):
    cp = critical_path(tl)
    assert cp is not None
    nc = near_critical(tl, cp, near, src)
    polls = [j for j in nc.joins if j.kind == "poll"]
    assert len(polls) == 1
    return cp, nc, polls[0]


def test_a_join_decided_by_10_ns_has_its_rival() -> None:
    tl, src = _fan_in([5000.0, 5010.0], first_issue=1000.0)
    cp, nc, j = _poll_join(tl, src, near=200.0)
    assert (j.taken.kind, j.taken.cta) == ("put", 1)
    assert (j.runner_up.kind, j.runner_up.cta) == ("put", 0)
    assert j.slack == 10.0
    assert stage_kinds(kind_sequence(tl, cp)) == ["p1", "k.conv"]
    # the swap: the path enters k.conv from the other producer
    assert nc.slack_to(["p0", "k.conv"]) == 10.0
    assert [r.join for r in nc.rivals if r.join.kind == "poll"] == [j]


def test_a_join_decided_by_1_us_is_no_rival_under_the_threshold() -> None:
    tl, src = _fan_in([5000.0, 6000.0], first_issue=1000.0)
    _, nc, j = _poll_join(tl, src, near=200.0)
    assert j.slack == 1000.0
    assert nc.slack_to(["p0", "k.conv"]) is None
    assert not [r for r in nc.rivals if r.join is j]
    _, wide, _ = _poll_join(tl, src, near=2000.0)
    assert wide.slack_to(["p0", "k.conv"]) == 1000.0


def test_own_program_order_is_the_runner_up_of_a_late_put() -> None:
    tl, src = _fan_in([5000.0], first_issue=4950.0)
    _, nc, j = _poll_join(tl, src, near=200.0)
    assert (j.taken.kind, j.runner_up.kind) == ("put", "order")
    assert j.slack == 50.0
    assert nc.slack_to(["k.stage", "k.conv"]) == 50.0


def test_a_put_just_before_the_poll_is_the_runner_up_of_program_order() -> None:
    tl, src = _fan_in([5000.0], first_issue=5030.0)
    cp, nc, j = _poll_join(tl, src, near=200.0)
    assert stage_kinds(kind_sequence(tl, cp)) == ["k.stage", "k.conv"]
    assert (j.taken.kind, j.runner_up.kind) == ("order", "put")
    assert j.slack == 30.0
    assert nc.slack_to(["p0", "k.conv"]) == 30.0
    assert kinds_within(["p0", "<-PROJ", "k.conv"], nc, kind_sequence(tl, cp))
    assert not kinds_within(["p9", "k.conv"], nc, kind_sequence(tl, cp))


def test_the_last_end_is_a_join() -> None:
    tl, src = _fan_in([5000.0, 5010.0], first_issue=1000.0)
    tl.ctas[0].end = tl.ctas[2].end - 40.0  # a producer ends 40 ns before the consumer
    tl.ctas[0].stages[0].end = tl.ctas[0].end
    cp = critical_path(tl)
    assert cp is not None
    end = near_critical(tl, cp, 100.0, src).joins[0]
    assert (end.kind, end.taken.cta, end.runner_up.cta, end.slack) == ("end", 2, 0, 40.0)


@settings(max_examples=60, deadline=None)
@given(
    ends=st.lists(st.floats(100.0, 10_000.0), min_size=1, max_size=5),
    first_issue=st.floats(50.0, 12_000.0),
    lat=st.floats(0.0, 500.0),
)
def test_slack_is_never_negative_and_no_rival_is_longer(ends, first_issue, lat) -> None:
    tl, src = _fan_in(ends, first_issue, lat)
    cp = critical_path(tl)
    assert cp is not None
    nc = near_critical(tl, cp, float("inf"), src)
    assert all(j.slack is None or j.slack >= 0 for j in nc.joins)
    assert len(nc.rivals) == sum(j.runner_up is not None for j in nc.joins)
    for r in nc.rivals:
        assert r.path.length <= cp.length + 1e-9
        assert all(s.end >= s.start for s in r.path.steps)
        # a chain: each step begins where the one before it ended
        assert all(a.end == b.start for a, b in zip(r.path.steps, r.path.steps[1:], strict=False))
