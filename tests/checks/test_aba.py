"""The ABA check: a reset ordered after every waiter passed (through another barrier's
count) is no hazard; the same reset without that barrier is."""

from __future__ import annotations

from kda_sim.checks.aba import check_aba
from kda_sim.checks.findings import Category
from kda_sim.protocol.counters import Atomic, Pred, Reset, Wait
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace


def _launch(second_barrier: bool, n: int = 4) -> Launch:
    space = CellSpace.from_sizes({"A": 1, "B": 1})
    a, b = int(space.gid(0, 0)), int(space.gid(1, 0))
    progs = []
    for c in range(n):
        ops: list = [Atomic(0, a), Wait("A", 0, a, Pred.GE, n)]
        if second_barrier:
            ops += [Atomic(1, b), Wait("B", 1, b, Pred.GE, n)]
        if c == 0:
            ops.append(Reset(0, (a,)))
        progs.append(CtaProgram(c, "m", (), tuple(ops)))
    return Launch(None, space, tuple(progs))


def test_reset_after_a_second_barrier_is_ordered() -> None:
    assert check_aba(_launch(second_barrier=True)) == []


def test_reset_right_after_the_barrier_is_a_hazard() -> None:
    (f,) = check_aba(_launch(second_barrier=False))
    assert f.category is Category.ABA and f.fails
    assert "CTA 0 (op 2) resets A[0] (to 0)" in f.message
    assert [w["cta"] for w in f.details["waiters"]] == [1, 2, 3]
