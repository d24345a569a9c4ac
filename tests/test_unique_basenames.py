"""pytest imports test files by basename (rootdir mode, no packages under tests/): two files
of one name collect as an error, so every test file's name is unique in the tree."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_every_test_file_name_is_unique() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
