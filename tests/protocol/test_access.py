"""Reads and writes as data: every op's accesses, derived from the ops."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.pingpong import build as pingpong
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import NA
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.access import (
    NO_UNIT,
    TASK_UNIT0,
    Kind,
    accesses,
    accesses_of,
    item_unit,
    task_unit,
)
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import Begin, Compute, End, Poll, Publish, Put, Store
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop


def test_every_put_and_publish_writes_its_cells_with_its_region() -> None:
    launch = build_launch(LaunchConfig(2, 2))
    acc = accesses(launch)
    puts = [op for op in acc.ops if isinstance(op, Put | Publish)]
    assert acc.w_cell[acc.w_kind != Kind.STORE].size == sum(op.cells.size for op in puts)
    for row in np.unique(acc.w_op[acc.w_kind == Kind.PUT])[:50].tolist():
        op = acc.ops[row]
        mine = acc.w_op == row
        assert np.array_equal(np.sort(acc.w_cell[mine]), np.sort(op.cells))
        assert set(acc.w_region[mine].tolist()) == {int(op.region)}


def test_flagged_x_is_guarded_by_its_slices_xrdy_publish() -> None:
    launch = build_launch(LaunchConfig(1, 1))
    acc = accesses(launch)
    space = launch.space
    for a in (0, 17, NA - 1):
        row = int(acc.guard[space.gid(Region.X, a)])
        op = acc.ops[row]
        assert isinstance(op, Publish)
        assert op.cells.tolist() == [int(space.gid(Region.XRDY, a))]
        assert acc.seq_of(row).cta == a and acc.stage_of(row) == "mix"
    # the gemv CTAs' x load reads every slice's X
    loads = acc.r_cell[acc.r_kind == Kind.LOAD]
    assert set(loads.tolist()) == set(space.gid(Region.X, np.arange(NA)).tolist())


def test_a_read_of_a_polls_own_array_is_kept_as_the_poll_marked_read() -> None:
    acc = accesses(build_launch(LaunchConfig(1, 1)))
    assert acc.shortcut_reads > 0 and acc.declares_reads()
    for row in acc.reread[:20].tolist():
        assert isinstance(acc.ops[row], Poll)
    # a task's k.gates compute reads its three polls' arrays: no read rows of its own
    gates = [r for r, op in enumerate(acc.ops) if isinstance(op, Compute) and op.cost == "k.gates"]
    assert gates and not np.isin(gates, acc.r_op).any()


def test_ticket_items_are_their_own_sequences_and_tasks_their_own_units() -> None:
    cfg = LaunchConfig(1, 1, kda_tickets=True)
    acc = accesses(build_launch(cfg))
    items = [s for s in acc.seqs if s.loop >= 0]
    assert [s.item for s in items] == list(range(cfg.n_tasks))
    assert {s.unit for s in items} == {item_unit(0, i) for i in range(cfg.n_tasks)}
    units = acc.unit_of_op()
    in_task = acc.op_task >= 0
    assert np.array_equal(units[in_task], task_unit(acc.op_task[in_task]))
    assert (units[in_task] <= TASK_UNIT0).all() and (units[~in_task] > TASK_UNIT0).all()
    assert NO_UNIT < TASK_UNIT0 - 10**9


def test_the_kernels_own_accesses_are_cached() -> None:
    cfg = LaunchConfig(1, 2)
    assert accesses_of(cfg) is accesses_of(cfg)


def test_pingpongs_consumer_reads_what_it_polled() -> None:
    acc = accesses(pingpong(PingPongConfig(rounds=2)))
    assert acc.shortcut_reads == 2 and acc.r_cell[acc.r_kind == Kind.POLL].tolist() == [0, 1]
    assert acc.w_cell.tolist() == [0, 1]


def _launch(ops0: list, ops1: list, sizes: dict[str, int] | None = None) -> Launch:
    space = CellSpace.from_sizes(sizes or {"VAL": 2, "DATA": 2})
    progs = (CtaProgram(0, "producer", (), tuple(ops0)), CtaProgram(1, "consumer", (), tuple(ops1)))
    return Launch(PingPongConfig(), space, progs)


def test_a_store_after_the_last_publish_is_guarded_by_nothing() -> None:
    launch = _launch(
        [
            Store("d", 8, cells=(2,)),
            Publish(0, np.array([0])),
            Store("late", 8, cells=(3,)),
        ],
        [],
    )
    acc = accesses(launch)
    assert acc.guard.tolist() == [-1, -1, 1, -1]
    assert acc.w_kind.tolist() == [Kind.STORE, Kind.PUBLISH, Kind.STORE]
    assert acc.w_region.tolist() == [-1, 0, -1]


def test_cells_outside_the_space_are_kept_not_dropped() -> None:
    acc = accesses(_launch([Put(0, np.array([0, 9]))], [poll("V", np.array([[-1, 0]]), width=2)]))
    assert 9 in acc.w_cell.tolist()
    assert acc.r_cell.tolist() == [0]  # a poll's -1 pads are no cells


def test_stages_and_tasks_follow_begin_and_end() -> None:
    acc = accesses(
        _launch([Begin("s", 4), Put(0, np.array([0])), End("s", 4), Put(0, np.array([1]))], [])
    )
    assert [acc.stage_of(r) for r in range(4)] == ["s", "s", "s", ""]
    assert acc.op_task.tolist() == [4, 4, 4, -1]


def test_two_loops_on_one_counter_are_recorded_as_a_clash() -> None:
    space = CellSpace.from_sizes({"T": 1, "V": 4})
    a = ticket_loop("a", 0, 0, 2, lambda i: [Put(1, np.array([1 + i]))])
    b = ticket_loop("b", 0, 0, 1, lambda i: [Put(1, np.array([3]))])
    progs = (CtaProgram(0, "w", (), (a,)), CtaProgram(1, "w", (), (b,)))
    acc = accesses(Launch(PingPongConfig(), space, progs))
    assert acc.clashes == ((0, 1),)
    assert [s.item for s in acc.seqs if s.loop >= 0] == [0, 1]  # the first loop's items


@pytest.mark.parametrize("cfg", [LaunchConfig(1, 1, gemv_tickets=True), LaunchConfig(2, 1)])
def test_every_write_of_k1_is_a_put_publish_or_x_store(cfg: LaunchConfig) -> None:
    acc = accesses(build_launch(cfg))
    space = acc.launch.space
    stores = acc.w_cell[acc.w_kind == Kind.STORE]
    assert set(space.region_of(stores).tolist()) == {Region.X}
