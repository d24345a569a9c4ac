"""The kernel author's helpers in kda_sim.kernels.spec."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.fuser_gridsync import FuserSyncConfig
from kda_sim.kernels.examples.pingpong import PingPongConfig, launch_size
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import MAX_LAUNCH_OPS, check_launch_size, require_at_least


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


def test_a_launch_past_the_ops_bound_is_refused_before_it_is_built(capsys) -> None:
    spec = get("pingpong")
    rounds = MAX_LAUNCH_OPS // 10  # ten ops a round: the bound itself is allowed
    assert launch_size(PingPongConfig(rounds=2))[0] == sum(
        len(p.ops) for p in spec.build(PingPongConfig(rounds=2)).programs
    )  # the estimate is the count build makes
    spec.validate(PingPongConfig(rounds=rounds))
    with pytest.raises(InvalidInput, match=r"rounds = 100001: .*past the bound of 1,000,000"):
        spec.build(PingPongConfig(rounds=rounds + 1))
    argv = ["check", "--kernel", "pingpong", "--gpu", "h200", "--rounds", "10000000"]
    assert main(argv) == 2
    assert "rounds = 10000000: a launch of about 100,000,000 ops" in capsys.readouterr().err


def test_without_a_size_hook_the_bound_applies_to_the_cells() -> None:
    big = {"VAL": MAX_LAUNCH_OPS + 1}
    spec = replace(get("pingpong"), launch_size=None, regions_fn=lambda cfg: big)
    with pytest.raises(InvalidInput, match=r"region VAL: 1,000,001\), past the bound") as e:
        check_launch_size(spec, PingPongConfig())
    assert e.value.what == "region VAL"
    check_launch_size(replace(spec, regions_fn=lambda cfg: {"VAL": MAX_LAUNCH_OPS}), None)
