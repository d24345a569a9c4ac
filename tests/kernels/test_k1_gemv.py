"""The gemv CTAs' puts, moved from group 0's (``gemv.group_put``), equal the index
formula's for every group; a group past the gemv's is refused."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.kernels.k1 import gemv
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV_TASKS
from kda_sim.kernels.k1.regions import regions
from kda_sim.protocol.space import CellSpace


@pytest.mark.parametrize("cfg", [LaunchConfig(1, 1), LaunchConfig(3, 5)], ids=str)
def test_every_groups_put_equals_the_formula(cfg: LaunchConfig) -> None:
    space = CellSpace.from_sizes(regions(cfg))
    for rg in range(GEMV_TASKS):
        got, want = gemv.group_put(rg, cfg, space), gemv.proj_rows_put(rg, cfg, space)
        assert got.dtype == want.dtype and np.array_equal(got, want)
        assert got.flags.writeable  # a fresh array a put, as before
    with pytest.raises(IndexError, match="group"):
        gemv.group_put(GEMV_TASKS, cfg, space)
