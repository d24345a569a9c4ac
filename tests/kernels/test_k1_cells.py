"""K1's cells in its own terms, and the unit its layout gives each: the one its
build has put it."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.k1.cells import expected_writers, name_cell, work_items
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BETA_0, FA_0, GEMV0, HD, NPROJ, PROJ
from kda_sim.kernels.k1.program import build_launch
from kda_sim.protocol.access import NO_UNIT, accesses, item_unit, task_unit


def test_cells_are_named_by_slice_request_head_chunk_and_row() -> None:
    cfg = LaunchConfig(2, 3)  # S = 6 tokens
    assert name_cell(cfg, "MSQ", 4 * 6 + 5) == ("MSQ[slice 4, token 5 (request 1, position 2)]")
    row = PROJ + 3 * HD + 17  # k row of head 3
    assert name_cell(cfg, "PROJ", 4 * NPROJ + row) == (
        "PROJ[token 4 (request 1, position 1), group 121, k row, head 3, dim 17]"
    )
    assert "f_a row, dim 2" in name_cell(cfg, "PROJ", FA_0 + 2)
    assert "beta row, head 11" in name_cell(cfg, "PROJ", BETA_0 + 11)
    assert "pad row 3" in name_cell(cfg, "PROJ", NPROJ - 1)
    qk = ((1 * 12 + 2) * 3 + 1) * 2 * HD + HD + 37  # request 1, head 2, position 1, k, 37
    assert name_cell(cfg, "QK", qk) == ("QK[request 1, head 2, position 1, k, chunk 2, lane 37]")
    assert name_cell(cfg, "ONRM", ((0 * 12 + 5) * 3 + 2) * 8 + 7) == (
        "ONRM[request 0, head 5, position 2, chunk 7]"
    )
    assert name_cell(cfg, "X", 9) == "X[slice 9]"
    assert name_cell(cfg, "TICKET", 0) == "TICKET[0]"


@pytest.mark.parametrize(
    "cfg",
    [
        LaunchConfig(2, 2, kda0=40),
        LaunchConfig(1, 1, gemv_tickets=True),
        LaunchConfig(1, 2, kda_tickets=True),
    ],
    ids=str,
)
def test_the_layouts_writer_of_every_cell_is_the_one_the_build_puts_it(cfg) -> None:
    acc = accesses(build_launch(cfg))
    cell, op = acc.writes
    unit = acc.unit_of_op()[op]
    space = acc.launch.space
    want = np.concatenate(
        [expected_writers(cfg, space.name(r), np.arange(n)) for r, n in enumerate(space.sizes)]
    )[cell]
    assert np.array_equal(unit[want != NO_UNIT], want[want != NO_UNIT])
    assert (want != NO_UNIT).mean() > 0.99  # every region but the ticket word says


def test_units_are_cta_task_or_item_as_placed() -> None:
    static = LaunchConfig(1, 1)
    assert expected_writers(static, "PROJ", np.array([0, 16, 32])).tolist() == [
        GEMV0,
        GEMV0,
        GEMV0 + 1,
    ]
    assert expected_writers(static, "ONRM", np.array([9])).tolist() == [task_unit(9)]
    tickets = LaunchConfig(1, 1, gemv_tickets=True)
    assert expected_writers(tickets, "PROJ", np.array([16])).tolist() == [item_unit(0, 1)]
    assert expected_writers(LaunchConfig(1, 1, gate_local=True), "WGT", np.array([0])).tolist() == [
        NO_UNIT
    ]
    assert work_items(static)["k.conv"] == range(96)
