"""A launch started from memory an earlier launch left: words non-zero, pairs already
tagged; and what the launch leaves."""

from __future__ import annotations

from kda_sim.engine import simulate
from kda_sim.engine.initial import Initial
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.splitk import SplitKConfig
from kda_sim.machine import load_profile
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Compute
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

PROF = load_profile("h200", kernel="pingpong")


def test_an_empty_initial_state_changes_nothing() -> None:
    cfg = PingPongConfig(rounds=3)
    plain = simulate(cfg, PROF)
    same = simulate(cfg, PROF, initial=Initial())
    assert plain.final is None
    assert same.timeline.ctas == plain.timeline.ctas
    assert same.final is not None and same.final.stale_polls == []
    assert sorted(same.final.put_done) == [(0, k) for k in (4, 10, 16)]


def test_a_pair_already_tagged_passes_at_the_first_try() -> None:
    cfg = PingPongConfig(rounds=2)
    plain = simulate(cfg, PROF).timeline.ctas[1].polls
    res = simulate(cfg, PROF, initial=Initial(tagged=frozenset({0})))
    polls = res.timeline.ctas[1].polls
    assert polls[0].retries == 0 and polls[0].satisfied < plain[0].satisfied
    assert polls[0].satisfied < res.final.put_done[(0, 4)][0]  # before its producer's put
    assert polls[1].producer == 0  # VAL[1] is not tagged: waited for as before
    (sp,) = res.final.stale_polls
    assert sp.cta == 1 and sp.cells.tolist() == [0]


def test_a_word_left_non_zero_passes_a_ge_wait_early() -> None:
    prof = load_profile("h200", kernel="gridbarrier")
    cfg = GridBarrierConfig(ctas=4, rounds=1)
    res = simulate(cfg, prof, initial=Initial(words={0: 4}))
    assert not res.deadlock
    # the last to add reads its own 8: this launch's 4 arrivals, not the 4 left
    assert {s.cta for s in res.final.stale_waits} == {0, 1, 2}
    assert res.final.words == {0: 8}
    assert simulate(cfg, prof, initial=Initial()).final.stale_waits == []


def test_an_eq_wait_on_a_word_left_non_zero_can_hang() -> None:
    prof = load_profile("h200", kernel="splitk")
    res = simulate(SplitKConfig(splits=2), prof, initial=Initial(words={0: 3}))
    assert res.deadlock
    (stuck,) = res.timeline.stuck
    assert stuck.cta == 0 and stuck.region == "SEM"


def test_a_reset_rebases_the_word() -> None:
    prof = load_profile("h200", kernel="splitk")
    res = simulate(SplitKConfig(splits=2, reset=True), prof, initial=Initial())
    assert res.final.words == {0: 0}


def _flag_pair(cfg: GridBarrierConfig) -> Launch:
    """Two CTAs, each setting its peer's flag word to 1 (an exchange) after some work,
    then waiting for its own flag to hold 1: the protocol DeepGEMM#451's ranks had."""
    space = CellSpace.from_sizes({"READY": 2})
    flag = [int(space.gid(0, r)) for r in range(2)]
    progs = []
    for r in range(2):
        ops = (
            Compute("gb.work"),
            Atomic(0, flag[1 - r], AtomicKind.EXCH, 1),
            Wait(f"READY[{r}]==1", 0, flag[r], Pred.EQ, 1),
        )
        progs.append(CtaProgram(r, "member", (), ops))
    return Launch(cfg, space, tuple(progs))


def test_a_wait_that_read_the_left_value_is_stale_though_an_exchange_followed() -> None:
    cfg = GridBarrierConfig(ctas=2)
    prof = load_profile("h200", kernel="gridbarrier")
    launch = _flag_pair(cfg)
    left = simulate(cfg, prof, launch=launch, initial=Initial(words={0: 1, 1: 1}))
    assert {s.cta for s in left.final.stale_waits} == {0, 1}  # read the 1 before the peer's
    assert simulate(cfg, prof, launch=launch, initial=Initial()).final.stale_waits == []
