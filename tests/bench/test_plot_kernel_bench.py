"""The benchmark figure: drawn from a kernel_bench result given as an argument, an existing
figure kept without --force, and a file that is not a result refused with a message naming
it (nothing written)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import plot_kernel_bench as P


def _result(tmp_path: Path) -> Path:
    row = {"R": 1, "L": 1, "bound_us": 19.3, "fused_us": 42.3, "traced_us": 42.7}
    row |= {"unfused_us": 263.8, "unfused_fla_us": 172.9, "in_proj_gemm_us": 26.5}
    path = tmp_path / "kernel_bench.json"
    path.write_text(json.dumps({"env": {"gpu": "NVIDIA H200"}, "rows": [row, {**row, "L": 2}]}))
    return path


def test_draws_a_result_and_keeps_an_existing_figure(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench = _result(tmp_path)
    assert P.main([str(bench)]) == 0
    png = bench.with_suffix(".png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    png.write_text("mine")
    assert P.main([str(bench)]) == 2
    assert png.read_text() == "mine" and "--force" in capsys.readouterr().err
    assert P.main([str(bench), "--force"]) == 0
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_refuses_what_is_not_a_bench_result(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"rows": []}')
    assert P.main([str(bad)]) == 2
    assert "x.json: not a kernel_bench result" in capsys.readouterr().err
    assert not bad.with_suffix(".png").exists()


def test_the_result_is_an_argument_not_a_committed_file() -> None:
    with pytest.raises(SystemExit) as e:
        P.main([])
    assert e.value.code == 2
