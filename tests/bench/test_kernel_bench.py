"""The benchmark's shape list: "" asks for no full comparison (variants only)."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")


def test_shapes_parse_and_may_be_empty() -> None:
    from bench.kernel_bench import parse_shapes

    assert parse_shapes("1x1,2x4") == [(1, 1), (2, 4)]
    assert parse_shapes("") == []
