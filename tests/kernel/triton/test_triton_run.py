"""kda_kernel.triton.run's requests checked before any GPU is needed."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kda_kernel.triton.defaults import default_config
from kda_kernel.triton.run import run
from kda_sim.kernels.k1.config import LaunchConfig


def test_a_trace_file_needs_the_full_record(tmp_path) -> None:
    out = tmp_path / "t.json"
    with pytest.raises(ValueError, match="trace_level = 2: a trace file needs the full record"):
        run(default_config(1, 1), trace_path=out, build={"trace_level": 2})
    assert not out.exists()


def test_an_unknown_fault_is_named() -> None:
    with pytest.raises(ValueError, match="inject must be one of"):
        run(default_config(1, 1), inject="flood")


@pytest.mark.parametrize("kw", [{"warmup": -1}, {"warmup": 2, "graph": True}])
def test_a_warmup_is_eager_steps_before_the_measured_one(kw: dict) -> None:
    with pytest.raises(ValueError, match="warmup: eager steps >= 0"):
        run(default_config(1, 1), **kw)


def test_the_configuration_runs_as_given_or_is_refused_naming_the_field() -> None:
    """A plain LaunchConfig says onw_first = False (the seed's order), which the Triton K1
    does not build: refused before any GPU is needed, naming the field; a variant passed
    as a build option is refused too (the configuration says it)."""
    from kda_kernel.triton.launch import Unsupported

    with pytest.raises(Unsupported, match="onw_first") as e:
        run(LaunchConfig(1, 1))
    assert e.value.what == "onw_first"
    with pytest.raises(Unsupported, match="nw_first") as e:
        run(default_config(1, 1), build={"nw_first": False})
    assert e.value.what == "nw_first"
