"""The tracked tree stays small: product code, the real traces, reference docs.

Measurement logs, archives and results live in git history (``docs/measurements.md``
indexes them) and simulated counterparts of traces are made on demand
(``kda-sim simulate --like``); a file that pushes the tree over the limit is named here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# bytes, as ``git ls-files -z | xargs -0 du -cb`` counts them (another kernel's real
# traces are kept gzipped: the grid barrier's six, 1.5 MB as JSON, are 88 kB)
LIMIT = 15 * 10**6


def tracked_sizes(root: Path) -> list[tuple[int, str]]:
    """(bytes, path) of every file git tracks under ``root``, largest first."""
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, check=False)
    if out.returncode != 0:
        pytest.skip(f"git ls-files failed: {out.stderr.decode().strip()}")
    sizes = []
    for name in out.stdout.decode().split("\0"):
        p = root / name
        if name and p.is_file():  # a file deleted in the working tree is not counted
            sizes.append((p.stat().st_size, name))
    return sorted(sizes, reverse=True)


def over_limit(sizes: list[tuple[int, str]], limit: int, show: int = 8) -> str | None:
    """None when the total is under ``limit``, else what to say: the total and the
    largest files."""
    total = sum(s for s, _ in sizes)
    if total < limit:
        return None
    largest = ", ".join(f"{name} ({s / 1e6:.2f} MB)" for s, name in sizes[:show])
    return (
        f"the tracked tree is {total / 1e6:.1f} MB, over {limit / 1e6:.0f} MB; "
        f"the largest files: {largest}"
    )


def test_the_tracked_tree_stays_under_the_limit() -> None:
    msg = over_limit(tracked_sizes(ROOT), LIMIT)
    assert msg is None, msg


def test_over_the_limit_names_the_largest_files() -> None:
    sizes = [(10 * 10**6, "traces/big.json"), (8 * 10**6, "docs/b.tgz"), (10, "a.py")]
    msg = over_limit(sizes, LIMIT)
    assert msg is not None
    assert "18.0 MB" in msg and "traces/big.json (10.00 MB)" in msg and "docs/b.tgz" in msg
    assert over_limit(sizes[1:], LIMIT) is None
