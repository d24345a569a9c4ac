"""The warm-up's extra builds: every L asked, and at L = 1 both R = 1 and R > 1, which
compile apart (Build.TB), so a variant session compiles every build its shapes run."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")

from kda_kernel.triton.launch import Build
from kda_kernel.triton.warm import variant_specs


def test_every_l_and_both_tb_at_l_1() -> None:
    kws = [{}, {"maxnreg": 96}]
    got = variant_specs(kws, [1, 2, 4])
    # the builds scripts/device_spill_cost.sh compiled in run 101, for these two variants
    want = [(R, L, False, False, kw) for kw in kws for R, L in ((1, 1), (2, 1), (1, 2), (1, 4))]
    assert got == want


def test_the_r_2_build_at_l_1_is_the_tb_2_one() -> None:
    """What device_warm_spread.sh asked for with {"tb": 2} before: the same constexprs."""
    kw = {"trace": True}
    assert (2, 1, False, False, kw) in variant_specs([kw], [1])
    two = Build.default(2, 1, 8, **kw).constexprs()
    assert two == Build.default(1, 1, 8, **(kw | {"tb": 2})).constexprs()
    assert two != Build.default(1, 1, 8, **kw).constexprs()
