"""Ops built by ``positional`` are the ops their dataclass's ``__init__`` builds."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
import pytest

from kda_sim.kernels.k1.constants import TAG_EXPR
from kda_sim.protocol.ops import Compute, Load, LoadKind, Poll, Put, positional


@pytest.mark.parametrize(
    ("cls", "args"),
    [
        (Poll, ("PROJ", np.arange(6).reshape(2, 3), np.arange(6), TAG_EXPR, 2, True)),
        (Put, (3, np.arange(4), (np.arange(2), np.arange(3)), TAG_EXPR)),
        (Compute, ("k.conv", 2, np.arange(5), 8.0)),
        (Load, ("k.in", LoadKind.STAGING, 640, "state rows", False, (1, 2))),
    ],
)
def test_positional_builds_what_init_builds(cls: type, args: tuple) -> None:
    made, init = positional(cls)(*args), cls(*args)
    assert type(made) is cls
    assert [getattr(made, f.name) is getattr(init, f.name) for f in dataclasses.fields(cls)] == [
        True
    ] * len(dataclasses.fields(cls))
    assert made == init and pickle.dumps(made) == pickle.dumps(init)
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(made, dataclasses.fields(cls)[0].name, "other")


def test_positional_refuses_a_class_it_would_build_wrong() -> None:
    @dataclasses.dataclass
    class NoSlots:
        a: int

    @dataclasses.dataclass(slots=True)
    class Checked:
        a: int

        def __post_init__(self) -> None:
            assert self.a > 0

    for cls in (NoSlots, Checked):
        with pytest.raises(TypeError, match="not a slotted dataclass"):
            positional(cls)
