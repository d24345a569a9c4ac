"""Computes of one stage cost that end with a front (``GpuProfile.compute_front``): K1's
k.recur, begun by many CTAs at once."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile, load_profile, profile_from_dict
from kda_sim.timeline.model import StageSpan, Timeline

FOLLOW = 0.5  # a follower's fraction of its cost


def _recur(tl: Timeline) -> dict[tuple[int, int], StageSpan]:
    """(CTA, task) -> its k.recur span."""
    return {(c.cta, s.task): s for c in tl.ctas for s in c.stages if s.name == "k.recur"}


def _front(prof: GpuProfile, f: float = FOLLOW) -> GpuProfile:
    return replace(prof, compute_front={"k.recur": f})


def _first_and_during(spans: dict[tuple[int, int], StageSpan]) -> tuple[tuple, list[tuple]]:
    """The k.recur begun first and those begun before it ends."""
    first = min(spans, key=lambda k: (spans[k].start, k))
    return first, [k for k, s in spans.items() if k != first and s.start < spans[first].end]


def test_the_k_recur_begun_during_the_first_ones_ends_with_it() -> None:
    """The first k.recur of the launch takes its span as without the front; every one
    begun before it ends ends no earlier than it, and none of the first slot's (begun as
    without the front) takes longer than without it: a follower takes at most its cost."""
    prof = load_profile("h200-k1")
    cfg = LaunchConfig(4, 4)
    plain = _recur(simulate(cfg, prof).timeline)
    front = _recur(simulate(cfg, _front(prof)).timeline)
    assert plain.keys() == front.keys()
    first, during = _first_and_during(front)
    assert front[first].dur == pytest.approx(plain[first].dur, abs=1e-6)
    assert len(during) > len(front) // 4  # many begin while the first runs
    for k in during:
        assert front[k].end >= front[first].end - 1e-6
    slot0 = [k for k in during if front[k].start == pytest.approx(plain[k].start, abs=1e-6)]
    assert slot0
    for k in slot0:
        assert front[k].dur <= plain[k].dur + 1e-6
    ends = {round(front[k].end, 3) for k in during}
    assert len(ends) < len({round(plain[k].end, 3) for k in during})


def test_a_run_with_a_spread_between_ctas_ends_its_followers_with_the_front_too() -> None:
    """A run whose computes are priced as they run (a seeded one with ``cta_spread``, no
    per-op jitter: each CTA's k.recur its own): the followers end with the first one
    there as well."""
    prof = replace(_front(load_profile("h200-k1")), cta_spread={"k.recur": 0.1})
    spans = _recur(simulate(LaunchConfig(4, 4), prof, seed=3, jitter=0.0).timeline)
    first, during = _first_and_during(spans)
    assert during
    assert all(spans[k].end >= spans[first].end - 1e-6 for k in during)
    assert len({round(spans[k].dur, 3) for k in spans}) > 2  # the spread was drawn


def test_a_follower_that_takes_its_whole_cost_is_no_front() -> None:
    """f = 1: a follower ends at its own start plus its cost, never before the first one's
    end (it began after it): every span as without the front."""
    prof = load_profile("h200-k1")
    cfg = LaunchConfig(2, 4)
    plain = simulate(cfg, prof).timeline
    one = simulate(cfg, _front(prof, 1.0)).timeline
    assert one.makespan == pytest.approx(plain.makespan, abs=1e-6)
    a, b = _recur(plain), _recur(one)
    assert all(b[k].end == pytest.approx(a[k].end, abs=1e-6) for k in a)


def test_no_front_is_the_profile_as_it_was() -> None:
    prof = load_profile("h200-k1")
    assert prof.compute_front == {} and "compute_front" not in prof.to_dict()
    d = _front(prof).to_dict()
    assert d["compute_front"] == {"k.recur": FOLLOW}
    assert profile_from_dict(d).compute_front == {"k.recur": FOLLOW}
    assert _front(prof).identity() != prof.identity()


@pytest.mark.parametrize("front", [{"k.nope": 0.5}, {"k.recur": 1.5}, {"k.recur": -0.1}])
def test_a_front_on_no_stage_cost_or_out_of_range_is_refused(front: dict[str, float]) -> None:
    d = load_profile("h200-k1").to_dict()
    d["compute_front"] = front
    with pytest.raises(InvalidInput, match="compute_front"):
        profile_from_dict(d)


def _recur_cost(prof: GpuProfile, cfg: LaunchConfig) -> float:
    """k.recur's cost at ``cfg``: its line in L times its growth with S."""
    return prof.cost("k.recur", cfg.L) * prof.grown("k.recur", cfg.S)


def test_a_front_opens_only_for_a_compute_of_its_least_cost() -> None:
    """With ``compute_front_from`` between k.recur's cost at 1 x 1 and at 4 x 4, the 1 x 1
    launch's k.recur ends as without the front (where the front alone moves some) and the
    4 x 4 launch's as with the front alone (where it differs from no front)."""
    prof = load_profile("h200-k1")
    small, big = LaunchConfig(1, 1), LaunchConfig(4, 4)
    least = (_recur_cost(prof, small) + _recur_cost(prof, big)) / 2
    assert _recur_cost(prof, small) < least < _recur_cost(prof, big)
    gated = replace(_front(prof), compute_front_from={"k.recur": least})
    for cfg, like, unlike in ((small, prof, _front(prof)), (big, _front(prof), prof)):
        got = _recur(simulate(cfg, gated).timeline)
        want = _recur(simulate(cfg, like).timeline)
        other = _recur(simulate(cfg, unlike).timeline)
        assert got.keys() == want.keys() == other.keys()
        assert all(got[k].end == pytest.approx(want[k].end, abs=1e-6) for k in want)
        assert any(abs(got[k].end - other[k].end) > 1e-3 for k in other)


def test_a_front_s_least_cost_is_written_only_where_set() -> None:
    prof = _front(load_profile("h200-k1"))
    assert prof.compute_front_from == {} and "compute_front_from" not in prof.to_dict()
    gated = replace(prof, compute_front_from={"k.recur": 3000.0})
    d = gated.to_dict()
    assert d["compute_front_from"] == {"k.recur": 3000.0}
    assert profile_from_dict(d).compute_front_from == {"k.recur": 3000.0}
    assert gated.identity() != prof.identity()


def test_a_least_cost_without_its_front_is_refused() -> None:
    d = load_profile("h200-k1").to_dict()
    d["compute_front_from"] = {"k.recur": 3000.0}
    with pytest.raises(InvalidInput, match=r"compute_front_from\.k\.recur"):
        profile_from_dict(d)
