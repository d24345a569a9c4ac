"""The reset-race check: a word cleared while a wait or an add of another unit is not
ordered before the clear by the launch's happens-before order (program order, satisfied
polls of pairs, waits on counts), and no finding where one is."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.checks.aba import check_aba
from kda_sim.checks.dataflow import check_dataflow
from kda_sim.checks.dataflow.naming import Namer
from kda_sim.checks.dataflow.resets import RESET_FIX, check_resets
from kda_sim.checks.findings import Category, Finding
from kda_sim.cli import main
from kda_sim.commands.common import kernel_config
from kda_sim.host.run import _together
from kda_sim.kernels.bugs.corpus import cases
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.examples.splitk import SplitKConfig
from kda_sim.kernels.registry import BUILTIN, get, spec_for
from kda_sim.protocol.access import accesses
from kda_sim.protocol.batches import poll
from kda_sim.protocol.branches import on_old
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.ops import Put
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop

CFG = GridBarrierConfig()  # a kernel without naming hooks: words are REGION[index]


def _races(launch: Launch) -> list[Finding]:
    return check_resets(accesses(launch), Namer(accesses(launch), launch.cfg))


def _barrier(second: str, n: int = 4) -> Launch:
    """Every CTA adds 1 to A and waits A >= n; CTA 0 then clears A. ``second``: what orders
    the clear after the others' waits: "" nothing, "count" a second barrier on B, "pairs"
    each other CTA puts a pair after its wait, which CTA 0 polls before the clear."""
    space = CellSpace.from_sizes({"A": 1, "B": 1, "P": n})
    a, b = int(space.gid(0, 0)), int(space.gid(1, 0))
    progs = []
    for c in range(n):
        ops: list = [Atomic(0, a), Wait("A", 0, a, Pred.GE, n)]
        if second == "count":
            ops += [Atomic(1, b), Wait("B", 1, b, Pred.GE, n)]
        if second == "pairs" and c > 0:
            ops.append(Put(2, np.array([int(space.gid(2, c))])))
        if c == 0:
            if second == "pairs":
                ops.append(poll("P", space.gid(2, np.arange(1, n))[:, None], width=1))
            ops.append(Reset(0, (a,)))
        progs.append(CtaProgram(c, "m", (), tuple(ops)))
    return Launch(CFG, space, tuple(progs))


def test_a_clear_right_after_the_barrier_races_every_other_waiter() -> None:
    (f,) = _races(_barrier(""))
    assert f.category is Category.RESET_RACE and f.fails and f.fix == RESET_FIX
    assert f.message.startswith("CTA 0 (m), op 2 clears A[0] with 3 waits of other units")
    assert "CTA 1 (m), op 1, waiting for A[0] >= 4" in f.message
    assert "missing edge: CTA 1 (m)'s op 1 -> the clear" in f.message
    assert f.details["clearer"]["cta"] == 0 and f.details["clearer"]["op"] == 2
    assert [w["cta"] for w in f.details["waiters"]] == [1, 2, 3]


@pytest.mark.parametrize("second", ["count", "pairs"])
def test_a_clear_after_every_waiter_passed_is_ordered(second: str) -> None:
    # a count CTA 0 waits for needs the others' adds made after their A waits; or the
    # pairs it polls are put after them (an order the ABA check's counts cannot see)
    assert _races(_barrier(second)) == []


def _counted(reset_in_item: bool) -> Launch:
    """Items 0..2 add to A; items 3 and 4 wait A >= 3. The count is zeroed for the next
    launch by the last ticket's taker (after every item), or by item 3 after its wait."""
    space = CellSpace.from_sizes({"T": 1, "A": 1})
    t, a = int(space.gid(0, 0)), int(space.gid(1, 0))

    def body(i: int) -> list:
        if i < 3:
            return [Atomic(1, a)]
        ops: list = [Wait("A", 1, a, Pred.GE, 3)]
        return [*ops, Reset(1, (a,))] if reset_in_item and i == 3 else ops

    clears = () if reset_in_item else (Reset(1, (a,)),)
    loop = ticket_loop("q", 0, t, 5, body, takers=2, clears=clears)
    return Launch(CFG, space, tuple(CtaProgram(c, "w", (), (loop,)) for c in range(2)))


def test_a_last_ticket_clear_is_after_every_item() -> None:
    assert _races(_counted(reset_in_item=False)) == []


def test_the_same_clear_in_an_item_races_the_other_waiter() -> None:
    (f,) = _races(_counted(reset_in_item=True))
    assert f.message.startswith("item 3 of the ticket loop 'q', op 1 clears A[0]")
    assert [w["item"] for w in f.details["waiters"]] == [4]


def test_a_clear_that_can_wipe_out_a_later_add_is_a_race() -> None:
    """CTA 0 clears after its own wait == 1 on F; CTA 1 adds 1 to F with nothing between:
    its add may land before the clear and be lost (the next use's first arrival)."""
    space = CellSpace.from_sizes({"F": 1, "G": 1})
    f, g = int(space.gid(0, 0)), int(space.gid(1, 0))
    progs = (
        CtaProgram(0, "lead", (), (Atomic(0, f), Wait("F", 0, f, Pred.GE, 1), Reset(0, (f,)))),
        CtaProgram(1, "peer", (), (Atomic(1, g), Atomic(0, f))),
    )
    (found,) = _races(Launch(CFG, space, progs))
    assert "1 add not ordered before it (CTA 1 (peer), op 1)" in found.message
    assert found.details["adds"][0]["cta"] == 1 and found.details["waiters"] == []


def test_an_exchange_of_zero_is_a_clear_and_a_wait_it_releases_is_no_race() -> None:
    # CUB's barrier: peers set their flag and wait for 0; the main block clears them
    space = CellSpace.from_sizes({"S": 2})
    flag = int(space.gid(0, 1))
    progs = (
        CtaProgram(
            0, "main", (), (Wait("S", 0, flag, Pred.EQ, 1), Atomic(0, flag, AtomicKind.EXCH, 0))
        ),
        CtaProgram(
            1, "peer", (), (Atomic(0, flag, AtomicKind.EXCH, 1), Wait("S", 0, flag, Pred.EQ, 0))
        ),
    )
    assert _races(Launch(CFG, space, progs)) == []


def test_a_clear_at_a_launchs_end_races_the_next_launch_run_together() -> None:
    """One stream orders launches (the kernel boundary); grids run together (a host
    sequence's ``a & b``) are one launch, and the reducer's clear at the end of the first
    grid races the second grid's adds to the same semaphore."""
    cfg = SplitKConfig(tiles=1, splits=2, reset=True)
    one = spec_for(cfg).build(cfg)
    assert _races(one) == []
    both, _ = _together([cfg, cfg], [one, one])
    found = _races(both)
    clearers = {f.details["clearer"]["cta"] for f in found}
    assert clearers == {0, 2}  # each grid's reducer
    first = next(f for f in found if f.details["clearer"]["cta"] == 0)
    # the other grid's adds (its own split's too: the == 2 it waits for may now be made
    # of the other grid's adds)
    assert {2, 3} <= {a["cta"] for a in first.details["adds"]}


def _fixed_and_default() -> list[tuple[str, object]]:
    out = []
    fixes = {c.kernel: c for c in cases()}
    for name in sorted(set(BUILTIN) - {"k1"}):
        spec = get(name)
        if name in fixes:
            c = fixes[name]
            out.append((name, kernel_config(spec, [*c.args, *c.fix_args])))
        else:
            out.append((name, spec.default_config()))
    return out


@pytest.mark.parametrize(("name", "cfg"), _fixed_and_default(), ids=lambda v: str(v)[:24])
def test_no_race_on_any_built_in_kernel_nor_any_corpus_fix(name: str, cfg: object) -> None:
    launch = spec_for(cfg).build(cfg)
    assert _races(launch) == [], name


@pytest.mark.parametrize("case", [c for c in cases() if c.category == "reset-race"], ids=str)
def test_the_corpus_reset_bugs_are_races_naming_the_clearing_cta(case) -> None:
    spec = get(case.kernel)
    cfg = kernel_config(spec, list(case.args))
    found = [f for f in check_dataflow(spec.build(cfg), cfg).failing]
    assert found and all(f.category is Category.RESET_RACE for f in found)
    assert all(case.culprit in f.message and f.details["clearer"]["cta"] == 0 for f in found)


def test_the_report_counts_the_races(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--kernel", "gridbarrier", "--seeds", "0", "--broken", "true"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "data flow, static" in out and "(reset-race)" in out
    assert "[reset-race] CTA 0 (member), op 7 clears ARRIVE[0]" in out


def test_a_last_arrivers_clear_is_one_race_a_branch_whoever_takes_it() -> None:
    """fuser_gridsync: the reset is in a branch on the add's old value (the last arriver);
    every CTA holds the branch, so the race is said once a sync, with the CTAs that hold it,
    and the waits in the other branch are the racing waiters (they order nothing)."""
    spec = get("fuser_gridsync")
    cfg = kernel_config(spec, [])
    found = [f for f in check_dataflow(spec.build(cfg), cfg).failing]
    assert len(found) == cfg.syncs
    for f in found:
        assert f.category is Category.RESET_RACE
        assert f"(if old == {cfg.blocks - 1}: last arriver) clears ARRIVE[0]" in f.message
        assert f.details["ctas"] == cfg.blocks
        assert f"(the same branch in {cfg.blocks} CTAs: whichever takes it clears)" in f.message
        assert len(f.details["waiters"]) == (cfg.blocks - 1) * cfg.syncs


def _last_arriver(branch_wait: bool, n: int = 4) -> Launch:
    """Every CTA adds to A; the last arriver (old == n - 1) clears A. With ``branch_wait``
    the others wait for A >= n in the branch's else; without, every CTA first passes a
    second barrier on B, which orders the clear after every wait on A."""
    space = CellSpace.from_sizes({"A": 1, "B": 1})
    a, b = int(space.gid(0, 0)), int(space.gid(1, 0))
    wait_a = Wait("A", 0, a, Pred.GE, n)
    progs = []
    for c in range(n):
        ops: list = [Atomic(0, a, into="old")]
        if branch_wait:
            ops.append(on_old("last arriver", "old", Pred.EQ, n - 1, (Reset(0, (a,)),), (wait_a,)))
        else:
            ops += [wait_a, Atomic(1, b), Wait("B", 1, b, Pred.GE, n)]
            ops.append(on_old("last arriver", "old", Pred.EQ, n - 1, (Reset(0, (a,)),)))
        progs.append(CtaProgram(c, "m", (), tuple(ops)))
    return Launch(CFG, space, tuple(progs))


def test_the_last_arrivers_clear_is_one_race_for_whichever_cta_takes_it() -> None:
    (f,) = _races(_last_arriver(branch_wait=True))
    assert check_aba(_last_arriver(branch_wait=True)) == []  # a store of 0: said here only
    assert f.message.startswith("CTA 0 (m), op 1 (if old == 3: last arriver) clears A[0]")
    assert "(the same branch in 4 CTAs: whichever takes it clears)" in f.message
    assert f.details["ctas"] == 4
    assert "CTA 1 (m), op 1, waiting for A[0] >= 4" in f.message  # the else's wait


def test_a_clear_in_a_branch_after_a_barrier_every_cta_passes_is_ordered() -> None:
    assert _races(_last_arriver(branch_wait=False)) == []
    assert check_aba(_last_arriver(branch_wait=False)) == []


def test_a_wait_in_a_branch_orders_nothing() -> None:
    """CTA 0 clears A after its wait on B, but that wait is in a branch (the last arriver
    skips it): it may not run, so it orders nothing, and the others' waits on A race."""
    space = CellSpace.from_sizes({"A": 1, "B": 1})
    a, b = int(space.gid(0, 0)), int(space.gid(1, 0))
    n = 3
    progs = []
    for c in range(n):
        ops: list = [Atomic(0, a), Wait("A", 0, a, Pred.GE, n), Atomic(1, b, into="old")]
        ops.append(on_old("last", "old", Pred.EQ, n - 1, (), (Wait("B", 1, b, Pred.GE, n),)))
        if c == 0:
            ops.append(Reset(0, (a,)))
        progs.append(CtaProgram(c, "m", (), tuple(ops)))
    (f,) = _races(Launch(CFG, space, tuple(progs)))
    assert f.message.startswith("CTA 0 (m), op 4 clears A[0]")
    assert [w["cta"] for w in f.details["waiters"]] == [1, 2]
