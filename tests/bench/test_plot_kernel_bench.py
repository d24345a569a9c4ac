"""The benchmark figure: drawn from the committed GPU result, and a file that is not one
is refused with a message naming it (nothing written)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench import plot_kernel_bench as P

BENCH = Path(__file__).resolve().parents[2] / "docs/measurements/kernel_bench.json"


def test_draws_the_committed_result(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "k.png"
    monkeypatch.setattr(sys, "argv", ["plot", str(BENCH), "--out", str(out)])
    assert P.main() == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_refuses_what_is_not_a_bench_result(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "x.json"
    bad.write_text('{"rows": []}')
    monkeypatch.setattr(sys, "argv", ["plot", str(bad)])
    assert P.main() == 2
    assert "x.json: not a kernel_bench result" in capsys.readouterr().err
    assert not bad.with_suffix(".png").exists()
