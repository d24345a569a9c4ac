"""kda_kernel.triton.run's requests checked before any GPU is needed."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kda_kernel.triton.run import run


def test_a_trace_file_needs_the_full_record(tmp_path) -> None:
    out = tmp_path / "t.json"
    with pytest.raises(ValueError, match="trace_level = 2: a trace file needs the full record"):
        run(1, 1, trace_path=out, build={"trace_level": 2})
    assert not out.exists()


def test_an_unknown_fault_is_named() -> None:
    with pytest.raises(ValueError, match="inject must be one of"):
        run(1, 1, inject="flood")


@pytest.mark.parametrize("kw", [{"warmup": -1}, {"warmup": 2, "graph": True}])
def test_a_warmup_is_eager_steps_before_the_measured_one(kw: dict) -> None:
    with pytest.raises(ValueError, match="warmup: eager steps >= 0"):
        run(1, 1, **kw)
