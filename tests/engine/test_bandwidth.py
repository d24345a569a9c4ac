"""The bandwidth server's two ways to stream: an event (``transfer``) and a callback
(``stream``, the folded engine's) end every stream at the same time, with no event of the
callback's own; and a stream joining later with no timer of its own (``join_at``, the
server's timers kept as calls) ends where a timer's ``stream`` would, a join and a wake
at one instant taken in the same order."""

from __future__ import annotations

import pytest
import simpy

from kda_sim.engine import timers
from kda_sim.engine.bandwidth import SharedBandwidth

# (join time ns, bytes): overlapping streams, so the shares change as they join and end
STREAMS = [(0.0, 4096), (10.0, 1024), (12.5, 65536), (40.0, 0), (41.0, 300)]


def _ends(folded: bool) -> tuple[list[float], int]:
    env = simpy.Environment()
    hbm = SharedBandwidth(env, bytes_per_ns=64.0, cap_per_stream=40.0)
    ends = [float("nan")] * len(STREAMS)

    def start(i: int, nbytes: int) -> None:
        def end(_ev: object = None) -> None:
            ends[i] = env.now

        if folded:
            hbm.stream(nbytes, end)
        else:
            hbm.transfer(nbytes).callbacks.append(end)

    for i, (at, nbytes) in enumerate(STREAMS):
        env.timeout(at).callbacks.append(lambda _ev, i=i, n=nbytes: start(i, n))
    env.run()
    return ends, next(env._eid)


def test_a_stream_ends_when_the_same_transfer_does() -> None:
    ends, events = _ends(folded=False)
    folded_ends, folded_events = _ends(folded=True)
    assert folded_ends == ends
    assert ends[3] == 40.0  # nothing to stream: it ends as it joins
    assert ends[0] > 4096 / 40.0  # slowed by the streams that joined while it ran
    assert folded_events == events - len(STREAMS)  # no event a stream


def _join_and_wake(*, calls: bool, join_first: bool) -> list[tuple[str, float]]:
    """A alone would end at 2001 / 40 = 50.025 ns, where its first wake is armed; C joins
    at 9 ns and slows it (64 B/ns shared by two), so that wake comes early, at the instant
    B joins. B's join numbered before A's wake (made before A joined) or after it (made
    by an event after A joined): the server applies them in that order. ``calls``: the
    joins by ``join_at`` and the server's timers as calls; else a timer each, then
    ``stream``, as the engine did before."""
    env = simpy.Environment()
    heap: list[timers.Call] | None = [] if calls else None
    hbm = SharedBandwidth(env, bytes_per_ns=64.0, cap_per_stream=40.0, calls=heap)
    ends: list[tuple[str, float]] = []

    def join(at: float, nbytes: int, name: str) -> None:
        def end() -> None:
            ends.append((name, env.now))

        if calls:
            hbm.join_at(at, nbytes, end)
        else:
            timers.at_time(env, at, lambda _ev: hbm.stream(nbytes, end))

    wake_at = 2001 / 40.0
    if join_first:
        join(wake_at, 1000, "B")
    join(0.0, 2001, "A")
    join(9.0, 3000, "C")
    if not join_first:
        timers.at_time(env, 0.0, lambda _ev: join(wake_at, 1000, "B"))
    made = timers.run(env, heap, hbm)
    # joins and wakes as calls: three joins and A's, B's and C's wakes (and the early one)
    assert made >= 6 if calls else made == 0
    return ends


@pytest.mark.parametrize("join_first", [True, False])
def test_a_join_without_a_timer_keeps_its_place_beside_a_wake(join_first: bool) -> None:
    ends = _join_and_wake(calls=True, join_first=join_first)
    assert ends == _join_and_wake(calls=False, join_first=join_first)
    assert [name for name, _ in ends] == ["A", "B", "C"]


def test_the_order_of_a_join_and_a_wake_at_one_instant_rounds_the_ends() -> None:
    """Why joins keep their numbers: the two orders end the streams apart by an ulp."""
    first = _join_and_wake(calls=True, join_first=True)
    after = _join_and_wake(calls=True, join_first=False)
    assert first != after
    for (a, x), (b, y) in zip(first, after, strict=True):
        assert a == b and x == pytest.approx(y, rel=1e-12)


def test_servers_of_one_bandwidth_and_cap_share_a_rate_table_that_gives_the_same_ends() -> None:
    """A server's rates by streams in flight (``min(cap, bw / n)``) are kept for the next
    server of the same bandwidth and cap (``_rates_for``): it starts with the table the
    first grew, and its streams end where a fresh table's do; another bandwidth has a
    table of its own, and the oldest of more than ``_KEPT`` pairs is dropped."""
    from kda_sim.engine import bandwidth

    bandwidth._rate_tables.clear()
    fresh, _ = _ends(folded=True)  # grows the table of (64.0, 40.0) to the streams it ran
    env = simpy.Environment()
    table = SharedBandwidth(env, bytes_per_ns=64.0, cap_per_stream=40.0)._rates
    assert len(table) > 2
    assert table == [0.0] + [min(40.0, 64.0 / n) for n in range(1, len(table))]
    assert _ends(folded=True)[0] == fresh  # (with the table found grown)
    assert SharedBandwidth(env, 32.0, 40.0)._rates == [0.0]
    for bw in range(bandwidth._KEPT):
        SharedBandwidth(env, 100.0 + bw, 40.0)
    assert (64.0, 40.0) not in bandwidth._rate_tables
    assert len(bandwidth._rate_tables) == bandwidth._KEPT


def test_a_wake_keeps_its_key_while_the_streams_it_ends_call_back() -> None:
    """While its streams call back, a wake is disarmed (``next_t`` infinite) but keeps its
    (time, priority, number) in ``next``, which a CTA's drain reads to order an ack against
    a sleep it did not take (``cta._woke_after``); after it, ``next`` is None unless the
    wake armed again. A join that calls back at once (no bytes) is in no wake."""
    env = simpy.Environment()
    calls: list[timers.Call] = []
    hbm = SharedBandwidth(env, bytes_per_ns=64.0, cap_per_stream=40.0, calls=calls)
    seen: list[tuple[float, tuple[float, int, int] | None]] = []
    keys: list[tuple[float, int, int] | None] = []

    def end() -> None:
        seen.append((hbm.next_t, hbm.next))

    def join(nbytes: int) -> None:
        hbm.stream(nbytes, end)
        keys.append(hbm.next)

    for at, nbytes in ((0.0, 4096), (1.0, 1024), (2.0, 0)):
        timers.call_at(env, calls, at, lambda n, _b: join(n), nbytes, None)
    timers.run(env, calls, hbm)
    inf = float("inf")
    # the no-byte join's end, at once, with the wake armed for the first stream
    assert seen[0] == (keys[1][0], keys[1]) and keys[2] == keys[1]
    # the two streams' ends, each in the wake armed for it: the key it was armed with
    assert seen[1:] == [(inf, keys[1]), (inf, seen[2][1])]
    assert seen[2][1] is not None and seen[2][1][2] > keys[1][2]
    assert hbm.next is None and hbm.next_t == inf
