"""The benchmark figure: drawn from a GPU result of the bench's form (made here, as
``bench/kernel_bench.py`` writes one), and a file that is not one is refused with a
message naming it (nothing written)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from bench import plot_kernel_bench as P


def bench_result(path: Path) -> Path:
    """Two shapes, every series (one absent at the second, as a bench may leave it)."""
    rows = [
        {"R": 1, "L": 1, "bound_us": 19.2, **{k: 40.0 + i for i, (k, _, _) in enumerate(P.SERIES)}},
        {"R": 4, "L": 4, "bound_us": 24.0, **{k: 80.0 + i for i, (k, _, _) in enumerate(P.SERIES)}},
    ]
    del rows[1]["traced_us"]
    path.write_text(json.dumps({"env": {"gpu": "NVIDIA H200"}, "rows": rows}))
    return path


def test_draws_a_bench_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    bench = bench_result(tmp_path / "kernel_bench.json")
    out = tmp_path / "k.png"
    monkeypatch.setattr(sys, "argv", ["plot", str(bench), "--out", str(out)])
    assert P.main() == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    monkeypatch.setattr(sys, "argv", ["plot", str(bench)])  # the figure beside the result
    assert P.main() == 0
    assert (tmp_path / "kernel_bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_refuses_what_is_not_a_bench_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"rows": []}')
    monkeypatch.setattr(sys, "argv", ["plot", str(bad)])
    assert P.main() == 2
    assert "x.json: not a kernel_bench result" in capsys.readouterr().err
    assert not bad.with_suffix(".png").exists()
