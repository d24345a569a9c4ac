"""The kernel author's helpers in kda_sim.kernels.spec."""

from __future__ import annotations

import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.fuser_gridsync import FuserSyncConfig
from kda_sim.kernels.spec import require_at_least


def test_require_at_least_names_the_first_field_below_the_bound() -> None:
    require_at_least(FuserSyncConfig(blocks=1, syncs=1), "blocks", "syncs")
    with pytest.raises(InvalidInput, match=r"syncs = 0: at least 1") as e:
        require_at_least(FuserSyncConfig(blocks=1, syncs=0), "blocks", "syncs")
    assert e.value.what == "syncs"
    with pytest.raises(InvalidInput, match=r"blocks = 2: at least 3"):
        require_at_least(FuserSyncConfig(blocks=2), "blocks", lo=3)


def test_a_kernel_flag_below_its_bound_is_exit_2_naming_it(capsys) -> None:
    assert main(["check", "--kernel", "tilelang_gridsync", "--gpu", "h200", "--ctas", "0"]) == 2
    assert "ctas = 0: at least 1" in capsys.readouterr().err
