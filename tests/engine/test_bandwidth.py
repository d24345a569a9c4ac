"""The bandwidth server's two ways to stream: an event (``transfer``) and a callback
(``stream``, the folded engine's) end every stream at the same time, with no event of the
callback's own."""

from __future__ import annotations

import simpy

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
