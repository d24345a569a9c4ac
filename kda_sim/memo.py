"""Memoized builders whose entries a :func:`transient` scope drops when it ends.

A launch's protocol, hand-off table and wait graph are kept (:func:`memo`, a
least-recently-used cache like ``functools.lru_cache``): a check, the app and a cached
benchmark ask for them again and again. A sweep asks for each shape's once, in one cell,
and keeping 25 shapes' kept their half a million objects alive: the collector scanned
each shape's after its cell (0.2 s of a K1 sweep's CPU) and the process held 300 MB.
Inside ``with transient():`` entries are made and found as always, and those made inside
are dropped at its end (an entry made before stays); nothing computed changes.

A scope belongs to its thread (the app's sessions run in threads of one process).
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

R = TypeVar("R")

_local = threading.local()  # .scopes: per thread, the open scopes' lists of entries made


def _scopes() -> list[list[tuple[Memo[Any], Hashable]]]:
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    return scopes


class Memo(Generic[R]):
    """``fn`` memoized on its positional arguments, the ``maxsize`` latest kept."""

    def __init__(self, fn: Callable[..., R], maxsize: int) -> None:
        self.fn = fn
        self.maxsize = maxsize
        self.entries: OrderedDict[Hashable, R] = OrderedDict()
        self._lock = threading.Lock()
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Hashable) -> R:
        entries = self.entries
        with self._lock:
            if args in entries:
                entries.move_to_end(args)
                return entries[args]
        value = self.fn(*args)
        with self._lock:
            entries[args] = value
            while len(entries) > self.maxsize:
                entries.popitem(last=False)
        scopes = _scopes()
        if scopes:
            scopes[-1].append((self, args))
        return value

    def cache_clear(self) -> None:
        with self._lock:
            self.entries.clear()

    def __reduce__(self) -> str:  # pickled by name, as a function is
        return self.__qualname__


def memo(maxsize: int) -> Callable[[Callable[..., R]], Memo[R]]:
    """A decorator: :class:`Memo` of the function, keeping ``maxsize`` entries."""
    return lambda fn: Memo(fn, maxsize)


@contextmanager
def transient() -> Iterator[None]:
    """Entries a :class:`Memo` makes inside are dropped at the end (nested: each scope
    drops its own)."""
    made: list[tuple[Memo[Any], Hashable]] = []
    scopes = _scopes()
    scopes.append(made)
    try:
        yield
    finally:
        scopes.pop()
        for m, args in made:
            with m._lock:
                m.entries.pop(args, None)
