"""The working tree stays small enough for the GPU machine, which copies it whole.

The device tool refuses a working tree over 64 MiB (tracked files and untracked ones git
does not ignore). Recorded traces and measurement archives grow it every session; this
fails first, with a margin, and names the largest files, so that a session moves
superseded archives to git history (docs/measurements/kernel_h200.md, "Files here")
before a GPU run is refused.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 56 * 2**20  # the device's 64 MiB, less a session's worth of new records


def _tracked() -> list[Path]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout
    return [ROOT / p for p in out.decode().split("\0") if p]


def test_the_working_tree_fits_the_gpu_machine_with_a_margin() -> None:
    sizes = sorted(((p.stat().st_size, p) for p in _tracked() if p.is_file()), reverse=True)
    total = sum(s for s, _ in sizes)
    largest = ", ".join(f"{p.relative_to(ROOT)} ({s / 2**20:.1f} MiB)" for s, p in sizes[:5])
    assert total < LIMIT, f"{total / 2**20:.1f} MiB tracked; the largest: {largest}"
