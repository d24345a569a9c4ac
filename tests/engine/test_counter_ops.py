"""Counter ops in the engine: atomics return the value at their serialization point,
serialize per word, cost more across XCDs; waits pass on the predicate; resets write 0."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.spec import Kernel
from kda_sim.machine import load_profile
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Load, LoadKind, Poll, Put, Use
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import TakeAhead, ticket_loop


@dataclasses.dataclass(frozen=True)
class WordsCfg:
    ctas: int = 3


def _regions(cfg: WordsCfg) -> dict[str, int]:
    return {"W": 2}


def _build(cfg: WordsCfg) -> Launch:
    """Each CTA adds 1 to W[0] (its old value into "mine"); CTA 0 then CAS-es W[1] from 0
    to 7, waits W[1] == 7, resets W[0]; the others wait W[0] >= ctas."""
    space = CellSpace.from_sizes(_regions(cfg))
    w0, w1 = int(space.gid(0, 0)), int(space.gid(0, 1))
    progs = []
    for c in range(cfg.ctas):
        ops: list = [Atomic(0, w0, AtomicKind.ADD, 1, into="mine")]
        if c == 0:
            ops += [
                Atomic(0, w1, AtomicKind.CAS, 7, compare=0),
                Atomic(0, w1, AtomicKind.CAS, 9, compare=0),  # fails: W[1] is 7
                Wait("W1==7", 0, w1, Pred.EQ, 7),
                Wait("W0>=ctas", 0, w0, Pred.GE, cfg.ctas),
                Reset(0, (w0,)),
            ]
        else:
            ops += [Wait("W0>=ctas", 0, w0, Pred.GE, cfg.ctas)]
        progs.append(CtaProgram(c, "w", (), tuple(ops)))
    return Launch(cfg, space, tuple(progs))


KERNEL = Kernel("words-test", WordsCfg, _build, _regions, ("w",), ("s",))


def _run(gpu: str = "h200", **lat: float):
    from kda_sim.kernels.registry import register

    register(KERNEL, "test")
    prof = load_profile(gpu)
    if lat:
        prof = dataclasses.replace(prof, latency_ns={**prof.latency_ns, **lat})
    return simulate(WordsCfg(), prof).timeline


def test_atomics_serialize_and_waits_pass() -> None:
    tl = _run(atomic_serial=40.0)
    assert not tl.deadlock
    adds = sorted(c.puts[0].time for c in tl.ctas)
    assert adds[1] - adds[0] >= 40.0 and adds[2] - adds[1] >= 40.0  # one word, one at a time
    cta0 = tl.ctas[0]
    assert [p.region for p in cta0.puts] == ["W", "W", "W"]  # add, one CAS, the reset
    assert [p.first for p in cta0.puts] == [0, 1, 0]  # the failed CAS wrote nothing
    for c in tl.ctas[1:]:
        assert c.polls[0].satisfied >= max(adds) + load_profile("h200").latency_ns["poll"]


def test_cross_xcd_atomics_cost_more() -> None:
    cross = _run("mi355x")  # CTAs 0, 1, 2 on XCDs 0, 1, 2
    flat = _run("mi355x", visibility_cross_xcd=350.0)
    last = [max(c.puts[0].time for c in tl.ctas) for tl in (cross, flat)]
    assert last[0] - last[1] == pytest.approx(
        450.0
    )  # the word's line moved from another XCD: 800 - 350


@dataclasses.dataclass(frozen=True)
class ItemsCfg:
    ctas: int = 2
    items: int = 4
    forward: bool = False  # item i polls item i + 1's pair instead of item i - 1's


def _item_regions(cfg: ItemsCfg) -> dict[str, int]:
    return {"T": 1, "A": 1, "B": cfg.items}


def _item_build(cfg: ItemsCfg) -> Launch:
    """CTA 0 puts A, then every CTA takes items: item i polls A (a static producer) and
    item i - 1's B (an item producer), computes, puts B[i]; the last taker resets T."""
    space = CellSpace.from_sizes(_item_regions(cfg))
    t0 = int(space.gid(0, 0))

    def body(i: int) -> list:
        dep = i + 1 if cfg.forward else i - 1
        ops: list = [Poll("A", np.array([[space.gid(1, 0)]]), np.array([space.gid(1, 0)]))]
        if 0 <= dep < cfg.items:
            cell = space.gid(2, dep)
            ops.append(Poll("B", np.array([[cell]]), np.array([cell])))
        return [*ops, Compute("c"), Put(2, np.array([space.gid(2, i)]))]

    loop = ticket_loop("items", 0, t0, cfg.items, body, takers=cfg.ctas)
    progs = [CtaProgram(0, "w", (), (Compute("c"), Put(1, np.array([space.gid(1, 0)])), loop))]
    progs += [CtaProgram(c, "w", (), (loop,)) for c in range(1, cfg.ctas)]
    return Launch(cfg, space, tuple(progs))


ITEMS = Kernel(
    "items-test", ItemsCfg, _item_build, _item_regions, ("w",), ("s",),
    default_costs={"c": (500.0, 0.0)},
)  # fmt: skip


def _items(cfg: ItemsCfg):
    from kda_sim.kernels.registry import register

    register(ITEMS, "test")
    return simulate(cfg, load_profile("h200")).timeline


def test_items_poll_static_and_item_producers() -> None:
    tl = _items(ItemsCfg())
    assert not tl.deadlock
    polls = [p for c in tl.ctas for p in c.polls if p.label == "B"]
    assert len(polls) == 3  # items 1, 2, 3, whichever CTA ran them
    puts = {(c.cta, i): p for c in tl.ctas for i, p in enumerate(c.puts)}
    for p in polls:  # the producer is the CTA that ran item i - 1, its put before the poll
        assert p.producer in (0, 1)
        assert puts[(p.producer, p.put_ref)].region == "B"
        assert p.satisfied > p.put_time
    # the last of the 4 + 2 tickets resets T: its last write is a 0 after 6 takes
    resets = [p for c in tl.ctas for p in c.puts if p.region == "T"]
    assert len(resets) == 4 + 2 + 1


def test_an_item_waiting_on_a_larger_ticket_hangs_at_one_taker() -> None:
    tl = _items(ItemsCfg(ctas=1, forward=True))
    assert tl.deadlock
    assert "item 1 is not taken" in tl.stuck[0].reason


def test_a_cta_reads_its_own_write_of_a_word_at_once() -> None:
    from kda_sim.engine.initial import Initial
    from kda_sim.kernels.examples.splitk import SplitKConfig

    # the reducer adds 1 to the 2 left, then waits == 2: it must read its own 3, not the 2
    prof = load_profile("mi355x", kernel="splitk")
    res = simulate(SplitKConfig(splits=1), prof, initial=Initial(words={0: 2}))
    assert res.deadlock and res.final.stale_waits == []
    (stuck,) = res.timeline.stuck
    assert "it reads 3" in stuck.reason


# -- a taken item's first loads wait for its take -----------------------------------------
@dataclasses.dataclass(frozen=True)
class StagedCfg:
    items: int = 6
    tail: bool = False  # each role ends on a 500 ns compute ("tail")
    ahead: bool = False  # each CTA's first take is issued ahead of its role's tail


def _staged_regions(cfg: StagedCfg) -> dict[str, int]:
    return {"T": 1}


def _staged_build(cfg: StagedCfg) -> Launch:
    """Two CTAs take items after roles of different lengths; an item's first stage loads
    its input (its address is the item's index, known only when the take returns),
    computes and uses it."""
    space = CellSpace.from_sizes(_staged_regions(cfg))

    def body(i: int) -> list:
        return [
            Begin("s", i),
            Load("in", LoadKind.STAGING, 4096, f"the input of item {i}"),
            Compute("c"),
            Use(("in",)),
            End("s", i),
        ]

    cell = int(space.gid(0, 0))
    loop = ticket_loop("items", 0, cell, cfg.items, body, takers=2)
    tail: tuple = (
        (TakeAhead(0, cell),) * cfg.ahead + (Compute("tail"),) if cfg.tail or cfg.ahead else ()
    )
    return Launch(
        cfg,
        space,
        (
            CtaProgram(0, "w", (), (Compute("r0"), *tail, loop)),
            CtaProgram(1, "w", (), (Compute("r1"), *tail, loop)),
        ),
    )


STAGED = Kernel(
    "staged-items-test", StagedCfg, _staged_build, _staged_regions, ("w",), ("s",),
    default_costs={
        "c": (500.0, 0.0), "r0": (1000.0, 0.0), "r1": (3000.0, 0.0), "tail": (500.0, 0.0),
    },
)  # fmt: skip


def _staged(
    monkeypatch: pytest.MonkeyPatch | None = None, cfg: StagedCfg | None = None, **lat: float
):
    """The staged launch on the H200 with latencies ``lat``; with ``monkeypatch``, run by
    the reference engine (tests/engine/engine_reference.py) instead."""
    import importlib

    from kda_sim.kernels.registry import register

    register(STAGED, "test")
    prof = load_profile("h200")
    prof = dataclasses.replace(prof, latency_ns={**prof.latency_ns, **lat})
    cfg = cfg or StagedCfg()
    if monkeypatch is None:
        return simulate(cfg, prof).timeline
    from engine_reference import ReferenceBandwidth, ReferenceCtaRun, ReferenceWorld

    sim_module = importlib.import_module("kda_sim.engine.simulate")
    with monkeypatch.context() as m:
        m.setattr(sim_module, "CtaRun", ReferenceCtaRun)
        m.setattr(sim_module, "SharedBandwidth", ReferenceBandwidth)
        m.setattr(sim_module, "World", ReferenceWorld)
        return simulate(cfg, prof, fold_events=False).timeline


def _first_loads(tl) -> dict[int, tuple[float, float]]:
    """Item -> (its take's return, its first load's issue), on the CTA that took it."""
    loads = {(c.cta, ld.task): ld.issue for c in tl.ctas for ld in c.loads if ld.stage == "s"}
    return {
        int(t): (ret, loads[(int(cta), int(t))])
        for cta, _issue, ret, t in tl.meta.extra["ticket_takes"]
        if t < StagedCfg().items
    }


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_an_items_first_load_issues_when_its_take_returns(
    monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A take blocks its CTA until the atomic returns: the item's first stage, and the
    loads it issues (addressed by the item's index), start then, plus the item's
    prologue; never at the stage's own turn before it (docs/whatif/ticket_k1.md, "The
    take's round trip in the engine")."""
    patch = monkeypatch if engine == "reference" else None
    tl = _staged(patch, ticket_item=40.0)
    first = _first_loads(tl)
    assert sorted(first) == list(range(StagedCfg().items))
    for ret, issue in first.values():
        assert issue == pytest.approx(ret + 40.0)
    # a slower take delays the first item's load by the round trip's difference: CTA 0
    # takes it alone at its role's end (1000 ns), nothing else in flight
    slow = _first_loads(_staged(patch, ticket_item=40.0, atomic=900.0))
    fast = _first_loads(_staged(patch, ticket_item=40.0, atomic=300.0))
    assert slow[0][1] - fast[0][1] == pytest.approx(600.0)
    assert fast[0][1] == pytest.approx(1000.0 + 300.0 + 40.0)


@pytest.mark.parametrize("engine", ["fast", "reference"])
def test_a_take_issued_ahead_overlaps_the_roles_tail(
    monkeypatch: pytest.MonkeyPatch, engine: str
) -> None:
    """A take issued ahead of the role's 500 ns tail (TakeAhead) does not block the CTA:
    the item's first load issues at the later of its return and the role's end, plus
    the prologue. CTA 0's role ends at 1500 ns: a 300 ns round trip issued at 1000 is
    hidden whole (1540, not 1840), a 900 ns one (back at 1900) by the tail's 500 ns."""
    patch = monkeypatch if engine == "reference" else None
    ahead, tail = StagedCfg(ahead=True), StagedCfg(tail=True)
    for rt, load_at in ((300.0, 1500.0 + 40.0), (900.0, 1000.0 + 900.0 + 40.0)):
        tl = _staged(patch, ahead, ticket_item=40.0, atomic=rt)
        first = _first_loads(tl)
        assert first[0] == (pytest.approx(1000.0 + rt), pytest.approx(load_at))
        take0 = next(r for r in tl.meta.extra["ticket_takes"] if r[3] == 0)
        assert take0[:3] == [0, pytest.approx(1000.0), pytest.approx(1000.0 + rt)]
        # the same role with the take at its end: the round trip after the tail
        blocked = _first_loads(_staged(patch, tail, ticket_item=40.0, atomic=rt))
        assert blocked[0][1] == pytest.approx(1500.0 + rt + 40.0)
        assert blocked[0][1] - first[0][1] == pytest.approx(min(rt, 500.0))
        # a CTA's later takes (after an item) are the loop's own: the load after the take
        firsts = {min(r[1] for r in tl.meta.extra["ticket_takes"] if r[0] == c) for c in (0, 1)}
        for _cta, issue, ret, item in tl.meta.extra["ticket_takes"]:
            if issue not in firsts and item < ahead.items:
                assert first[item][1] == pytest.approx(ret + 40.0)


@pytest.mark.parametrize("atomic", [200.0, 4000.0])
def test_a_cta_retires_after_its_last_reset_lands(atomic: float) -> None:
    # CTA 0's last op resets W[0]: its store lands half an atomic's round trip after the
    # issue, and the CTA retires then, not before (a put outside the CTA's span would be
    # refused by the launch check), however long the atomic against the rest
    tl = _run(atomic=atomic)
    c0 = tl.ctas[0]
    reset = c0.puts[-1]  # the reset's write of W[0], its landing time
    assert reset.region == "W" and reset.first == 0
    assert c0.end is not None and reset.time <= c0.end
    assert c0.end >= c0.puts[-2].time + atomic / 2  # after the CAS, a full half trip on
