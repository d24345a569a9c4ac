"""Work shared among processes: the results, and their order, do not depend on ``jobs``;
a worker's error reaches the caller; ``jobs`` below 1 is refused."""

from __future__ import annotations

import os
import sys
import threading
import time
from concurrent.futures import Executor, Future
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from kda_sim import parallel
from kda_sim.errors import InvalidInput
from kda_sim.parallel import Workers, pmap, resolve_jobs
from kda_sim.parallel import default_jobs as cores


@pytest.fixture(params=["fork", "spawn"])
def start(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test of a map with workers once with forked workers, once with spawned ones
    (which ``start_method`` picks depends on the threads this process runs)."""
    monkeypatch.setattr(parallel, "start_method", lambda: request.param)
    return request.param


def test_results_in_the_items_order_for_any_jobs(start: str) -> None:
    items = list(range(7))
    want = [3**i for i in items]
    # the costliest item submitted first, the results still in the items' order
    for jobs in (1, 2):
        assert pmap(partial(pow, 3), items, jobs, progress=False, cost=lambda i: i) == want


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_this_process_and_a_worker_share_the_items(start: str) -> None:
    """jobs=2: one worker, and this process takes items as it does, while it starts."""
    pids = pmap(_pid_after, [0.05] * 8, 2, progress=False)
    assert os.getpid() in pids and len(set(pids)) == 2


def _pid_at(seconds: float) -> tuple[int, float, float]:
    t = time.monotonic()
    time.sleep(seconds)
    return os.getpid(), t, time.monotonic()


def test_each_process_takes_the_costliest_item_left(monkeypatch: pytest.MonkeyPatch) -> None:
    # items by cost: each process, this one too, runs its items in cost order
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")  # the worker at once
    costs = [0.02, 0.25, 0.05, 0.15, 0.1, 0.02, 0.2, 0.04, 0.12, 0.03]
    runs = pmap(_pid_at, costs, 2, progress=False, cost=lambda c: c)
    pids = {p for p, _, _ in runs}
    assert os.getpid() in pids and len(pids) == 2
    for pid in pids:
        mine = sorted((t0, c) for (p, t0, _), c in zip(runs, costs, strict=True) if p == pid)
        assert [c for _, c in mine] == sorted([c for _, c in mine], reverse=True)


class _HeldPool(Executor):
    """A pool whose items end when the test says: what it was handed, in order."""

    def __init__(self) -> None:
        self.handed: list[tuple[Any, Future[Any]]] = []

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        f: Future[Any] = Future()
        self.handed.append((args[0], f))
        return f


def test_a_pool_holds_one_item_beyond_its_workers_and_this_process_takes_the_next() -> None:
    # handed every item at once, a worker held two queued items no other process could
    # take; now the pool is given one beyond its workers', the next as each ends
    pool = _HeldPool()
    todo = ["a", "b", "c", "d", "e", "f"]
    feed = parallel._Handout(pool, str.upper, todo, [5, 4, 3, 2, 1, 0], ahead=2, by_cost=True)
    feed.fill()
    assert [x for x, _ in pool.handed] == ["f", "e"]
    assert feed.take() == 3  # "d": this process's
    pool.handed[0][1].set_result("F")  # the worker's first ends: it is given the next
    assert [x for x, _ in pool.handed] == ["f", "e", "c"]
    assert feed.take() == 1 and feed.done() == [5]
    pool.handed[1][1].set_result("E")
    pool.handed[2][1].set_result("C")
    assert [x for x, _ in pool.handed] == ["f", "e", "c", "a"]
    assert feed.take() is None
    assert sorted(feed.handed()) == [0, 2, 4, 5]


def test_without_a_cost_this_process_takes_the_last_items() -> None:
    # the items' order says nothing of their cost: this process takes from the end (a
    # fit's evaluation lists its costliest launch last), the pool from the front
    pool = _HeldPool()
    feed = parallel._Handout(pool, str, list("abcd"), [0, 1, 2, 3], ahead=2, by_cost=False)
    feed.fill()
    assert [x for x, _ in pool.handed] == ["a", "b"] and feed.take() == 3
    pool.handed[0][1].set_result("a")
    assert [x for x, _ in pool.handed] == ["a", "b", "c"] and feed.take() is None


def test_an_item_the_pool_refuses_fails_alone() -> None:
    class Closed(_HeldPool):
        def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
            raise RuntimeError("cannot schedule new futures after shutdown")

    feed = parallel._Handout(Closed(), str, [0, 1, 2], [0, 1, 2], ahead=2, by_cost=False)
    feed.fill()  # nothing is out: every item fails at once, the last one too
    futs = feed.handed()
    assert sorted(futs) == [0, 1, 2]
    with pytest.raises(RuntimeError, match="shutdown"):
        futs[2].result()


def test_items_named_here_run_in_this_process(start: str) -> None:
    """``here``: items this process runs itself whatever the workers (a result wanted as
    made, not as it pickles), the rest shared; the results in the items' order."""
    with Workers(2, progress=False) as w:
        pids = w.map(_pid_after, [0.05] * 6, here=(0, 3))
        alone = w.map(_pid_after, [0.0, 0.0], here=(0, 1))  # every item here: no pool
    assert pids[0] == pids[3] == os.getpid() and len(set(pids)) == 2
    assert alone == [os.getpid()] * 2


def test_one_pool_serves_every_map_of_a_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Spawned workers cost an interpreter's start each: one pool serves every map."""
    monkeypatch.setattr(parallel, "start_method", lambda: "spawn")
    with Workers(2, progress=False) as w:
        assert w.map(abs, [-1, -2, -3]) == [1, 2, 3]
        pool = w._pool
        assert w.map(abs, [-4, -5]) == [4, 5] and w._pool is pool is not None
    assert w._pool is None  # ended on exit


def _closes_over(data: list[int], i: int) -> int:
    return data[i] + os.getpid() * 0


def test_forked_workers_have_the_function_without_pickling_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Forked, a map's function (and what it closes over) is the children's already: only
    the items and results cross."""
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    big = list(range(100_000))
    with Workers(2, progress=False) as w:
        assert w.map(partial(_closes_over, big), [5, 6, 7, 8]) == [5, 6, 7, 8]
        assert w._pool is None and parallel._FORKED_FN is None
        assert w.map(abs, [-1, -2]) == [1, 2]  # a second map, another function


# this process's forks, counted by a hook (a hook cannot be removed: one for the module)
_FORKS = [0]
os.register_at_fork(after_in_parent=lambda: _FORKS.__setitem__(0, _FORKS[0] + 1))


def _worker_pids(w: Workers, fn, n: int = 6) -> set[int]:
    """The pids of the workers that ran items of a map of ``fn`` (``fn``: a pid after a
    sleep), this process left out."""
    return set(w.map(fn, [0.05] * n)) - {os.getpid()}


def test_a_forked_pool_serves_the_next_map_of_the_same_function(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A search maps one function once an evaluation: its workers are forked once, for
    the first map, and serve every later map of that function object."""
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    fn = partial(_pid_after)
    with Workers(2, progress=False) as w:
        before = _FORKS[0]
        first = _worker_pids(w, fn)
        assert _FORKS[0] == before + 1  # jobs=2: one worker
        later = [_worker_pids(w, fn) for _ in range(3)]
        assert _FORKS[0] == before + 1, "a map of the same function forked again"
        assert all(p <= first for p in later) and first


def test_a_map_of_another_function_forks_its_own_workers(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The workers run the function they were forked with: a map of another function
    (even an equal one) ends them and forks workers of its own, and its results are its
    function's."""
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    with Workers(2, progress=False) as w:
        assert w.map(partial(pow, 2), [1, 2, 3, 4]) == [2, 4, 8, 16]
        assert w.map(partial(pow, 3), [1, 2, 3, 4]) == [3, 9, 27, 81]
        first = _worker_pids(w, partial(_pid_after))
        before = _FORKS[0]
        second = _worker_pids(w, partial(_pid_after))  # equal, not the same object
        assert _FORKS[0] == before + 1 and first.isdisjoint(second)
        assert not any(_alive(p) for p in first)  # the earlier pool's worker ended


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def test_no_forked_worker_outlives_its_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A kept pool's workers end when the Workers does (on exit, or after an error)."""
    import multiprocessing

    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    fn = partial(_pid_after)
    with Workers(2, progress=False) as w:
        pids = _worker_pids(w, fn)
        assert pids and all(_alive(p) for p in pids)  # kept between maps
    assert w._forked is None and not any(_alive(p) for p in pids)
    assert not multiprocessing.active_children()
    with Workers(2, progress=False) as w, pytest.raises(ValueError, match="'x'"):
        w.map(int, ["1", "2", "x", "4"])
    assert w._forked is None and not multiprocessing.active_children()


def test_start_method_forks_only_without_threads() -> None:
    import threading

    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert parallel.start_method() == "spawn"
    finally:
        stop.set()
        t.join()


def test_a_workers_error_reaches_the_caller(start: str) -> None:
    with pytest.raises(ValueError, match="'x'"):
        pmap(int, ["1", "x", "3"], 2, progress=False)
    with pytest.raises(InvalidInput, match="at least 1"):  # pickled back, message kept
        pmap(resolve_jobs, [1, 0], 2, progress=False)


def test_jobs_below_one_refused_none_is_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(InvalidInput, match="--jobs 0: at least 1"):
        resolve_jobs(0)
    with pytest.raises(InvalidInput, match="at most"):
        resolve_jobs(parallel.MAX_JOBS + 1)
    # the cores this process may use (bound before tests/conftest.py sets 1)
    assert cores() == len(os.sched_getaffinity(0)) >= 1
    monkeypatch.setattr(parallel, "default_jobs", lambda: 3)
    assert resolve_jobs(None) == 3


def test_a_script_with_no_main_guard_shares_a_library_function(tmp_path) -> None:
    """The workers start without the main module (pytest-xdist's is a bootstrap file that
    cannot run twice): a script that maps a library function needs no guard."""
    import subprocess
    import sys

    script = tmp_path / "noguard.py"
    script.write_text(
        "from functools import partial\n"
        "from kda_sim.parallel import pmap\n"
        "print(pmap(partial(pow, 3), range(4), 2, progress=False))\n"
    )
    out = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=False
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines() == ["[1, 3, 9, 27]"]


def test_workers_start_whatever_main_module_this_process_has(tmp_path, monkeypatch) -> None:
    """Streamlit's AppTest leaves its script as ``__main__`` (seen in CI under xdist: the
    workers ran it again and died): workers of a library function never run it."""
    import sys
    import types

    script = tmp_path / "app_script.py"
    script.write_text("raise SystemExit('the main module ran again in a worker')\n")
    main = types.ModuleType("__main__")
    main.__file__ = str(script)
    monkeypatch.setitem(sys.modules, "__main__", main)
    assert pmap(partial(pow, 2), range(5), 2, progress=False) == [1, 2, 4, 8, 16]


def test_a_kernel_file_gone_since_it_was_loaded_does_not_break_the_pool(tmp_path) -> None:
    """The parent loaded a kernel file that is gone by the time workers start (a test's
    temporary file, a file the user moved): the workers start without it."""
    from kda_sim.kernels.registry import load_kernel

    src = Path(__file__).parents[1] / "kda_sim" / "kernels" / "examples" / "pingpong.py"
    f = tmp_path / "pp_gone.py"
    f.write_text(src.read_text().replace('name="pingpong"', 'name="pp_gone"'))
    load_kernel(f)
    f.unlink()
    with Workers(2) as w:
        assert w.map(partial(pow, 2), range(6)) == [1, 2, 4, 8, 16, 32]


@pytest.mark.parametrize(
    ("cores", "load", "jobs"),
    [(2, 0.0, 2), (2, 0.7, 2), (2, 1.2, 1), (2, 9.0, 1), (16, 3.5, 13), (4, 4.0, 1)],
)
def test_idle_jobs_are_the_cores_less_the_load_rounded_up(
    monkeypatch: pytest.MonkeyPatch, cores: int, load: float, jobs: int
) -> None:
    monkeypatch.setattr(parallel, "default_jobs", lambda: cores)
    monkeypatch.setattr(parallel.os, "getloadavg", lambda: (load, load, load))
    assert parallel.idle_jobs() == jobs


def test_idle_jobs_without_a_load_average_are_the_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    def none() -> tuple[float, float, float]:
        raise OSError("no load average")

    monkeypatch.setattr(parallel, "default_jobs", lambda: 3)
    monkeypatch.setattr(parallel.os, "getloadavg", none)
    assert parallel.idle_jobs() == 3


def test_a_map_leaves_no_cycle_holding_its_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    # a pool dropped unclosed ends when its last reference goes (the executor's own
    # weakref callback stops it), not at the collector's next pass: the hand-out's
    # futures held it through their callbacks
    import gc
    import weakref

    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    w = Workers(2, progress=False)
    assert w.map(abs, [-3, -1, -2, -5], cost=abs) == [3, 1, 2, 5]
    assert w._forked is not None
    pool = weakref.ref(w._forked[1])
    was = gc.isenabled()
    gc.disable()
    try:
        w._forked = None  # dropped, not closed
        assert pool() is None
    finally:
        if was:
            gc.enable()
    w.close()


def _interval(_x: int) -> float:
    return sys.getswitchinterval()


def test_this_process_runs_its_items_with_quick_switches(monkeypatch: pytest.MonkeyPatch) -> None:
    """While this process runs its own items the pool's threads get the GIL within
    HANDOFF_SWITCH_S, not the interpreter's 5 ms; after the map, and after a map that
    failed, the interval is what it was."""
    monkeypatch.setattr(parallel, "start_method", lambda: "fork")
    before = sys.getswitchinterval()
    assert before != parallel.HANDOFF_SWITCH_S
    with Workers(2, progress=False) as w:
        got = w.map(_interval, range(4), here=[0])
        assert got[0] == pytest.approx(parallel.HANDOFF_SWITCH_S)  # this process's item
        assert sys.getswitchinterval() == before
        with pytest.raises(ZeroDivisionError):
            w.map(partial(divmod, 1), [1, 0, 2], here=[1])
        assert sys.getswitchinterval() == before


def test_quick_switches_nested_or_in_threads_give_back_the_first_interval() -> None:
    before = sys.getswitchinterval()
    inner = threading.Event()
    with parallel._quick_switches():
        t = threading.Thread(target=lambda: _held(inner))
        t.start()
        inner.wait(5)
        assert sys.getswitchinterval() == pytest.approx(parallel.HANDOFF_SWITCH_S)
    t.join(5)
    assert sys.getswitchinterval() == before


def _held(entered: threading.Event) -> None:
    with parallel._quick_switches():
        entered.set()
        time.sleep(0.05)  # still open when the main thread's scope ends
