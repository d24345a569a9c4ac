"""The runs of bundled traces kept on disk, so a restarted server's first visitor is not
the one who reads the trace, simulates it and infers its producers.

An entry is a pickled :class:`~kda_sim.app.data.Run` under the product's cache folder
(:func:`kda_sim.cache.cache_dir`, never the working tree). Its name is a checksum of
everything the run is made from: the trace file's content, the run's name, the identity
of the GPU profile and costs its simulation ran (:func:`kda_sim.app.data.profile_id`)
and the code's version (:func:`kda_sim.cache.key`). A changed trace, profile or code
looks up another name, so a stale run is never found; an entry that does not load is
made again. The run read back equals the one made: a view cannot tell them apart.
Entries are unpickled: the cache folder is the user's own, trusted as their files are.
"""

from __future__ import annotations

import json
import logging
import os
import pickle
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kda_sim import cache

if TYPE_CHECKING:
    from kda_sim.app.data import Run

log = logging.getLogger(__name__)

RUNS = "app-runs"  # the cache folder's sub-folder of these entries
HEADS = "app-trace-heads"  # a trace's launch as the profile lookup needs it (small JSON)
IDENTITIES = "app-profile-ids"  # a profile's identity by the stamp of its files
PICTURES = "app-pictures"  # the timeline drawn as a PNG, by its run and what the view shows
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


@dataclass(frozen=True)
class Head:
    """What a trace says about where it ran: enough to pick and identify the profile its
    simulation runs on without reading the whole trace again."""

    gpu: str
    build: str | None  # the kernel build the trace records (Meta.measured_build)
    kernel: str


def head_of(digest: str, read: Callable[[], Head]) -> Head:
    """The head of the trace whose content has the checksum ``digest``: from the cache
    folder, else ``read()`` (then kept)."""
    path = cache.cache_dir() / HEADS / f"{cache.key('head', digest)}.json"
    try:
        obj = json.loads(path.read_text())
        return Head(str(obj["gpu"]), obj["build"], str(obj["kernel"]))
    except (OSError, ValueError, KeyError, TypeError):
        pass
    head = read()
    _write(path, json.dumps({"gpu": head.gpu, "build": head.build, "kernel": head.kernel}).encode())
    return head


def profile_identity(
    gpu: str, kernel: str, stamp: tuple[tuple[str, int, int], ...], load: Callable[[], str]
) -> str:
    """The identity of the profile ``gpu`` with ``kernel``'s costs while its files have
    ``stamp`` (each one's path, modification time and size): from the cache folder,
    else ``load()`` (then kept). Loading a profile to learn its identity is about 0.35 s
    of a restarted server's first visit (bench/README.md); a file changed since has
    another stamp, so the identity is loaded again. A failure (``error: ...``) is not
    kept: the next visit tries again."""
    path = cache.cache_dir() / IDENTITIES / f"{cache.key('profile', gpu, kernel, stamp)}.json"
    try:
        return str(json.loads(path.read_text())["identity"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    ident = load()
    if not ident.startswith("error:"):
        _write(path, json.dumps({"identity": ident}).encode())
    return ident


def run_entry(digest: str, name: str, kind: str, profile: str) -> Path:
    """Where the run of that trace content, name, kind and profile identity is kept."""
    return cache.cache_dir() / RUNS / f"{cache.key('run', digest, name, kind, profile)}.pickle"


def stored_run(path: Path, make: Callable[[], Run]) -> Run:
    """The run kept at ``path`` (a :func:`run_entry`), else ``make()``'s, then kept."""
    try:
        with path.open("rb") as f:
            run = pickle.load(f)
    except FileNotFoundError:
        run = None
    except Exception as e:  # a torn or foreign entry: made again and overwritten
        log.info("cached run %s does not load (%s): made again", path, e)
        run = None
    if run is not None and _is_run(run):
        return run
    run = make()
    _write(path, pickle.dumps(run, protocol=pickle.HIGHEST_PROTOCOL))
    return run


def picture_entry(run_key: str, view: str) -> Path:
    """Where the picture of the run ``run_key`` (a key that names the run's content: a
    bundled trace's, :func:`kda_sim.app.data.bundled_run`) as the view ``view`` (every
    choice the figure is drawn from) is kept."""
    return cache.cache_dir() / PICTURES / f"{cache.key('picture', run_key, view)}.png"


def stored_png(path: Path, make: Callable[[], bytes]) -> bytes:
    """The PNG kept at ``path`` (a :func:`picture_entry`), else ``make()``'s, then kept:
    a restarted server's first visitor neither builds the figure nor draws it (about
    0.5 CPU seconds, and 0.4 s of matplotlib's import: bench/README.md)."""
    try:
        blob = path.read_bytes()
    except OSError:
        blob = b""
    if blob.startswith(PNG_MAGIC):
        return blob
    blob = make()
    _write(path, blob)
    return blob


def _is_run(obj: object) -> bool:
    from kda_sim.app.data import Run

    return isinstance(obj, Run)


def _write(path: Path, blob: bytes) -> None:
    """``blob`` as ``path`` in one step (a reader never sees half an entry); where the
    cache folder cannot be written, nothing is kept and the page still works."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        log.info("cache folder %s not writable (%s): the run is not kept", path.parent, e)
        return
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(blob)
        os.replace(tmp, path)
    except OSError as e:
        log.info("could not keep %s (%s)", path, e)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
