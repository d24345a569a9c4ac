"""A memo finds what it made, keeps its latest ``maxsize``, pickles by name, and a
transient scope drops what was made inside it (not what was made before), nested and per
thread."""

from __future__ import annotations

import pickle
import threading

from kda_sim.memo import Memo, memo, transient

calls: list[int] = []


@memo(2)
def square(x: int) -> int:
    calls.append(x)
    return x * x


@memo(8)
def cube(x: int) -> int:
    calls.append(-x)
    return x**3


def test_found_again_and_the_oldest_dropped_past_maxsize() -> None:
    square.cache_clear()
    calls.clear()
    assert [square(2), square(2), square(3)] == [4, 4, 9]
    assert calls == [2, 3]
    square(2)  # 2 is now the latest: 3 goes when 4 comes
    square(4)
    assert square.cached() == [(2,), (4,)]


def test_a_transient_scope_drops_what_it_made_and_keeps_what_was_there() -> None:
    cube.cache_clear()
    cube(1)
    with transient():
        cube(1)
        cube(5)
        with transient():
            cube(6)
        assert (6,) not in cube.cached() and (5,) in cube.cached()
    assert cube.cached() == [(1,)]
    calls.clear()
    cube(5)  # dropped, the latest call's value too: made again
    assert calls == [-5]


def test_another_threads_scope_drops_only_its_own() -> None:
    cube.cache_clear()
    entered, done = threading.Event(), threading.Event()

    def other() -> None:
        with transient():
            cube(7)
            entered.set()
            done.wait(5)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(5)
    cube(8)  # made outside any scope of this thread: kept
    done.set()
    t.join()
    assert cube.cached() == [(8,)]


def test_pickles_as_the_module_function() -> None:
    assert isinstance(square, Memo)
    assert pickle.loads(pickle.dumps(square)) is square
    assert square.__name__ == "square" and square.__wrapped__(3) == 9


def test_a_scope_pushes_out_no_entry_made_before_it() -> None:
    square.cache_clear()
    square(1)
    square(2)  # full (maxsize 2)
    with transient():
        square(3)
        square(4)
        assert square.cached() == [(1,), (2,), (3,), (4,)]
    assert square.cached() == [(1,), (2,)]
    square(5)  # outside a scope the oldest goes, as before
    assert square.cached() == [(2,), (5,)]
