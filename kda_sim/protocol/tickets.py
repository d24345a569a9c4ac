"""A ticket loop: a CTA takes items from a counter until they run out.

Each turn is an atomic add of 1 on the ticket word; the old value is the item, run when
it is below the number of items, else the loop ends. Which CTA runs which item is
decided while the launch runs, but what item ``i`` does is data: ``bodies[i]``, which
the checks enumerate for every ``i``.

A body hands off through counter and flag words (:mod:`kda_sim.protocol.counters`), not
through (value, tag) pairs: a pair's producer is a (CTA, op) known when the launch is
built, and no CTA is known to run an item then.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kda_sim.errors import InvalidInput

if TYPE_CHECKING:
    from kda_sim.protocol.ops import Op
    from kda_sim.protocol.program import CtaProgram


@dataclass(frozen=True, slots=True)
class TicketLoop:
    label: str
    region: int  # the ticket counter's region
    cell: int  # the ticket counter's global id
    bodies: tuple[tuple[Op, ...], ...]  # item i -> its ops
    into: str = "ticket"  # the register that holds the item while its body runs

    @property
    def n_items(self) -> int:
        return len(self.bodies)


def ticket_loop(
    label: str, region: int, cell: int, n_items: int, body: Callable[[int], Sequence[Op]]
) -> TicketLoop:
    """The loop over ``n_items`` items, ``body(i)`` the ops of item ``i``; a body that
    polls or puts a (value, tag) pair, or nests a loop, is refused."""
    from kda_sim.protocol.ops import Poll, Publish, Put

    bodies = tuple(tuple(body(i)) for i in range(n_items))
    for i, ops in enumerate(bodies):
        for k, op in enumerate(ops):
            if isinstance(op, Put | Poll | Publish | TicketLoop):
                raise InvalidInput(
                    f"{label}: item {i}, op {k} is a {type(op).__name__}: an item hands off "
                    "through counter or flag words (Atomic, Wait, Reset), since no CTA is "
                    "known to run it when the launch is built",
                    what="ticket loop",
                )
    return TicketLoop(label, region, cell, bodies)


@dataclass(frozen=True, slots=True)
class Site:
    """Where an op is: a CTA's program (item -1) or item ``item``'s body of the loop at
    op ``loop`` of CTA ``cta``; ``index`` is its place in that sequence."""

    cta: int
    item: int
    index: int
    loop: int = -1

    def text(self) -> str:
        return (
            f"item {self.item} (op {self.index})"
            if self.item >= 0
            else (f"CTA {self.cta} (op {self.index})")
        )


def walk(prog: CtaProgram, walked: set[int] | None = None) -> Iterator[tuple[Site, Op]]:
    """Every op of ``prog``, the bodies of its ticket loops (each item once) included.
    ``walked``: the counters of the loops whose bodies were walked already (every CTA of
    a queue runs the same loop; its items are each one, whoever runs them), added to."""
    for k, op in enumerate(prog.ops):
        yield Site(prog.cta, -1, k), op
        if isinstance(op, TicketLoop) and (walked is None or op.cell not in walked):
            if walked is not None:
                walked.add(op.cell)
            for i, ops in enumerate(op.bodies):
                for j, sub in enumerate(ops):
                    yield Site(prog.cta, i, j, k), sub
