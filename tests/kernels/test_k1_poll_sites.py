"""K1's polls carry the Triton K1's poll sites (kernel/triton): the pairs each thread holds
and whether the loop sleeps between tries."""

from __future__ import annotations

import pytest

from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.protocol.ops import Begin, Poll


def _by_site(cfg: LaunchConfig) -> dict[tuple[str, str], set[tuple[int, bool, int]]]:
    """(stage, label) -> {(lanes, backoff, cells)} over the launch's polls."""
    out: dict[tuple[str, str], set[tuple[int, bool, int]]] = {}
    for prog in build_launch(cfg).programs:
        stage = ""
        for op in prog.ops:
            if isinstance(op, Begin):
                stage = op.stage
            elif isinstance(op, Poll):
                out.setdefault((stage, op.label), set()).add((op.lanes, op.backoff, len(op.cells)))
    return out


@pytest.mark.parametrize("L", [1, 2, 4])
def test_each_site_as_the_triton_k1_polls_it(L: int) -> None:
    got = _by_site(LaunchConfig(2, L))
    assert {(n, b) for n, b, _ in got[("gate", "PART")]} == {(8, False)}
    assert {(n, b) for n, b, _ in got[("mix", "WGT")]} == {(1, False)}
    assert {(n, b) for n, b, _ in got[("mix", "MSQ")]} == {(min(4 * L, 16) // 4, False)}
    assert {(n, b) for n, b, _ in got[("load_x", "XRDY")]} == {(1, True)}
    assert {(n, b) for n, b, _ in got[("k.conv", "PROJ")]} == {(1, True)}
    # k.gates' two PROJ polls: f_a (L HD cells and more, [16, HD] a CTA) and beta
    gates = {(n, b, c >= L * 128) for n, b, c in got[("k.gates", "PROJ")]}
    assert gates == {(8, True, True), (1, False, False)}
    assert {(n, b) for n, b, _ in got[("k.gates", "QK")]} == {(L, False)}
    assert {(n, b) for n, b, _ in got[("k.norm", "ONRM+PROJ")]} == {(1, False)}


def test_a_poll_with_pairs_left_out_keeps_its_site() -> None:
    prog = build_launch(LaunchConfig(1, 1)).programs[0]
    part = next(op for op in prog.ops if isinstance(op, Poll) and op.label == "PART")
    less = part.without(part.cells[:3])
    assert (less.lanes, less.backoff) == (sites.PART.lanes, sites.PART.backoff)
    assert len(less.cells) == len(part.cells) - 3
