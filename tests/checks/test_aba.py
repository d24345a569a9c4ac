"""The ABA check: a counter reused by adds while a waiter of its previous use may still
wait. Stores of 0 are the reset-race check's (tests/checks/test_dataflow_resets.py)."""

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


def test_a_reset_is_left_to_the_reset_race_check() -> None:
    # the same reset the reset-race check reports (one finding for one fault)
    assert check_aba(_launch(second_barrier=False)) == []


def _signed_barrier(counters: int, syncs: int = 2, n: int = 4) -> Launch:
    """cuML's GridSync shape: block 0 adds -(n - 1), the others 1, all wait for 0; sync s
    on counter s % counters."""
    space = CellSpace.from_sizes({"S": counters})
    progs = []
    for c in range(n):
        ops: list = []
        for s in range(syncs):
            word = int(space.gid(0, s % counters))
            ops += [
                Atomic(0, word, value=-(n - 1) if c == 0 else 1),
                Wait("S", 0, word, Pred.EQ, 0),
            ]
        progs.append(CtaProgram(c, "m", (), tuple(ops)))
    return Launch(None, space, tuple(progs))


def test_an_add_an_eq_wait_needs_is_an_arrival_not_a_reuse() -> None:
    # one counter a sync: every add is one the waits need, none can undo a 0 already read
    assert check_aba(_signed_barrier(counters=2)) == []


def test_the_next_syncs_add_on_the_same_counter_is_a_reuse() -> None:
    found = check_aba(_signed_barrier(counters=1))
    # the second sync's adds (op 2) can land before a slow block read the first sync's 0
    assert any(f.details["writer"]["op"] == 2 for f in found)
    assert all(f.category is Category.ABA for f in found)
