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

import contextlib
import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

R = TypeVar("R")

_local = threading.local()  # .scopes: per thread, the open scopes' lists of entries made


def _scopes() -> list[list[tuple[Memo[Any], _Key]]]:
    scopes = getattr(_local, "scopes", None)
    if scopes is None:
        scopes = _local.scopes = []
    return scopes


class _Key(list):
    """A call's arguments, hashed once (as ``functools.lru_cache`` keys them): a launch
    configuration's hash is a Python ``__hash__`` over its fields, and K1's builders look
    their per-launch templates up a thousand times a launch."""

    __slots__ = ("hashvalue",)

    def __init__(self, args: tuple[Hashable, ...]) -> None:
        self[:] = args
        self.hashvalue = hash(args)

    def __hash__(self) -> int:  # type: ignore[override]
        return self.hashvalue


class Memo(Generic[R]):
    """``fn`` memoized on its positional arguments, the ``maxsize`` latest kept."""

    def __init__(self, fn: Callable[..., R], maxsize: int) -> None:
        self.fn = fn
        self.maxsize = maxsize
        self.entries: OrderedDict[_Key, R] = OrderedDict()
        # the latest call's arguments and value: K1's builders ask for one launch's
        # template a thousand times in a row, each time with the same objects (a tuple
        # compare by identity, where hashing a configuration took a microsecond); it is
        # the most recent entry, so the order of use is as a look-up leaves it
        self._last: tuple[tuple[Hashable, ...], R] | None = None
        # entries made in open transient scopes: beyond ``maxsize`` (they go when their
        # scope ends, and must not push out the entries that were there before it)
        self._transient = 0
        functools.update_wrapper(self, fn)

    def __call__(self, *args: Hashable) -> R:
        last = self._last
        if last is not None and last[0] == args:
            return last[1]
        key = _Key(args)
        entries = self.entries
        try:
            value = entries[key]
        except KeyError:
            pass
        else:
            # under the GIL each dict step is whole; another thread may drop it between
            with contextlib.suppress(KeyError):
                entries.move_to_end(key)
            self._last = (args, value)
            return value
        value = self.fn(*args)
        entries[key] = value
        scopes = _scopes()
        if scopes:  # dropped at the scope's end, and forgotten as the latest there too
            scopes[-1].append((self, key))
            self._transient += 1
        while len(entries) > self.maxsize + self._transient:
            with contextlib.suppress(KeyError):  # another thread's eviction came first
                entries.popitem(last=False)
        self._last = (args, value)
        return value

    def cached(self) -> list[tuple[Hashable, ...]]:
        """The arguments of the entries kept, the least recently used first."""
        return [tuple(k) for k in list(self.entries)]

    def cache_clear(self) -> None:
        self._last = None
        self.entries.clear()

    def __reduce__(self) -> str:  # pickled by name, as a function is
        return self.__qualname__


def memo(maxsize: int) -> Callable[[Callable[..., R]], Memo[R]]:
    """A decorator: :class:`Memo` of the function, keeping ``maxsize`` entries."""
    return lambda fn: Memo(fn, maxsize)


@contextmanager
def transient() -> Iterator[None]:
    """Entries a :class:`Memo` makes inside are dropped at the end (nested: each scope
    drops its own). Until then they are kept beyond its ``maxsize``: an entry made before
    the scope is not pushed out by one made inside, so a scope leaves the entries it found
    (a look-up inside still makes one the most recently used)."""
    made: list[tuple[Memo[Any], _Key]] = []
    scopes = _scopes()
    scopes.append(made)
    try:
        yield
    finally:
        scopes.pop()
        for m, key in made:
            m._last = None
            m._transient -= 1
            m.entries.pop(key, None)
