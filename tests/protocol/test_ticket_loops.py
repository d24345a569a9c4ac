"""A ticket loop's bodies are data for every item; a body that publishes a flag is
refused with the item named; an item's ops have references apart from every CTA's."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.errors import InvalidInput
from kda_sim.protocol.ops import Compute, Publish
from kda_sim.protocol.program import CtaProgram
from kda_sim.protocol.tickets import item_ref, split_ref, ticket_loop, walk


def test_bodies_are_enumerated() -> None:
    loop = ticket_loop("l", 0, 0, 3, lambda i: [Compute("c", float(i))])
    sites = [(s.item, s.index) for s, _ in walk(CtaProgram(0, "r", (), (loop,)))]
    assert sites == [(-1, 0), (0, 0), (1, 0), (2, 0)]


def test_a_publish_in_a_body_is_refused() -> None:
    def body(i: int) -> list:
        return [Publish(0, np.array([i]))] if i == 2 else []

    with pytest.raises(InvalidInput, match="item 2, op 0 is a Publish"):
        ticket_loop("l", 0, 0, 3, body)


def test_item_references_round_trip_and_never_name_a_cta() -> None:
    ref = item_ref(1, 383, 41)
    assert ref[0] < 0
    assert split_ref(ref) == (1, 383, 41)
    assert split_ref((0, 41)) is None


def test_the_last_ticket_counts_every_taker() -> None:
    loop = ticket_loop("l", 0, 0, 5, lambda i: [], takers=3)
    assert loop.last_ticket == 7  # 5 items, then each of the 3 takers takes one more
    assert ticket_loop("l", 0, 0, 5, lambda i: []).last_ticket == -1


def test_clears_need_takers_and_are_kept() -> None:
    from kda_sim.protocol.counters import Reset

    with pytest.raises(InvalidInput, match="clears words but takers = 0"):
        ticket_loop("l", 0, 0, 2, lambda i: [], clears=(Reset(1, (1,)),))
    loop = ticket_loop("l", 0, 0, 2, lambda i: [], takers=2, clears=[Reset(1, (1, 2))])
    assert loop.clears == (Reset(1, (1, 2)),) and loop.last_ticket == 3
