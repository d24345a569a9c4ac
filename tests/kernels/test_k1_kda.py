"""K1's kda tasks are built from task 0's polls and puts, shifted (``kda.KdaTemplate``):
every task's arrays equal its index formulas' (``conv_rows``, ``gates_rows``,
``norm_rows``, ``qk_put``, ``onrm_put``) as the poll batching makes them, padding,
dtype, order and the polls' arrays shared with the ops that read them included."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.k1 import kda
from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.batches import poll
from kda_sim.kernels.k1.cells import KDA_STAGES
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import NH, NVCH
from kda_sim.kernels.k1.regions import regions
from kda_sim.protocol.ops import Begin, Compute, End, Poll, Put
from kda_sim.protocol.space import CellSpace


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.parametrize(
    "cfg",
    [LaunchConfig(1, 1), LaunchConfig(3, 2, kda0=5), LaunchConfig(2, 5), LaunchConfig(1, 16)],
    ids=lambda c: c.label(),
)
def test_every_task_equals_its_formulas(cfg: LaunchConfig) -> None:
    space = CellSpace.from_sizes(regions(cfg))
    for i in range(cfg.n_tasks):
        req, h, ch = kda.task_coords(i)
        fa, qk, beta = kda.gates_rows(req, h, cfg, space)
        want_polls = [
            poll("PROJ", kda.conv_rows(req, h, ch, cfg, space), site=sites.CONV),
            poll("PROJ", fa, site=sites.GATES_FA),
            poll("QK", qk, site=sites.qk(cfg.L)),
            poll("PROJ", beta, site=sites.GATES_BETA),
            poll("ONRM+PROJ", kda.norm_rows(req, h, ch, cfg, space), site=sites.NORM),
        ]
        want_puts = [kda.qk_put(req, h, ch, cfg, space), kda.onrm_put(req, h, ch, cfg, space)]
        ops = kda.kda_program(i, cfg, space)
        polls = [op for op in ops if isinstance(op, Poll)]
        puts = [op for op in ops if isinstance(op, Put)]
        assert [p.label for p in polls] == [p.label for p in want_polls]
        for got, want in zip(polls, want_polls, strict=True):
            assert _same(got.batches, want.batches) and _same(got.cells, want.cells), (i, got)
            assert not got.cells.flags.writeable and not got.batches.flags.writeable
            assert (got.lanes, got.backoff) == (want.lanes, want.backoff), (i, got.label)
        for got, want in zip(puts, want_puts, strict=True):
            assert _same(got.cells, want), (i, got)
        # a stage reads the very arrays its polls loaded (the checks key on them)
        computes = [op for op in ops if isinstance(op, Compute)]  # stage, conv, gates, recur, norm
        conv, gates, norm = polls[0], polls[1:4], polls[4]
        assert computes[1].reads is conv.cells and computes[4].reads is norm.cells
        assert all(a is g.cells for a, g in zip(computes[2].reads, gates, strict=True))
        assert puts[0].reads is conv.cells


def test_equal_poll_arrays_are_shared_and_read_only() -> None:
    # a gates poll's f_a rows are one request's: its 96 tasks hold the one read-only
    # array; a put's arrays are each task's own
    cfg = LaunchConfig(2, 2)
    space = CellSpace.from_sizes(regions(cfg))
    per_req = NH * NVCH
    a, b, c = (kda.kda_program(i, cfg, space) for i in (0, per_req - 1, per_req))
    fa = [[op for op in ops if isinstance(op, Poll)][1] for ops in (a, b, c)]
    assert fa[0].cells is fa[1].cells and fa[0].batches is fa[1].batches
    assert fa[2].cells is not fa[0].cells and not np.array_equal(fa[2].cells, fa[0].cells)
    assert not fa[0].cells.flags.writeable
    puts = [next(op for op in ops if isinstance(op, Put)) for ops in (a, b)]
    assert puts[0].cells is not puts[1].cells


def test_a_task_program_begins_and_ends_each_stage_in_order_with_its_index() -> None:
    """``task_marks``, made once a process and shared by every launch, are the stage
    marks a task's program would make for itself."""
    for cfg in (LaunchConfig(1, 1), LaunchConfig(4, 2, onw_first=True)):
        space = CellSpace.from_sizes(regions(cfg))
        for i in (0, 7, cfg.n_tasks - 1):
            ops = kda.kda_program(i, cfg, space)
            marks = [op for op in ops if isinstance(op, Begin | End)]
            assert marks == [m(st, i) for st in KDA_STAGES for m in (Begin, End)]
            assert marks == list(kda.task_marks(i))
