"""The cyclic garbage collector paused over a burst of allocation whose objects mostly
live on (a launch's events and records, a check's runs).

Each collection of the older generations walks every long-lived object (the programs'
ops, the hand-off tables, the runs kept so far): about a sixth of a K1 launch's time,
and the runs a check keeps made the later collections longer. Reference counting still
frees what is not in a cycle; what is (a few hundred objects a check) is collected once
the collector runs again. Nothing a run computes depends on when that happens."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """The collector off inside, restored after; nested, the outer one decides."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
