"""The ticket check on small queues: backward waits are proved for any residency; a wait
on the item's own later write, or on a larger ticket, hangs, with its chain."""

from __future__ import annotations

from kda_sim.checks.tickets import check_tickets
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop


def _queue(dep, n: int = 6, ctas: int = 3) -> Launch:
    """Item i waits on FLAG[dep(i)] (None: no wait), then sets FLAG[i]."""
    space = CellSpace.from_sizes({"T": 1, "FLAG": n})
    flag = [int(space.gid(1, i)) for i in range(n)]

    def body(i: int) -> list:
        d = dep(i)
        wait = [] if d is None else [Wait(f"FLAG[{d}]", 1, flag[d], Pred.EQ, 1)]
        return [*wait, Atomic(1, flag[i], AtomicKind.EXCH, 1)]

    loop = ticket_loop("q", 0, int(space.gid(0, 0)), n, body)
    return Launch(None, space, tuple(CtaProgram(c, "w", (), (loop,)) for c in range(ctas)))


def test_waits_on_smaller_tickets_finish_at_any_residency() -> None:
    (v,) = check_tickets(_queue(lambda i: i - 2 if i >= 2 else None))
    assert v.finishes is True and v.hangs_at == () and "at any residency" in v.why


def test_a_wait_on_a_larger_ticket_hangs_where_no_other_cta_reaches_it() -> None:
    # item 0 waits on item 2: with a second CTA, item 1 finishes and that CTA takes item 2
    (v,) = check_tickets(_queue(lambda i: 2 if i == 0 else None))
    assert v.finishes is False and v.hangs_at == (1,)
    assert "item 0 (held by resident CTA 1 of 1) waits on FLAG[2] == 1" in v.why
    assert "written by item 2 (a larger ticket); item 2 is not taken" in v.why


def test_a_wait_on_its_own_later_write_hangs_everywhere() -> None:
    (v,) = check_tickets(_queue(lambda i: 3 if i == 3 else None))
    assert v.hangs_at == (1, 2, 3)
    assert "written by item 3 (its own ticket, later)" in v.why


def test_a_launch_without_a_ticket_loop_has_no_verdict() -> None:
    assert check_tickets(Launch(None, CellSpace.from_sizes({"A": 1}), ())) == []


def test_a_count_of_earlier_items_is_counted_once_whatever_the_ctas() -> None:
    """Item i waits until DONE >= i (every earlier item added 1): backward for any number
    of CTAs looping (each item's add is one, however many CTAs run the loop)."""
    space = CellSpace.from_sizes({"T": 1, "DONE": 1})
    done = int(space.gid(1, 0))

    def body(i: int) -> list:
        return [Wait("DONE", 1, done, Pred.GE, i), Atomic(1, done)]

    loop = ticket_loop("q", 0, int(space.gid(0, 0)), 5, body)
    for ctas in (1, 4):
        launch = Launch(None, space, tuple(CtaProgram(c, "w", (), (loop,)) for c in range(ctas)))
        (v,) = check_tickets(launch)
        assert v.finishes is True, v.why
    (bad,) = check_tickets(
        Launch(
            None,
            space,
            (
                CtaProgram(
                    0,
                    "w",
                    (),
                    (
                        ticket_loop(
                            "q",
                            0,
                            int(space.gid(0, 0)),
                            5,
                            lambda i: [Wait("DONE", 1, done, Pred.GE, i + 1), Atomic(1, done)],
                        ),
                    ),
                ),
            ),
        )
    )
    assert bad.finishes is False and bad.hangs_at == (1,)
