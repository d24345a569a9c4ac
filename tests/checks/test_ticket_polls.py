"""The ticket check on bodies that poll (value, tag) pairs: pairs put by smaller items
keep the argument; a pair put by a static CTA covers residencies that hold that CTA; a
pair put by a larger ticket breaks it, with the wait-for chain."""

from __future__ import annotations

import dataclasses

import numpy as np

from kda_sim.checks.tickets import check_tickets
from kda_sim.protocol.ops import Compute, Poll, Put
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop


@dataclasses.dataclass(frozen=True)
class Cfg:
    ctas: int = 4
    items: int = 6
    producer: int = 0  # the CTA whose program puts A before its loop
    forward: bool = False  # item i polls item i + 1's B instead of item i - 1's


def build(cfg: Cfg) -> Launch:
    space = CellSpace.from_sizes({"T": 1, "A": 1, "B": cfg.items})
    a = space.gid(1, 0)

    def body(i: int) -> list:
        dep = i + 1 if cfg.forward else i - 1
        ops: list = [Poll("A", np.array([[a]]), np.array([a]))]
        if 0 <= dep < cfg.items:
            b = space.gid(2, dep)
            ops.append(Poll("B", np.array([[b]]), np.array([b])))
        return [*ops, Compute("c"), Put(2, np.array([space.gid(2, i)]))]

    loop = ticket_loop("items", 0, int(space.gid(0, 0)), cfg.items, body, takers=cfg.ctas)
    progs = []
    for c in range(cfg.ctas):
        pre = (Put(1, np.array([a])),) if c == cfg.producer else ()
        progs.append(CtaProgram(c, "w", (), (*pre, loop)))
    return Launch(cfg, space, tuple(progs))


def test_backward_item_polls_finish_at_any_residency() -> None:
    (v,) = check_tickets(build(Cfg()))
    assert v.finishes is True and v.needs_resident == 1 and v.hangs_at == ()


def test_a_static_producer_bounds_the_residency() -> None:
    (v,) = check_tickets(build(Cfg(producer=2)))
    assert v.finishes is True and v.needs_resident == 3
    assert "at least 3 CTAs" in v.why
    # below it the walk hangs: CTA 2 is dispatched only when a CTA retires
    assert v.hangs_at == (1, 2)


def test_a_poll_of_a_larger_ticket_hangs_with_its_chain() -> None:
    (v,) = check_tickets(build(Cfg(ctas=7, forward=True)))
    assert v.finishes is False
    assert "item 0 polls B, written by item 1 (a larger ticket)" in v.why
    # the chain 0 <- 1 <- ... <- 5 unwinds only when all 6 items are held
    assert v.hangs_at == (1, 2, 3, 4, 5) and "It finishes with 6 to 7 CTAs resident" in v.why
    assert v.findings and v.findings[0].fails
