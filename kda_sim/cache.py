"""A cache of what the product can make again, outside the working tree.

Simulated counterparts of measured traces are not committed: they are made on demand and
kept here, under ``$KDA_SIM_CACHE``, else ``$XDG_CACHE_HOME/kda-sim``, else
``~/.cache/kda-sim``. An entry's key names everything it was made from (the input's
checksum, the GPU profile, the code: :func:`code_version`), so a stale entry is never
found; deleting the folder is always safe.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Callable
from functools import cache
from importlib import metadata
from pathlib import Path

ENV = "KDA_SIM_CACHE"


def cache_dir() -> Path:
    env = os.environ.get(ENV)
    if env:
        return Path(env)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "kda-sim"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


@cache
def code_version() -> str:
    """The installed version and a checksum of this package's Python sources: any change
    to the code that makes an entry makes new keys."""
    try:
        version = metadata.version("kda-sim")
    except metadata.PackageNotFoundError:
        version = "0"
    h = hashlib.sha256()
    root = Path(__file__).resolve().parent
    for p in sorted(root.rglob("*.py")):
        h.update(p.relative_to(root).as_posix().encode())
        h.update(p.read_bytes())
    return f"{version}-{h.hexdigest()[:16]}"


def key(*parts: object) -> str:
    """A checksum of ``parts`` (strings, numbers, JSON-able dicts), the code's version with
    them."""
    text = json.dumps([code_version(), *parts], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def cached_file(kind: str, entry: str, make: Callable[[Path], None]) -> Path:
    """The cached file ``kind/entry``, made by ``make(path)`` when absent.

    ``make`` writes a temporary file that then takes the entry's name in one step, so a
    reader never sees half an entry. Where the cache folder cannot be written, the file
    is made in a fresh temporary folder instead (and not kept)."""
    path = cache_dir() / kind / entry
    if path.is_file():
        return path
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{entry}.", suffix=".tmp")
        os.close(fd)
    except OSError:
        path = Path(tempfile.mkdtemp(prefix="kda-sim-")) / entry
        make(path)
        return path
    try:
        make(Path(tmp))
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return path
