"""The collector is paused inside a decorated step or a ``with`` block and as it was
after it, an error included; a pause inside a paused one leaves it to the outer."""

from __future__ import annotations

import gc

import pytest

from kda_sim.gcpause import cyclic_gc_paused, gc_paused


@gc_paused
def _enabled_inside() -> bool:
    return gc.isenabled()


@gc_paused
def _fails() -> None:
    raise ValueError("inside")


@gc_paused
def _outer() -> tuple[bool, bool]:
    inner = _enabled_inside()
    return inner, gc.isenabled()  # still paused after the inner step


def test_paused_inside_restored_after() -> None:
    assert gc.isenabled()
    assert _enabled_inside() is False and gc.isenabled()
    with pytest.raises(ValueError, match="inside"):
        _fails()
    assert gc.isenabled()
    assert _outer() == (False, False) and gc.isenabled()
    gc.disable()  # paused by someone else: left paused
    try:
        assert _enabled_inside() is False and not gc.isenabled()
    finally:
        gc.enable()


def test_off_inside_on_after_and_the_outer_pause_decides() -> None:
    assert gc.isenabled()
    with cyclic_gc_paused():
        assert not gc.isenabled()
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner one does not turn it back on
    assert gc.isenabled()


def test_restored_on_an_error() -> None:
    with pytest.raises(ValueError), cyclic_gc_paused():
        raise ValueError("inside")
    assert gc.isenabled()


def test_a_caller_that_had_it_off_keeps_it_off() -> None:
    gc.disable()
    try:
        with cyclic_gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_what_a_pause_leaves_is_promoted_not_frozen() -> None:
    """What a paused step made is not kept in the young generation (no young scan owed)
    and not frozen: a cycle it left is still found by a full collection."""

    class Node:
        def __init__(self) -> None:
            self.me = self

    with cyclic_gc_paused():
        made = [Node() for _ in range(2000)]
    # in the oldest generation at once (a young collection would have left them in the
    # middle one), and nothing frozen
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert all(id(n) in oldest for n in made)
    assert gc.get_freeze_count() == 0
    del made
    assert gc.collect() >= 2000  # the cycles it left are garbage a full collection finds


def test_objects_the_process_froze_stay_frozen() -> None:
    """In a fresh interpreter: in the suite's process another thread (a cluster's, a
    pool's) may free a frozen object while the pause runs, and the count with it."""
    code = (
        "import gc\n"
        "from kda_sim.gcpause import cyclic_gc_paused\n"
        "kept = [[] for _ in range(10)]\n"
        "gc.freeze()\n"
        "frozen = gc.get_freeze_count()\n"
        "with cyclic_gc_paused():\n"
        "    made = [[] for _ in range(100)]\n"
        "print(frozen, gc.get_freeze_count(), bool(made and kept))\n"
    )
    out = _fresh(code).split()
    frozen, after, made_and_kept = int(out[0]), int(out[1]), out[2] == "True"
    assert after == frozen  # not thawed by the pause's promotion
    assert made_and_kept


def test_freeze_at_exit_freezes_once_when_the_interpreter_ends() -> None:
    """In a fresh interpreter: registered once however often called, nothing frozen
    until exit, everything frozen by the time later handlers (registered earlier) run."""
    code = (
        "import atexit, gc\n"
        "atexit.register(lambda: print('at exit', gc.get_freeze_count() > 0))\n"
        "from kda_sim.gcpause import freeze_at_exit\n"
        "n = atexit._ncallbacks()\n"
        "freeze_at_exit(); freeze_at_exit()\n"
        "print('registered', atexit._ncallbacks() - n, 'frozen', gc.get_freeze_count())\n"
    )
    out = _fresh(code)
    assert out.split("\n")[:2] == ["registered 1 frozen 0", "at exit True"]


def _fresh(code: str) -> str:
    """What ``code`` prints, run in a fresh interpreter: nothing else in this process can
    touch its collector (another thread of the suite may free a frozen object)."""
    import subprocess
    import sys

    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
