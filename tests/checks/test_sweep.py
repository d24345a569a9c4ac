"""The safety map over the kernel's two sweep axes; a kernel without them has no map."""

from __future__ import annotations

import pytest
from pingpong_variants import GRID

from kda_sim.checks.sweep import DEADLOCK, FINISHES, INVALID, sweep
from kda_sim.errors import InvalidInput


def test_a_kernels_own_axes_span_the_map(h200) -> None:
    cells = sweep(h200, kernel=GRID.name, rs=range(0, 3), ls=range(0, 3 << 16, 1 << 16), jobs=1)
    assert [(c.R, c.L) for c in cells[:3]] == [(0, 0), (0, 1 << 16), (0, 2 << 16)]
    assert {c.verdict for c in cells if c.R == 0} == {INVALID}
    assert all("rounds = 0" in c.reason for c in cells if c.R == 0)
    ok = [c for c in cells if c.R > 0]
    assert {c.verdict for c in ok} == {FINISHES} and all(c.agree for c in ok)
    by = {(c.R, c.L): c.time_ns for c in ok}
    assert by[(2, 0)] > by[(1, 0)] and by[(1, 2 << 16)] > by[(1, 0)]  # more rounds, more bytes


def test_no_axes_no_map_and_unknown_fields_are_named(h200) -> None:
    with pytest.raises(InvalidInput, match="pingpong defines no sweep axes"):
        sweep(h200, kernel="pingpong", jobs=1)
    with pytest.raises(InvalidInput, match=r"not a configuration field of k1: \['nw_frist'\]"):
        sweep(h200, nw_frist=True, jobs=1)


def test_the_map_does_not_depend_on_jobs(h200) -> None:
    """Shared among worker processes, the map is the serial one, cell for cell: K1 on the
    H200 over R 1..8 x L 1..2 (every verdict: finishes, deadlocks, invalid), and a kernel
    a test module registered (the workers import that module again)."""
    serial = sweep(h200, ls=range(1, 3), jobs=1)
    assert {c.verdict for c in serial} == {FINISHES, DEADLOCK, INVALID}
    assert sweep(h200, ls=range(1, 3), jobs=2) == serial
    grid = {"kernel": GRID.name, "rs": range(1, 3), "ls": range(0, 2 << 16, 1 << 16)}
    assert sweep(h200, jobs=2, **grid) == sweep(h200, jobs=1, **grid)


@pytest.mark.parametrize("shape", [(2, 4), (3, 3), (4, 2), (4, 4)])
def test_the_h200_as_we_ship_k1_finishes_where_its_traces_did(shape: tuple[int, int]) -> None:
    # 2x4, 4x2 and 4x4 are bundled H200 traces that finished 256 / 256; the stock costs
    # (the seed's build) mapped them deadlocked or invalid
    from kda_sim.checks.sweep import sweep_cell
    from kda_sim.machine.profile import load_profile

    cell = sweep_cell(load_profile("h200"), *shape)
    assert cell.verdict == FINISHES and cell.agree, (shape, cell.reason)
    assert sweep_cell(load_profile("h200-stock"), *shape).verdict != FINISHES


@pytest.mark.parametrize("shape", [(2, 4), (4, 2), (4, 4)])
def test_the_h100_as_we_ship_k1_finishes_where_its_traces_did(shape: tuple[int, int]) -> None:
    # bundled H100 traces of these shapes finished 256 / 256 (traces/k1_h100_*); the stock
    # costs on the H100 (the seed's build) map them deadlocked or invalid, as on the H200
    from kda_sim.checks.sweep import sweep_cell
    from kda_sim.machine.profile import load_profile

    cell = sweep_cell(load_profile("h100"), *shape)
    assert cell.verdict == FINISHES and cell.agree, (shape, cell.reason)
    assert sweep_cell(load_profile("h100-stock"), *shape).verdict != FINISHES


def test_a_sweep_leaves_the_protocol_caches_as_it_found_them(h200) -> None:
    """Each cell's protocol, hand-off table and wait graph are dropped after it (no other
    cell asks for them); what was cached before the sweep stays."""
    from kda_sim.checks.waitgraph import _base
    from kda_sim.kernels.k1.program import build_launch
    from kda_sim.kernels.registry import get
    from kda_sim.protocol.handoffs import handoffs_of

    spec = get("k1")
    kept = spec.validate(spec.config_from_dict({"R": 1, "L": 1}))
    handoffs_of(kept)
    caches = (build_launch, handoffs_of, _base)
    before = [set(m.cached()) for m in caches]
    cells = sweep(h200, rs=range(1, 3), ls=range(1, 3), jobs=1)
    assert len(cells) == 4 and all(c.verdict == FINISHES for c in cells)
    assert [set(m.cached()) for m in caches] == before  # another test's may fill them
    assert (kept,) in handoffs_of.cached()


class _Sized:
    """A kernel's spec as shape_cost reads it: validate, config_from_dict, launch_size."""

    name = "sized"

    def __init__(self, launch_size) -> None:
        self.launch_size = launch_size

    def config_from_dict(self, d: dict) -> dict:
        return d

    def validate(self, cfg: dict) -> dict:
        if cfg["R"] * cfg["L"] > 6:
            raise InvalidInput("too big", what="R")
        return cfg


def test_the_shapes_cost_their_launch_s_ops_and_a_refused_one_nothing() -> None:
    from kda_sim.checks.sweep import shape_cost
    from kda_sim.kernels.registry import get

    k1 = get("k1")
    fields = {"nb": 8, "kda0": 0}
    # K1: R = 8 L = 1 has more ops than R = 4 L = 4 (its cell costs more; R * L says less)
    assert shape_cost(k1, "R", "L", fields, (8, 1)) > shape_cost(k1, "R", "L", fields, (4, 4))
    assert shape_cost(k1, "R", "L", fields, (8, 4)) == 0.0  # refused: S = 32
    sized = _Sized(lambda cfg: (100 * cfg["R"] + cfg["L"], ("R",)))
    assert shape_cost(sized, "R", "L", {}, (3, 2)) == 302.0
    assert shape_cost(sized, "R", "L", {}, (3, 3)) == 0.0
    sized.launch_size = None  # no hook: the product of the axes
    assert shape_cost(sized, "R", "L", {}, (3, 2)) == 6.0

    def broken(cfg: dict) -> tuple[int, tuple[str, ...]]:
        raise ZeroDivisionError("a kernel file's bug")

    sized.launch_size = broken  # the cell will say so; the order falls back to R * L
    assert shape_cost(sized, "R", "L", {}, (2, 2)) == 4.0
