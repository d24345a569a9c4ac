"""Counter ops in the engine: atomics return the value at their serialization point,
serialize per word, cost more across XCDs; waits pass on the predicate; resets write 0."""

from __future__ import annotations

import dataclasses

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.spec import Kernel
from kda_sim.machine import load_profile
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace


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
