"""K1's attn CTAs: each CTA's put cells, flag and x row as the cell formulas give them.
``attn_program`` moves CTA 0's by ``a`` steps (the formulas are affine in ``a``); these
tests hold every CTA's against the formulas themselves, so a formula that stops being
affine fails here, not in a launch's hand-offs."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.k1.attn import part_index
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import NA
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.ops import Publish, Put, Store


@pytest.mark.parametrize(
    "cfg",
    [
        LaunchConfig(1, 1),
        LaunchConfig(4, 2),
        LaunchConfig(2, 3),  # S = 6: a PART row of tokens that is not a power of two
        LaunchConfig(4, 4, gate_local=True),
        LaunchConfig(2, 2, nw_first=True),
    ],
    ids=repr,
)
def test_every_attn_ctas_cells_are_the_formulas(cfg: LaunchConfig) -> None:
    launch = build_launch(cfg)
    space, s, ns = launch.space, cfg.S, cfg.NS
    tok, pairs = np.arange(s)[:, None], np.arange(ns * 2)[None, :]
    for a in range(NA):
        ops = launch.programs[a].ops
        puts = {op.region: op.cells for op in ops if isinstance(op, Put)}
        part = space.gid(Region.PART, part_index(a, tok, pairs, cfg).ravel())
        np.testing.assert_array_equal(puts[Region.PART], part)
        msq = space.gid(Region.MSQ, a * s + np.arange(s))
        np.testing.assert_array_equal(puts[Region.MSQ], msq)
        (flag,) = (op for op in ops if isinstance(op, Publish))
        np.testing.assert_array_equal(flag.cells, space.gid(Region.XRDY, np.array([a])))
        (x,) = (op for op in ops if isinstance(op, Store) and op.what == "x")
        assert tuple(x.cells) == (int(space.gid(Region.X, a)),)
