"""A CTA's poll: a try costs the round trip, plus ``latency_ns.poll_lane`` for each pair a
thread beyond the first, and a retry the site's back-off (``latency_ns.backoff``) where
the poll's code sleeps; a profile that prices neither runs every poll as before."""

from __future__ import annotations

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.protocol.ops import Poll
from kda_sim.timeline.chrome import to_chrome

K1 = load_profile("h200-k1")
LANE, BACKOFF = 40.0, 300.0
PRICED = K1.with_params(poll_lane=LANE, backoff=BACKOFF)


def _spans(cfg: LaunchConfig, prof) -> list[tuple[Poll, float, int]]:
    """(the poll's op, its span, its retries) for every poll of a run, matched by the
    order each CTA ran its polls in."""
    ops = {
        cta: [op for op in prog.ops if isinstance(op, Poll)]
        for cta, prog in enumerate(build_launch(cfg).programs)
    }
    out = []
    for c in simulate(cfg, prof).timeline.ctas:
        assert len(c.polls) == len(ops[c.cta])
        for op, rec in zip(ops[c.cta], c.polls, strict=True):
            assert op.label == rec.label
            out.append((op, rec.satisfied - rec.first_issue, rec.retries))
    return out


def test_a_try_costs_its_pairs_a_thread_and_a_retry_its_back_off() -> None:
    cfg = LaunchConfig(1, 1)
    poll, retry = K1.latency_ns["poll"], K1.latency_ns["retry"]
    runs = _spans(cfg, PRICED)
    wide = backed = 0
    for op, span, retries in runs:
        lat = poll + (op.lanes - 1) * LANE
        gap = retry + (BACKOFF if op.backoff else 0.0)
        # first try at issue, each retry a back-off and a try later
        assert span == pytest.approx(lat + retries * (lat + gap))
        wide += op.lanes > 1
        backed += op.backoff and retries > 0
    assert wide and backed  # the run has both kinds of poll (PART, f_a; XRDY, k.conv)


def test_without_the_prices_a_poll_is_the_round_trip_whatever_its_site() -> None:
    cfg = LaunchConfig(1, 1)
    poll, retry = K1.latency_ns["poll"], K1.latency_ns["retry"]
    assert K1.latency_ns["poll_lane"] == K1.latency_ns["backoff"] == 0.0
    runs = _spans(cfg, K1)
    for _op, span, retries in runs:
        assert span == pytest.approx(poll + retries * (poll + retry))
    assert any(op.lanes > 1 for op, _, _ in runs)
    assert any(op.backoff and retries for op, _, retries in runs)


def test_a_kernel_whose_polls_are_one_pair_a_thread_without_back_off_is_unchanged() -> None:
    prof = load_profile("h200", kernel="pingpong")
    priced = prof.with_params(poll_lane=LANE, backoff=BACKOFF)
    cfg = PingPongConfig(rounds=3)
    a = simulate(cfg, prof).timeline
    b = simulate(cfg, priced).timeline
    assert to_chrome(a) == to_chrome(b)
