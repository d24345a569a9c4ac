"""Python's cyclic garbage collector paused while a launch is built, its hand-off table
derived or its simulation run.

Those steps allocate objects by the hundred thousand (K1 R=4 L=2: 20k ops and their
arrays, 14k SimPy events) and free almost all of them by reference counting, yet every
700 allocations the collector scans the young ones, and its older generations again and
again: the whole protocol, long-lived and cached, as it is promoted. On a K1 R=4 L=2
launch on mi355x (bench/README.md, "Cold start"), the collector took about half of the
hand-off table's time and a third of a warm launch's. Paused, it runs after the step,
over what the step left alive. A launch leaves no cyclic garbage to wait for it
(``gc.collect()`` after one finds none), and nothing a step computes depends on when the
collector runs (a weakref callback cleans a cache entry, never a result), so every
result is the same.

What a step leaves alive (a launch's timeline: some 12,000 records and their lists) is
not scanned when the pause ends: the objects the collector has not looked at yet are
moved to its oldest generation at once (``gc.freeze()`` then ``gc.unfreeze()``, which
moves the young generations to the permanent one and back to the oldest, in O(1), and
zeroes the young count), so the collection that the paused allocations would set off
at the next allocation (1.7 to 4 ms a K1 launch, a scan of every object the launch
left) is not made. Sound: no object is kept from the collector; it is merely next looked
at in a full collection, which the collector runs as ever (any cyclic garbage, the
step's or the caller's made just before it, waits for that one instead of a young
one, and a launch makes none). Nothing is frozen past the pause.
"""

from __future__ import annotations

import atexit
import functools
import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

P = ParamSpec("P")
R = TypeVar("R")


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The collector off inside, restored after; nested, the outer one decides (a check
    pauses over all its runs, each run over its own)."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        _promote()
        gc.enable()


def _promote() -> None:
    """Every object the collector has not scanned into its oldest generation, with no
    scan (the module's docstring says why this is sound). Not where the process froze
    objects itself (a pre-forking server does): ``unfreeze`` would thaw those too."""
    if gc.get_freeze_count():
        return
    gc.freeze()
    gc.unfreeze()


def gc_paused(fn: Callable[P, R]) -> Callable[P, R]:
    """``fn`` with the collector paused while it runs (left as it is where it is paused
    already: an outer step's pause holds)."""

    @functools.wraps(fn)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        with cyclic_gc_paused():
            return fn(*args, **kwargs)

    return run


_freeze_registered = False


def freeze_at_exit() -> None:
    """Freeze every object when the interpreter exits, before its finalization: the
    process's objects die with it, yet finalization runs the collector over all of them
    (after ``kda-sim sweep --gpu h200``, whose cached protocols leave 0.5 million tracked
    objects, the process took 0.4 s longer to end than an empty one; frozen, as long as
    one). Memory is returned with the process all the same. Registered once: a test
    session runs many commands in one process, and it too freezes at its exit only."""
    global _freeze_registered
    if not _freeze_registered:
        atexit.register(gc.freeze)
        _freeze_registered = True
