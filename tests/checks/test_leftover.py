"""What a launch leaves in its words for the next launch: zeroed by the last ticket's
taker, counted from the writes, undecided where order matters; a self-resetting launch
that leaves a word behind fails."""

from __future__ import annotations

import dataclasses

from kda_sim.checks.findings import Category
from kda_sim.checks.leftover import check_leftover, leftovers
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.monomoe.config import MonoMoeConfig
from kda_sim.kernels.monomoe.protocol import build
from kda_sim.kernels.registry import get
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.tickets import TicketLoop


def _values(launch: Launch) -> dict[str, int | None]:
    return {lo.word: lo.value for lo in leftovers(launch)}


def test_the_last_tickets_clears_zero_every_counter() -> None:
    line, los, findings = check_leftover(build(MonoMoeConfig()))
    assert findings == [] and all(lo.cleared and lo.value == 0 for lo in los)
    assert "every word zeroed by the launch" in line


def test_counts_left_without_clearing() -> None:
    cfg = MonoMoeConfig(tokens=5, experts=3, top_k=2, ctas=3, no_clear=True)
    vals = _values(build(cfg))
    # 5 tokens x 2 routes over 3 experts: tokens 0..4 go to (0,1) (2,0) (1,2) (0,1) (2,0)
    assert vals == {
        "TICKET[0]": cfg.items + 3, "TOPK[0]": 5, "COUNT[0]": 4, "COUNT[1]": 3, "COUNT[2]": 3,
    }  # fmt: skip
    line, _, findings = check_leftover(build(cfg))
    assert findings == []  # it zeroes nothing itself: the host is assumed to
    assert f"the first take returns {cfg.items + 3}, past the {cfg.items} items" in line


def test_a_partial_clear_fails() -> None:
    launch = build(MonoMoeConfig())
    loop = launch.programs[0].ops[0]
    assert isinstance(loop, TicketLoop)
    partial = dataclasses.replace(loop, clears=loop.clears[:1])  # TOPK only, no COUNT
    progs = tuple(CtaProgram(p.cta, p.role, p.tasks, (partial,)) for p in launch.programs)
    _, _, (f,) = check_leftover(Launch(launch.cfg, launch.space, progs))
    assert f.category is Category.LEFTOVER and f.fails
    assert "zeroes TICKET[0], TOPK[0] itself but leaves COUNT[0..3] = 2" in f.message
    assert "item 7 (op 2) passes COUNT[0] >= 2 at once" in f.message


def test_an_order_dependent_word_is_said_so() -> None:
    spec = get("gridbarrier")
    vals = _values(spec.build(GridBarrierConfig(broken=True)))
    assert vals == {"ARRIVE[0]": None}
    assert _values(spec.build(GridBarrierConfig())) == {"ARRIVE[0]": 8 * 2}
