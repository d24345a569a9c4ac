"""Counter words: the latest write a reader sees, found by bisection, is the one the walk
back through the history finds; a folded wait wakes only where a write can change its
next try, with the same results and a count of events that grows as the CTAs do."""

from __future__ import annotations

import simpy
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine import simulate
from kda_sim.engine.sampler import Sampler
from kda_sim.engine.words import Words, Write
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile

# a write: (ns after the previous one's serialization, CTA); a read: (CTA, ns after the
# newest write's serialization, which may be negative); CTA c runs on XCD c % XCDS
XCDS = 3
WRITE = st.tuples(st.sampled_from([0.0, 0.0, 50.0, 200.0, 450.0, 1000.0]), st.integers(0, 5))
READ = st.tuples(
    st.integers(0, 5),
    st.sampled_from([-2000.0, -800.0, -350.0, 0.0, 1.0, 350.0, 800.0]),
)


def _words(same: float, cross: float) -> Words:
    prof = load_profile("mi355x").with_params(visibility_same_xcd=same, visibility_cross_xcd=cross)
    return Words(simpy.Environment(), Sampler(prof), {7: 3})


@settings(max_examples=300, deadline=None)
@given(
    same=st.sampled_from([0.0, 350.0, 800.0]),
    cross=st.sampled_from([0.0, 350.0, 800.0, 1200.0]),
    steps=st.lists(
        st.one_of(WRITE.map(lambda w: ("w", w)), READ.map(lambda r: ("r", r))), max_size=60
    ),
)
def test_the_bisection_finds_what_the_walk_does(
    same: float, cross: float, steps: list[tuple[str, tuple]]
) -> None:
    """Random histories of one word, reads interleaved with writes (the index grows after
    the first read), ties of serialization, a reader's own writes, and every order of
    the same-XCD and cross-XCD latencies: the value, the write and the next visibility
    are the walk's, float for float."""
    fast, walk = _words(same, cross), _words(same, cross)
    walk.bisect = False
    assert fast.bisect
    at, n = 0.0, 0
    for kind, step in steps:
        if kind == "w":
            dt, cta = step
            xcd = cta % XCDS
            at += dt
            n += 1
            for words in (fast, walk):
                words.write(7, n, Write(at, n, xcd, cta, n))
        else:
            cta, dt = step
            xcd = cta % XCDS
            got = fast.seen(7, cta, xcd, at + dt)
            want = walk.seen(7, cta, xcd, at + dt)
            assert got[0] == want[0]
            assert (got[1].rec if got[1] else None) == (want[1].rec if want[1] else None)
            assert got[2] == want[2]


def test_a_jittered_run_walks() -> None:
    """A jittered run draws each visibility as the walk meets it: no bisection."""
    prof = load_profile("mi355x")
    assert not Words(simpy.Environment(), Sampler(prof, seed=3, jitter=0.15)).bisect
    assert Words(simpy.Environment(), Sampler(prof)).bisect


def _gridbarrier(ctas: int, **flags: bool) -> object:
    spec = get("gridbarrier")
    d = spec.config_to_dict(spec.default_config())
    return spec.validate(spec.config_from_dict({**d, "ctas": ctas, **flags}))


def _same(a: object, b: object) -> None:
    assert a.timeline.ctas == b.timeline.ctas
    assert a.timeline.stuck == b.timeline.stuck
    assert a.stale_reads == b.stale_reads
    assert a.final == b.final
    assert a.deadlock == b.deadlock


def test_a_folded_grid_barrier_equals_the_unfolded_one_with_fewer_wakes() -> None:
    """The unfolded run wakes every wait at every write (as the reference engine does);
    the folded one only where a write changes the next try: the same records, the
    stale reads and the hang of the broken barriers, in fewer events."""
    prof = load_profile("mi355x")
    for flags in ({}, {"broken": True}, {"last_resets": True}):
        cfg = _gridbarrier(256, **flags)
        folded = simulate(cfg, prof)
        unfolded = simulate(cfg, prof, fold_events=False)
        _same(folded, unfolded)
        assert folded.events < unfolded.events
        assert sum(p.retries or 0 for c in folded.timeline.ctas for p in c.polls) > 0


def test_a_folded_grid_barriers_events_grow_as_its_ctas() -> None:
    """Twice the CTAs, at most 2.2 times the events (linear, and 10 % for the tail of a
    round the more CTAs stretch); every write woke every wait, and 256 to 512 CTAs made
    5.5 times the events (bench/README.md, "How cost grows")."""
    prof = load_profile("mi355x")
    small, large = (simulate(_gridbarrier(n), prof).events for n in (256, 512))
    assert large <= 2.2 * small
