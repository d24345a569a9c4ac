"""The unrolled ticket build's code share (kda_sim/kernels/k1/code_share.py): ns added to
each gemv group's cost and to each kda item's k.norm, apart at L = 1 and L >= 2."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.code_share import with_code_share
from kda_sim.machine import load_profile


def test_the_share_adds_to_a_group_and_an_item() -> None:
    base = load_profile("h200-k1")
    got = with_code_share(base, {"gemv_group": 300.0, "kda_item_l1": 500.0, "kda_item_l2": 900.0})
    for s in (1, 3, 4, 16):  # both gemv forms (FMA to S = 3, tensor cores above)
        assert got.cost("gemv", s) - base.cost("gemv", s) == pytest.approx(300.0)
    assert got.cost("k.norm", 1) - base.cost("k.norm", 1) == pytest.approx(500.0)
    for L in (2, 4):
        assert got.cost("k.norm", L) - base.cost("k.norm", L) == pytest.approx(900.0)
    assert all(got.costs[k] == base.costs[k] for k in base.costs if k not in ("gemv", "k.norm"))
    # none: every cost as it was (k.norm's L >= 2 form is its L = 1 one)
    zero = with_code_share(base, {})
    assert all(zero.cost(k, u) == base.cost(k, u) for k in base.costs for u in (1, 2, 4, 16))


def test_an_unknown_term_or_another_switch_is_refused() -> None:
    base = load_profile("h200-k1")
    with pytest.raises(InvalidInput, match=r"code share terms \['kda_item'\]"):
        with_code_share(base, {"kda_item": 1.0})
    odd = base.with_params(**{"above_k.norm": (3.0, 0.0, 0.0)})
    with pytest.raises(InvalidInput, match=r"k\.norm switches form above 3\.0 units"):
        with_code_share(odd, {"kda_item_l2": 1.0})
