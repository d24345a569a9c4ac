"""Independent work shared among processes: a sweep's shapes, the dynamic checks' seeded
runs, a calibration's traces.

:class:`Workers` maps a function over items in ``jobs`` processes (this one and
``jobs - 1`` workers) and returns the results in the items' order, so a caller's result
does not depend on ``jobs`` (the simulation is deterministic: a seed, not the process,
decides its latencies). ``jobs=1`` runs everything in this process, with no pool. One
progress bar counts the items of every map a :class:`Workers` runs.

The workers are forked where that is safe (:func:`start_method`: Linux, and no thread in
this process but the main one): a fork costs milliseconds and the child has the parent's
protocol, hand-off tables and imports already, where a spawned worker pays an interpreter
start and its imports (about a second) before its first item. With any other thread
(tqdm's monitor, Streamlit's in the app, pytest-xdist's) a lock one of them held at the
fork would stay held in the child forever, and the child would hang: then they are
started with ``spawn``, a fresh interpreter that imports what it needs. The pool forks
all its workers at once, before its own manager thread starts (``ProcessPoolExecutor``
does not start forked workers on demand). A forked pool serves every later map of the
same function object (a search's evaluations), as its workers hold that function; a map
of another function ends it and forks its own. The parent's kernels beyond the
built-in ones (loaded from a ``.py`` file, or registered by a module) are loaded again in
each worker before it takes any item, so their names resolve and their configurations
unpickle there. As with any spawned worker, Python runs the parent's main module again
in it (as ``__mp_main__``) when the function it maps is the script's own: such a script
keeps its work under ``if __name__ == "__main__":``. A function of an imported module
needs nothing of the main module, and the workers start without it (the main module may
be no script at all: pytest-xdist's workers run a bootstrap file that cannot run twice).

Beyond one machine, ``jobs`` may be a :class:`kda_sim.cluster.Cluster` (``--cluster``):
the same map on the workers of a Dask cluster, through the same executor interface as the
process pool (:meth:`kda_sim.cluster.Cluster.pool`); every item then runs there.
"""

from __future__ import annotations

import contextlib
import importlib
import math
import os
import sys
import threading
import types
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self, TypeVar, Union

from kda_sim.errors import InvalidInput

if TYPE_CHECKING:  # imported only where --cluster is given: it needs the cluster extra
    from kda_sim.cluster import Cluster

T = TypeVar("T")
R = TypeVar("R")

MAX_JOBS = 1024  # a --jobs above this is a typo, not a machine
# the interpreter's switch interval while this process runs its own items beside its
# workers (Python's default: 5 ms); see _quick_switches
HANDOFF_SWITCH_S = 0.0002

# where a map runs: processes of this machine (None: the cores), or a cluster's workers
Jobs = Union[int, None, "Cluster"]  # a string member: the | form cannot hold it


def default_jobs() -> int:
    """The cores this process may run on (its CPU affinity where the OS has one, which
    a container or ``taskset`` narrows; else every core)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return os.cpu_count() or 1


def idle_jobs() -> int:
    """The cores idle over the last minute: :func:`default_jobs` less the 1-minute load
    average, rounded up, at least 1. A worker on a core that other work keeps busy made a
    check slower, not faster (bench/README.md, "A check's engine runs on workers"), while
    on an idle machine it takes a third off; this reads which of the two the machine is."""
    cores = default_jobs()
    try:
        load = os.getloadavg()[0]
    except OSError:  # the platform keeps no load average: assume the cores are free
        return cores
    return max(1, min(cores, math.ceil(cores - load)))


# the function a forked pool's workers call: set in this process before the pool forks, so
# a child has it without pickling it (with the launch it closes over) for every item
_FORKED_FN: Callable[[Any], Any] | None = None


def _forked_call(x: Any) -> Any:
    assert _FORKED_FN is not None
    return _FORKED_FN(x)


def start_method() -> str:
    """``fork`` on Linux while this process runs no thread but the main one, else
    ``spawn`` (the module docstring says why)."""
    if sys.platform.startswith("linux") and threading.active_count() == 1:
        return "fork"
    return "spawn"


def resolve_jobs(jobs: int | None) -> int:
    """``jobs`` as given (None: :func:`default_jobs`); fewer than 1 is refused."""
    if jobs is None:
        return default_jobs()
    if jobs < 1:
        raise InvalidInput(f"--jobs {jobs}: at least 1", what="jobs")
    if jobs > MAX_JOBS:
        raise InvalidInput(f"--jobs {jobs}: at most {MAX_JOBS}", what="jobs")
    return jobs


def prepare(
    kernels: tuple[tuple[Path, ...], tuple[str, ...]],
    initializer: Callable[..., None] | None,
    initargs: tuple[Any, ...],
) -> None:
    """A worker's start: the parent's kernels beyond the built-in ones (its kernel files
    loaded, the modules that registered the others imported), then the caller's
    initializer."""
    from kda_sim.kernels.registry import load_kernel

    files, modules = kernels
    # a kernel the parent loaded that no longer loads (its file removed or changed since,
    # a test's temporary one) is left out rather than killing the worker, which would
    # break the pool for every item; an item that needs it fails naming it
    for path in files:
        with contextlib.suppress(InvalidInput, OSError, ImportError, SyntaxError):
            load_kernel(path)
    for module in modules:
        with contextlib.suppress(ImportError):
            importlib.import_module(module)
    if initializer is not None:
        initializer(*initargs)


def _of_main(fn: Any) -> bool:
    """Whether ``fn`` (or the function a ``functools.partial`` wraps) is the main
    module's own."""
    while hasattr(fn, "func"):
        fn = fn.func
    return getattr(fn, "__module__", None) == "__main__"


@contextmanager
def main_hidden(hide: bool) -> Iterator[None]:
    """While workers start: the main module a bare one (no file, no spec), so a spawned
    worker does not run it again (see the module docstring)."""
    if not hide:
        yield
        return
    main = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = main


class _Switches:
    """The open :func:`_quick_switches` scopes of this process, and the interval before
    the first of them."""

    lock = threading.Lock()
    depth = 0
    saved = 0.005


@contextmanager
def _quick_switches() -> Iterator[None]:
    """The GIL handed to a waiting thread after :data:`HANDOFF_SWITCH_S`, not 5 ms, while
    this process runs its items: the pool's manager thread, which hands a worker its
    items, and the call queue's feeder, which sends them, each waited up to 5 ms for this
    process's own item (a launch holding the GIL) before the worker got its first one.
    A calibration's worker started each of its 150 evaluations 8.8 ms (median) after the
    last one's end; 1.3 ms so (bench/README.md, issue 40). A thread that wants no GIL
    costs nothing either way. Nested, or in several threads at once, the interval from
    before the first comes back when the last ends."""
    with _Switches.lock:
        if _Switches.depth == 0:
            _Switches.saved = sys.getswitchinterval()
            sys.setswitchinterval(HANDOFF_SWITCH_S)
        _Switches.depth += 1
    try:
        yield
    finally:
        with _Switches.lock:
            _Switches.depth -= 1
            if _Switches.depth == 0:
                sys.setswitchinterval(_Switches.saved)


class Closing:
    """A context manager whose exit is its ``close()`` (the workers end on exit)."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        _t: type[BaseException] | None,
        _e: BaseException | None,
        _tb: TracebackType | None,
    ) -> None:
        self.close()


class _Handout:
    """The items of one map, in ``order``, handed to a pool a few at a time: ``fill``
    gives it items from the front until ``ahead`` are out (a pool's workers + 1: one
    running in each worker, one queued), and each item's end gives it the next;
    :meth:`take` gives this process an item no worker holds: the next, where ``order``
    is by cost (``by_cost``: the costliest first, so that both processes end on the
    cheapest), else the last (the items' order says nothing of their cost; a caller
    that lists its costliest last, as a fit's evaluation does, has it run here while the
    workers take the others). Handed all at once, as ``ProcessPoolExecutor`` queues
    them, a worker held two queued items beyond its running one that no other process
    could take: in a map by cost this process, done, waited for the worker's last two
    (bench/README.md, "issue 40's sixth step"). A cluster's workers are given every item
    at once (``ahead``: all of them)."""

    def __init__(
        self,
        pool: Executor,
        call: Callable[[Any], Any],
        todo: list[Any],
        order: list[int],
        ahead: int,
        by_cost: bool,
    ) -> None:
        self.pool: Executor | None = pool
        self.call, self.todo = call, todo
        self.left = deque(order)
        self.ahead, self.by_cost = ahead, by_cost
        self.out = 0  # handed to the pool and not ended
        self.futs: dict[int, Future[Any]] = {}
        # shared by this thread and the pool's, which runs an item's end; reentrant: an
        # item may end as it is handed out (its callback then runs in fill)
        self.lock = threading.RLock()

    def fill(self) -> None:
        """Hand items to the pool until ``ahead`` are out."""
        with self.lock:
            while self.out < self.ahead and self.left and self.pool is not None:
                i = self.left.popleft()
                try:
                    f = self.pool.submit(self.call, self.todo[i])
                except BaseException as e:  # a broken or closed pool: the item fails
                    failed: Future[Any] = Future()
                    failed.set_exception(e)
                    self.futs[i] = failed
                    continue
                self.futs[i] = f
                self.out += 1
                f.add_done_callback(self._ended)

    def _ended(self, f: Future[Any]) -> None:
        # in the pool's manager thread (or this one, where the item ended at once); a
        # cancelled item is the pool's end (close, an interrupt): nothing more to hand
        with self.lock:
            self.out -= 1
        if not f.cancelled():
            self.fill()

    def take(self) -> int | None:
        """An item not handed out, now this process's; None when none is left."""
        with self.lock:
            if not self.left:
                return None
            return self.left.popleft() if self.by_cost else self.left.pop()

    def done(self) -> list[int]:
        """The items handed out that have ended."""
        with self.lock:
            return [i for i, f in self.futs.items() if f.done()]

    def handed(self) -> dict[int, Future[Any]]:
        """Every item's future once none is left to take (each was handed out)."""
        with self.lock:
            self.left.clear()
            return dict(self.futs)

    def stop(self) -> None:
        """No more items handed out; those queued cancelled."""
        with self.lock:
            self.left.clear()
            futs = list(self.futs.values())
        for f in futs:
            f.cancel()

    def close(self) -> None:
        """Let go of the pool and the futures once the map is over: each future's
        callback holds this object, which held them and the pool, a cycle only the
        collector would free, keeping an unclosed pool's processes alive until then."""
        with self.lock:
            self.left.clear()
            self.futs = {}
            self.pool = None


class Workers(Closing):
    """A context manager: ``map(fn, items)`` in ``jobs`` processes, this one and
    ``jobs - 1`` workers (started at the first map that has more than one item, ended on
    exit), or, ``jobs`` a :class:`kda_sim.cluster.Cluster`, on its workers.
    ``initializer(*initargs)`` runs once in each process before its first item (data every
    item needs, sent to a worker once); ``finalizer(*finalargs)`` in each of a cluster's
    workers on exit (they outlive the map, unlike a pool's processes); ``progress``: draw
    the bar (default: when stderr is a terminal)."""

    def __init__(
        self,
        jobs: Jobs = 1,
        *,
        desc: str = "",
        progress: bool | None = None,
        initializer: Callable[..., None] | None = None,
        initargs: tuple[Any, ...] = (),
        finalizer: Callable[..., None] | None = None,
        finalargs: tuple[Any, ...] = (),
    ) -> None:
        self.cluster: Cluster | None = None
        if jobs is None or isinstance(jobs, int):
            self.jobs = resolve_jobs(jobs)
        else:
            self.cluster = jobs
            self.jobs = jobs.slots
        self.desc = desc
        self.progress = sys.stderr.isatty() if progress is None else progress
        self._init = (initializer, initargs)
        self._final = (finalizer, finalargs)
        self._initialized = initializer is None
        self._pool: Executor | None = None
        # the pool forked for a map, kept for the next map of the same function (its
        # workers have that function and the initializer's work): (function, pool)
        self._forked: tuple[Callable[..., Any], ProcessPoolExecutor] | None = None
        self._bar: Any = None

    @property
    def in_process(self) -> bool:
        """Whether every item runs in this process (one job, no cluster)."""
        return self.cluster is None and self.jobs == 1

    def map(
        self,
        fn: Callable[[T], R],
        items: Iterable[T],
        *,
        cost: Callable[[T], float] | None = None,
        here: Collection[int] = (),
    ) -> list[R]:
        """``[fn(x) for x in items]``; for the workers, ``fn`` and the items must pickle
        (a module-level function, or a ``functools.partial`` of one). ``cost``: the items
        handed out the largest first, so that no process is left with a long one at the
        end. ``here``: the indexes of items this process runs itself, first (a result the
        caller needs as this process made it, not as it pickles), whatever ``jobs``."""
        todo = list(items)
        self._count(len(todo))
        order = [i for i in range(len(todo)) if i not in here]
        if self.in_process or (self.cluster is None and len(todo) <= 1) or not order:
            return [self._here(fn, x) for x in todo]
        if cost is not None:
            order.sort(key=lambda i: -cost(todo[i]))
        if self._forked is not None and self._forked[0] is not fn:
            # its workers hold another function; ended before start_method looks, as its
            # manager thread would read as a thread the next fork could not survive
            self._end_forked()
        if self._forked is not None or (self.cluster is None and start_method() == "fork"):
            return self._forked_map(fn, todo, order, here, cost is not None)
        n = max(1, len(order) - (0 if here else 1))
        pool = self._start(n)
        # the pool starts its workers as items are submitted (spawn: on demand), the
        # first of them here, the rest as the workers' items end (_Handout)
        # (a cluster's workers all at once: each round trip crosses a network)
        ahead = len(order) if self.cluster is not None else min(self.jobs - 1, n) + 1
        feed = _Handout(pool, fn, todo, order, ahead, cost is not None)
        with main_hidden(not _of_main(fn)):
            feed.fill()
        return self._collect(fn, todo, feed, here)

    def _forked_map(
        self,
        fn: Callable[[T], R],
        todo: list[T],
        order: list[int],
        here: Collection[int],
        by_cost: bool,
    ) -> list[R]:
        """The map on workers forked with ``fn``: they have it (and this process's
        initializer's work) already, so only the items and results cross. The pool stays
        for the next map of the same ``fn`` object (a search's evaluations: one fork for
        the whole search, not one an evaluation, each paying for the page tables of a
        large process) and ends at the first map of another function, or on exit. A
        caller that maps one function again promises that nothing its workers need has
        changed in this process since they were forked (a new function, a new pool)."""
        if self._forked is None:
            self._forked = (fn, self._fork(fn, max(1, len(order) - (0 if here else 1))))
        pool = self._forked[1]
        try:
            ahead = min(self.jobs - 1, max(1, len(order) - (0 if here else 1))) + 1
            feed = _Handout(pool, _forked_call, todo, order, ahead, by_cost)
            feed.fill()
            return self._collect(fn, todo, feed, here)
        except BaseException:
            self._end_forked()  # a broken or interrupted pool is not reused
            raise

    def _fork(self, fn: Callable[..., Any], n: int) -> ProcessPoolExecutor:
        """``jobs - 1`` workers (no more than ``n``, the items they can get) forked with
        ``fn``, this process's initializer run here first, once (the children have its
        work)."""
        global _FORKED_FN
        if not self._initialized:
            initializer, initargs = self._init
            assert initializer is not None
            initializer(*initargs)
            self._initialized = True
        pool = ProcessPoolExecutor(min(self.jobs - 1, n), mp_context=get_context("fork"))
        _FORKED_FN = fn
        try:
            # a fork pool starts every worker at its first submit: a no-op item here,
            # so the children are forked while ``_FORKED_FN`` is ``fn``
            pool.submit(int).result()
        except BaseException:
            pool.shutdown(cancel_futures=True)
            raise
        finally:
            _FORKED_FN = None
        return pool

    def _end_forked(self) -> None:
        if self._forked is not None:
            self._forked[1].shutdown(cancel_futures=True)
            self._forked = None

    def _collect(
        self, fn: Callable[[T], R], todo: list[T], feed: _Handout, here: Collection[int] = ()
    ) -> list[R]:
        """The results in the items' order: this process runs its own items (``here``),
        then takes the next item ``feed`` has not handed out, while the workers take
        theirs, until none is left (a cluster's workers take every item: this process
        may be a laptop driving many machines)."""
        out: dict[int, R] = {}
        ticked: set[int] = set()
        try:
            # this process's items hold the GIL, which the pool's threads need to hand
            # the workers theirs
            with _quick_switches():
                for i in here:
                    out[i] = self._here(fn, todo[i])
                    ticked.add(i)
                while self.cluster is None and (i := feed.take()) is not None:
                    out[i] = self._here(fn, todo[i])
                    ticked.add(i)
                    for k in feed.done():  # the workers' items done meanwhile
                        if k not in ticked:
                            ticked.add(k)
                            self._tick()
            futs = feed.handed()
            index = {f: k for k, f in futs.items() if k not in ticked}
            for f in as_completed(index):
                ticked.add(index[f])
                self._tick()
            return [out[i] if i in out else futs[i].result() for i in range(len(todo))]
        except BaseException:
            feed.stop()
            raise
        finally:
            feed.close()

    def _here(self, fn: Callable[[T], R], x: T) -> R:
        """One item in this process (its initializer run first, once)."""
        if not self._initialized:
            initializer, initargs = self._init
            assert initializer is not None
            initializer(*initargs)
            self._initialized = True
        y = fn(x)
        self._tick()
        return y

    def _start(self, n: int) -> Executor:
        """The pool of ``jobs - 1`` workers (no more than ``n``, the items they can get),
        or the cluster's."""
        if self._pool is None:
            from kda_sim.kernels.registry import sources

            initializer, initargs = self._init
            if self.cluster is not None:
                self._pool = self.cluster.pool(sources(), initializer, initargs, *self._final)
            else:
                self._pool = ProcessPoolExecutor(
                    min(self.jobs - 1, n),
                    mp_context=get_context(start_method()),
                    initializer=prepare,
                    initargs=(sources(), initializer, initargs),
                )
        return self._pool

    def _count(self, n: int) -> None:
        """One bar for every map: each adds its items to the total."""
        if not self.progress:
            return
        if self._bar is None:
            from tqdm import tqdm

            # no monitor thread (it only tunes a bar's refresh): a thread in this process
            # would make the workers spawn instead of fork (start_method)
            tqdm.monitor_interval = 0
            self._bar = tqdm(total=0, desc=self.desc or None, unit="run", leave=False)
        self._bar.total += n
        self._bar.refresh()

    def _tick(self) -> None:
        if self._bar is not None:
            self._bar.update(1)

    def close(self) -> None:
        self._end_forked()
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)
            self._pool = None
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def pmap(
    fn: Callable[[T], R],
    items: Sequence[T],
    jobs: Jobs = 1,
    *,
    desc: str = "",
    progress: bool | None = None,
    cost: Callable[[T], float] | None = None,
) -> list[R]:
    """One map in its own :class:`Workers`."""
    with Workers(jobs, desc=desc, progress=progress) as w:
        return w.map(fn, items, cost=cost)
