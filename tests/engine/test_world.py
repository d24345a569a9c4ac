"""World.latest_visible's scan in C gives what its Python loop gives: the same sums and,
on a tie, the later put."""

from __future__ import annotations

import random

from kda_sim.engine.world import PutDone, _latest_in_c


def _loop(producers, put_done, xcd, same, cross):
    best, last = float("-inf"), producers[0]
    for p in producers:
        done = put_done[p]
        t = done.time + done.behind + (same if done.xcd == xcd else cross)
        if t >= best:
            best, last = t, p
    return best, last


def test_the_c_scan_equals_the_loop_ties_included() -> None:
    rng = random.Random(7)
    for _ in range(300):
        n = rng.randint(1, 60)
        producers = tuple((rng.randint(0, 300), k) for k in range(n))
        # few distinct times and visibilities, so that ties are common
        put_done = {
            p: PutDone(
                rng.choice([0.1, 0.3, 7.25, 1e3 / 3]),
                rng.randint(0, 7),
                0,
                p[0],
                rng.choice([0.0, 0.2, 1 / 3]),
            )
            for p in producers
        }
        xcd, same, cross = rng.randint(0, 7), rng.choice([100.0, 0.1]), 300.0 / 7
        want = _loop(producers, put_done, xcd, same, cross)
        got = _latest_in_c(producers, put_done, xcd, same, cross)
        assert got[0] == want[0] and got[1] is want[1]
