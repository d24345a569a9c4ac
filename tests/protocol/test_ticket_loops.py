"""A ticket loop's bodies are data for every item; a body that publishes a flag is
refused with the item named; an item's ops have references apart from every CTA's; a
run's takes placed as static programs (takes_of, placed)."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.errors import InvalidInput
from kda_sim.protocol.counters import Atomic, Reset
from kda_sim.protocol.ops import Begin, Compute, End, Publish
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import (
    item_ref,
    placed,
    split_ref,
    takes_of,
    ticket_loop,
    walk,
)


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


def _launch(n_items: int = 3, takers: int = 2) -> Launch:
    space = CellSpace.from_sizes({"TICKET": 1})
    loop = ticket_loop(
        "l",
        0,
        0,
        n_items,
        lambda i: [Begin("k", i), Compute("c", 1.0), End("k", i)],
        takers=takers,
    )
    progs = tuple(CtaProgram(c, "r", (), (Compute("own", 1.0), loop)) for c in range(takers))
    return Launch(None, space, progs)


def test_takes_are_ordered_by_issue_time_per_cta() -> None:
    recs = [[1, 50, 60, 4], [0, 30, 40, 2], [1, 10, 20, 1], [0, 5, 8, 0], [0, 70, 80, 3]]
    assert takes_of(recs, 2) == ((0, 2, 3), (1, 4))


@pytest.mark.parametrize(
    ("recs", "match"),
    [([[2, 0, 1, 0]], "CTA 2: the launch has CTAs 0..1"), ([[0, 1, 2]], "cta, issue, return")],
)
def test_bad_take_records_are_named(recs, match) -> None:
    with pytest.raises(InvalidInput, match=match):
        takes_of(recs, 2)


def test_placed_programs_run_the_items_each_cta_took() -> None:
    launch = _launch()
    got = placed(launch, ((2, 0, 4), (1, 3)))  # 3 items, last ticket 3 + 2 - 1 = 4
    a, b = got.programs
    assert a.tasks == (2, 0) and b.tasks == (1,)
    assert a.looped_tasks and b.looped_tasks
    assert [type(op).__name__ for op in a.ops] == [
        "Compute",
        *["Atomic", "Begin", "Compute", "End"] * 2,
        "Atomic",
        "Reset",  # CTA 0 took the last ticket: it clears the counter
    ]
    assert [op.task for op in a.ops if isinstance(op, Begin)] == [2, 0]
    assert isinstance(b.ops[-1], Atomic)  # ends on its take past the items, no reset
    assert not any(isinstance(op, Reset) for op in b.ops)


@pytest.mark.parametrize(
    ("takes", "match"),
    [
        (((0, 1, 3), (0, 4)), "ticket 0 taken by CTA 0 and CTA 1"),
        (((0, 3), (1, 4)), r"items \[2\] were taken by no CTA"),
        (((0, 1), (2, 4)), "ends on one ticket past them"),
        (((0, 4, 1), (2, 3)), "ends on one ticket past them"),
        (((0, 1, 2, 3),), "takes for 1 CTAs, the launch has 2"),
    ],
)
def test_takes_that_are_no_run_of_the_loop_are_refused(takes, match) -> None:
    with pytest.raises(InvalidInput, match=match):
        placed(_launch(), takes)


def test_a_launch_without_a_loop_has_nothing_to_place() -> None:
    space = CellSpace.from_sizes({"X": 1})
    launch = Launch(None, space, (CtaProgram(0, "r", (), (Compute("c", 1.0),)),))
    with pytest.raises(InvalidInput, match="one ticket loop"):
        placed(launch, ((),))


def _ahead(*ops) -> Launch:
    """One CTA with ``ops`` (TakeAhead of the counter, the loop) in its program."""
    space = CellSpace.from_sizes({"TICKET": 1})
    return Launch(None, space, (CtaProgram(0, "r", (), tuple(ops)),))


def test_a_take_ahead_needs_a_take_of_its_counter_after_it() -> None:
    from kda_sim.protocol.tickets import TakeAhead, check_words

    loop = ticket_loop("l", 0, 0, 2, lambda i: [Compute("c", 1.0)], takers=1)
    check_words(_ahead(TakeAhead(0, 0), Compute("own", 1.0), loop))  # the loop waits for it
    with pytest.raises(InvalidInput, match=r"CTA 0 \(op 0\): a take ahead with no take"):
        check_words(_ahead(TakeAhead(0, 0), Compute("own", 1.0)))
    with pytest.raises(InvalidInput, match=r"CTA 0 \(op 1\): a take ahead of counter 0 while"):
        check_words(_ahead(TakeAhead(0, 0), TakeAhead(0, 0), loop))
    with pytest.raises(InvalidInput, match="cell 3 is not in TICKET"):
        check_words(_ahead(TakeAhead(0, 3), loop))
    with pytest.raises(InvalidInput, match="item 1, op 0 is a TakeAhead"):
        ticket_loop("l", 0, 0, 2, lambda i: [TakeAhead(0, 0)] if i else [])


def test_a_placed_take_waits_for_the_take_issued_ahead() -> None:
    """Placed, the role keeps its take ahead and the CTA's first take (an atomic add of
    the counter) is the one that waits for it (the engine's rule); the check passes."""
    from kda_sim.protocol.tickets import TakeAhead, check_words

    loop = ticket_loop("l", 0, 0, 1, lambda i: [Compute("c", 1.0)], takers=1)
    got = placed(_ahead(TakeAhead(0, 0), Compute("own", 1.0), loop), ((0, 1),))
    assert [type(op).__name__ for op in got.programs[0].ops] == [
        "TakeAhead",
        "Compute",
        *["Atomic", "Compute"],
        "Atomic",
        "Reset",
    ]
    check_words(got)
