"""Which pairs a K1 launch puts and polls (its tag check's footprint): the extents-based
footprint against the programs, its step model and the readers it names."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from kda_sim.checks.tags.analysis import Policy, analyse
from kda_sim.checks.tags.footprint import Layout
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig, parse_shapes
from kda_sim.kernels.k1.footprint import (
    K1Pairs,
    footprint,
    footprint_from_handoffs,
    k1_step_model,
    locate,
    max_extents,
)
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import Region, extents
from kda_sim.kernels.k1.tags import STEP_TAG
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Begin, Poll


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


READER = re.compile(r"CTA (\d+) in ([\w.]+)(?:, task (\d+))?$")


@pytest.mark.parametrize(
    ("shapes", "nbs", "base"),
    [
        # the first scenario is read by a kda task (PROJ) / by the gate's or mix's PART poll
        (((1, 1), (2, 2)), (1, 8), LaunchConfig(1, 1)),
        (((1, 1), (2, 2)), (1, 8), LaunchConfig(1, 1, kda0=5)),
        (((1, 1), (2, 2)), (1, 8), LaunchConfig(1, 1, kda0=200)),
        (((4, 1), (1, 1)), (8,), LaunchConfig(1, 1)),
        (((4, 1), (1, 1)), (8,), LaunchConfig(1, 1, gate_local=True)),
    ],
)
def test_the_reader_named_is_the_one_the_launch_programs_have_poll(
    shapes: tuple[tuple[int, int], ...], nbs: tuple[int, ...], base: LaunchConfig
) -> None:
    m = k1_step_model(shapes, nbs, base=base)
    v = analyse(m, replace(STEP_TAG, slot_term=len(nbs) == 1), Policy.NEVER_ZEROED)
    sc = v.shortest
    assert sc is not None
    got = READER.match(sc.reader)
    assert got is not None, sc.reader
    cta, stage = int(got[1]), got[2]
    a = m.shapes.index(sc.reader_shape)
    assert isinstance(m.names, K1Pairs)
    cfg = m.names.config(a, sc.reader_slot)
    assert (cfg.kda0, cfg.gate_local) == (base.kda0, base.gate_local)
    launch = build_launch(cfg)
    region, index = locate(int(m.rep[sc.cls]), cfg, Layout.FIXED)
    gid = int(launch.space.gid(region, index))
    polls, now = [], "start"
    for op in launch.programs[cta].ops:
        if isinstance(op, Begin):
            now = op.stage
        elif isinstance(op, Poll) and gid in op.cells:
            polls.append(now)
    assert stage in polls, (sc.reader, polls)


def test_kda0_and_gate_local_move_the_reader() -> None:
    def reader(shapes: tuple[tuple[int, int], ...], nbs: tuple[int, ...], **kw: object) -> str:
        m = k1_step_model(shapes, nbs, base=kw or None)
        sc = analyse(m, replace(STEP_TAG, slot_term=len(nbs) == 1), Policy.NEVER_ZEROED).shortest
        assert sc is not None
        return sc.reader

    assert reader(((1, 1), (2, 2)), (1, 8)) == "CTA 0 in k.gates, task 0"
    assert reader(((1, 1), (2, 2)), (1, 8), kda0=5) == "CTA 5 in k.gates, task 0"
    assert reader(((4, 1), (1, 1)), (8,)) == "CTA 0 in gate"
    assert reader(((4, 1), (1, 1)), (8,), gate_local=True) == "CTA 0 in mix"
    # work taken from a ticket counter has no CTA placed to run it
    assert reader(((1, 1), (2, 2)), (1, 8), kda_tickets=True) == (
        "whichever CTA takes its ticket in k.gates, task 0"
    )
