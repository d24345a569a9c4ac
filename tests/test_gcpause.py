"""The collector is paused inside a decorated step and as it was after it, an error
included; a step inside a paused one leaves the pause to the outer."""

from __future__ import annotations

import gc

import pytest

from kda_sim.gcpause import gc_paused


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
