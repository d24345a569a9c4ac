"""``docs/measurements.md`` indexes the measurement files git history keeps: every file it
lists is at the commit it names (the index's, or its section's: "These files are at commit
..."), with the size and sha256 it gives, and none is back in the working tree. Skipped
outside a git checkout or where a commit is absent (a shallow clone)."""

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
SECTION_COMMIT = re.compile(r"^These files are at commit `([0-9a-f]{7,40})`")


def rows() -> dict[str, dict[str, tuple[int, str]]]:
    """commit -> {path: (bytes, sha256)}: each row under the commit of its section, or of
    the index where its section names none."""
    text = INDEX.read_text()
    top = re.search(r"at commit `([0-9a-f]{7,40})`", text)
    assert top, "the index names the commit its files are at"
    out: dict[str, dict[str, tuple[int, str]]] = {}
    folder, commit = "docs/measurements/", top.group(1)
    for line in text.splitlines():
        if line.startswith("## "):
            folder = FOLDERS.get(line.strip(), "docs/measurements/")
            commit = top.group(1)
        if m := SECTION_COMMIT.match(line):
            commit = m.group(1)
        if m := ROW.match(line):
            out.setdefault(commit, {})[folder + m.group(1)] = (int(m.group(2)), m.group(3))
    return out


def _git(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["git", *args], cwd=ROOT, input=stdin, capture_output=True)


@pytest.fixture(scope="module")
def indexed() -> dict[str, dict[str, tuple[int, str]]]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    by_commit = rows()
    for commit in by_commit:
        if _git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            pytest.skip(f"commit {commit} is not in this clone (shallow?)")
    return by_commit


def _mismatches(commit: str, files: dict[str, tuple[int, str]]) -> list[str]:
    """The rows whose file is not at ``commit`` with the index's size and checksum."""
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
    return bad


def test_every_indexed_file_is_at_its_commit_with_its_checksum(indexed) -> None:
    files = {p for f in indexed.values() for p in f}
    assert len(files) > 300 and "docs/measurements/kernel_h200.md" in files
    assert "bench/compare_h200_fitted.json" in files and "traces/k1_h200_R1_L1_sim.json" in files
    assert len(indexed) >= 2, "the later runs' section names its own commit"
    bad = [b for commit, f in indexed.items() for b in _mismatches(commit, f)]
    assert not bad, "; ".join(bad[:10])


def test_no_indexed_file_is_back_in_the_tree(indexed) -> None:
    files = {p for f in indexed.values() for p in f}
    tracked = set(_git("ls-files", "docs", "bench", "traces").stdout.decode().split())
    assert not tracked & files, sorted(tracked & files)[:10]
