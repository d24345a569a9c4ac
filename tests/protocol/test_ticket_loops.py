"""A ticket loop's bodies are data for every item; a body with a (value, tag) hand-off
is refused with the item named."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.errors import InvalidInput
from kda_sim.protocol.ops import Compute, Put
from kda_sim.protocol.program import CtaProgram
from kda_sim.protocol.tickets import ticket_loop, walk


def test_bodies_are_enumerated() -> None:
    loop = ticket_loop("l", 0, 0, 3, lambda i: [Compute("c", float(i))])
    sites = [(s.item, s.index) for s, _ in walk(CtaProgram(0, "r", (), (loop,)))]
    assert sites == [(-1, 0), (0, 0), (1, 0), (2, 0)]


def test_a_put_in_a_body_is_refused() -> None:
    def body(i: int) -> list:
        return [Put(0, np.array([i]))] if i == 2 else []

    with pytest.raises(InvalidInput, match="item 2, op 0 is a Put"):
        ticket_loop("l", 0, 0, 3, body)
