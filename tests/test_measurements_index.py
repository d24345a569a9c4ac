"""``docs/measurements.md`` indexes the measurement files git history keeps: every file it
lists is at the commit it names, with the size and sha256 it gives, and none is back in the
working tree. Skipped outside a git checkout or where that commit is absent (a shallow
clone)."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
INDEX = ROOT / "docs" / "measurements.md"
ROW = re.compile(r"^\| `([^`]+)` \| (\d+) \|.*\| `([0-9a-f]{64})` \|$")
FOLDERS = {"## Calibration reports": "bench/", "## Simulated counterparts": "traces/"}


def rows() -> tuple[str, dict[str, tuple[int, str]]]:
    """The commit the index names and path -> (bytes, sha256) for each row."""
    text = INDEX.read_text()
    commit = re.search(r"at commit `([0-9a-f]{7,40})`", text)
    assert commit, "the index names the commit its files are at"
    out, folder = {}, "docs/measurements/"
    for line in text.splitlines():
        if line.startswith("## "):
            folder = FOLDERS.get(line.strip(), "docs/measurements/")
        m = ROW.match(line)
        if m:
            out[folder + m.group(1)] = (int(m.group(2)), m.group(3))
    return commit.group(1), out


def _git(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, input=stdin, capture_output=True)


@pytest.fixture(scope="module")
def indexed() -> tuple[str, dict[str, tuple[int, str]]]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    commit, files = rows()
    if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone (shallow?)")
    return commit, files


def test_every_indexed_file_is_at_its_commit_with_its_checksum(indexed) -> None:
    commit, files = indexed
    assert len(files) > 300 and "docs/measurements/kernel_h200.md" in files
    assert "bench/compare_h200_fitted.json" in files and "traces/k1_h200_R1_L1_sim.json" in files
    names = "".join(f"{commit}:{p}\n" for p in files).encode()
    out = _git("cat-file", "--batch", stdin=names).stdout
    bad, pos = [], 0
    for path, (size, sha) in files.items():
        head_end = out.index(b"\n", pos)
        head = out[pos:head_end].decode()
        if head.endswith("missing"):
            bad.append(f"{path}: not at {commit}")
            pos = head_end + 1
            continue
        n = int(head.split()[2])
        blob = out[head_end + 1 : head_end + 1 + n]
        pos = head_end + 1 + n + 1
        if n != size or hashlib.sha256(blob).hexdigest() != sha:
            bad.append(f"{path}: {n} bytes, another checksum than the index's")
    assert not bad, "; ".join(bad[:10])


def test_no_indexed_file_is_back_in_the_tree(indexed) -> None:
    _, files = indexed
    tracked = set(_git("ls-files", "docs", "bench", "traces").stdout.decode().split())
    assert not tracked & set(files), sorted(tracked & set(files))[:10]
