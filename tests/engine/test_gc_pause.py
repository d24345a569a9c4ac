"""The collector is off inside a pause and as it was after: nested, on an error, and
when the caller had it off already."""

from __future__ import annotations

import gc

import pytest

from kda_sim.engine.gc_pause import cyclic_gc_paused


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
