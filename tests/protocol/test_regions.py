"""Region extents and put counts follow the seed's index arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV_TASKS, HD, NA, NH, NPROJ, NVCH, ROWS, VCH
from kda_sim.kernels.k1.regions import Region, extents
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Publish, Put
from kda_sim.protocol.space import CellSpace

SHAPES = [
    LaunchConfig(1, 1),
    LaunchConfig(2, 2),
    LaunchConfig(4, 2),
    LaunchConfig(1, 4, nb=3),
    LaunchConfig(8, 1, nb=1),
    LaunchConfig(3, 3, kda0=17),
    LaunchConfig(2, 4, gate_local=True),
]


def puts_per_region(cfg: LaunchConfig) -> dict[Region, int]:
    ho = handoffs_of(cfg)
    out: dict[Region, int] = {}
    for prog in ho.launch.programs:
        for op in prog.ops:
            if isinstance(op, Put | Publish):
                out[op.region] = out.get(op.region, 0) + len(op.cells)
    return out


@pytest.mark.parametrize("cfg", SHAPES, ids=str)
def test_put_counts_match_the_seed(cfg: LaunchConfig) -> None:
    s, ns, r, L = cfg.S, cfg.NS, cfg.R, cfg.L
    expect = {
        Region.PART: NA * s * ns * 2,  # every slice: S tokens x NS sources x (sq, dot)
        Region.MSQ: NA * s,
        Region.XRDY: NA,
        Region.PROJ: s * GEMV_TASKS * ROWS,  # every row of every group, every token
        Region.QK: r * NH * 8 * L * 2 * VCH,  # a task puts its 16 q and 16 k channels a token
        Region.ONRM: r * NH * NVCH * L,
    }
    if not cfg.gate_local:
        expect[Region.WGT] = s * (ns + 1)  # NS weights and their sum, a token
    assert puts_per_region(cfg) == expect
    assert Region.WGT not in puts_per_region(cfg) or not cfg.gate_local


@pytest.mark.parametrize("cfg", SHAPES, ids=str)
def test_every_cell_of_a_mailbox_is_put_once(cfg: LaunchConfig) -> None:
    ho = handoffs_of(cfg)
    space = ho.launch.space
    ext = extents(cfg)
    for region in (Region.PART, Region.MSQ, Region.XRDY, Region.PROJ, Region.QK, Region.ONRM):
        lo = space.offsets[region]
        counts = ho.put_count[lo : lo + ext[region]]
        assert (counts == 1).all(), region.name
    wgt = ho.put_count[space.offsets[Region.WGT] : space.offsets[Region.WGT] + ext[Region.WGT]]
    assert (wgt == (0 if cfg.gate_local else 1)).all()


def test_cell_space_round_trip() -> None:
    cfg = LaunchConfig(2, 3)
    space = CellSpace.of(cfg)
    for region in Region:
        n = space.sizes[region]
        for idx in (0, n // 2, n - 1):
            assert space.split(int(space.gid(region, idx))) == (region, idx)
    with pytest.raises(IndexError):
        space.gid(Region.QK, space.sizes[Region.QK])


def test_proj_layout_is_the_seeds() -> None:
    cfg = LaunchConfig(1, 2)
    assert extents(cfg)[Region.PROJ] == 2 * NPROJ
    assert extents(cfg)[Region.QK] == NH * 2 * 2 * HD
    assert np.all(np.diff(CellSpace.of(cfg).offsets) > 0)


@pytest.mark.parametrize("align", [16, 64])
@pytest.mark.parametrize("cfg", SHAPES[:4], ids=str)
def test_aligned_space_keeps_each_region_on_lines_of_its_own(cfg: LaunchConfig, align: int) -> None:
    dense, space = CellSpace.of(cfg), CellSpace.of(cfg, align)
    assert space.sizes == dense.sizes
    ends = [o + n for o, n in zip(space.offsets, space.sizes, strict=True)]
    for region in Region:
        assert space.offsets[region] % align == 0, region.name
        if region > 0:  # no line holds the end of one region and the start of the next
            assert space.offsets[region] >= ends[region - 1]
            assert space.offsets[region] - ends[region - 1] < align
        for idx in (0, space.sizes[region] - 1):
            assert space.split(int(space.gid(region, idx))) == (region, idx)


def test_align_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="align = 0"):
        CellSpace.of(LaunchConfig(1, 1), 0)
