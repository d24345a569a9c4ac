"""Which pairs a launch puts and polls: the extents-based footprint against the programs."""

from __future__ import annotations

import pytest

from kda_sim.checks.tags.footprint import (
    Layout,
    footprint,
    footprint_from_handoffs,
    k1_step_model,
    locate,
    max_extents,
)
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig, parse_shapes
from kda_sim.kernels.k1.regions import Region, extents
from kda_sim.protocol.handoffs import handoffs_of


@pytest.mark.parametrize(
    "cfg",
    [
        LaunchConfig(1, 1, 1),
        LaunchConfig(2, 2, 8),
        LaunchConfig(3, 1, 4),
        LaunchConfig(1, 4, 2),
        LaunchConfig(1, 1, 3, gate_local=True),
        LaunchConfig(2, 3, 8, kda0=77),
    ],
)
@pytest.mark.parametrize("layout", list(Layout))
def test_footprint_is_what_the_programs_put_and_poll(cfg: LaunchConfig, layout: Layout) -> None:
    assert footprint(cfg, layout) == footprint_from_handoffs(handoffs_of(cfg), layout)


def test_fixed_layout_holds_every_valid_launch() -> None:
    big = max_extents()
    for cfg in (LaunchConfig(16, 1, 8), LaunchConfig(1, 16, 30), LaunchConfig(4, 4, 8)):
        cfg.validate()
        for r, n in extents(cfg).items():
            if r in big:
                assert n <= big[r]
    # regions keep their place whatever the shape: PROJ[0] is one address for every shape
    a = footprint(LaunchConfig(1, 1, 1))[0]
    b = footprint(LaunchConfig(8, 1, 8))[0]
    assert locate(a[0][0], LaunchConfig(1, 1, 1), Layout.FIXED) == (Region.PART, 0)
    assert b[0][0] == a[0][0]


def test_step_model_classes_cover_the_footprints() -> None:
    m = k1_step_model(((8, 1), (1, 1)), (1, 8))
    assert m.writes.shape == (2, 2, m.classes)
    big = footprint(LaunchConfig(8, 1, 8))[0]
    assert m.sizes[m.writes[0, 1]].sum() == sum(hi - lo for lo, hi in big)
    # the 8x1 step writes pairs the 1x1 step leaves alone
    assert (m.writes[0].any(0) & ~m.writes[1].any(0)).any()


def test_shapes_parse_and_invalid_ones_are_named() -> None:
    assert parse_shapes("8x1, 1x1,8x1") == ((8, 1), (1, 1))
    with pytest.raises(InvalidInput, match="8y1"):
        parse_shapes("8y1")
    with pytest.raises(InvalidInput, match="20x1"):
        k1_step_model(((20, 1),), (8,))
