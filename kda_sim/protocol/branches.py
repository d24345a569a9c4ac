"""A branch on an atomic's old value: what "the last block to arrive" does.

An :class:`~kda_sim.protocol.counters.Atomic` with ``into`` puts the word's old value in a
register of the CTA; :class:`OnOld` runs ``then`` where that value satisfies a predicate
and ``orelse`` where it does not. After every block adds 1 to a counter of ``blocks``
arrivals, ``old == blocks - 1`` holds in exactly one block, the last to arrive, whichever
it is: it resets the counter, or releases the others, which wait.

A branch holds counter ops only (atomics, waits, resets): a (value, tag) pair's producer
is known when the launch is built, a branch is decided while it runs. The static checks
see both branches' ops at the branch's place, each one that may run
(:attr:`kda_sim.protocol.tickets.Site.branch`): a write in a branch may happen; a wait in
a branch orders nothing, since it may be skipped.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.protocol.counters import Atomic, Pred, Reset, Wait

BRANCH_OPS = (Atomic, Wait, Reset)  # what a branch may hold
THEN, ORELSE = 1, 2  # a site's branch (0: not in one)


@dataclass(frozen=True, slots=True)
class OnOld:
    label: str  # what the branch decides ("last arriver"), as reports name it
    reg: str  # the register an earlier atomic's ``into`` filled
    pred: Pred
    value: int
    then: tuple[Atomic | Wait | Reset, ...] = ()
    orelse: tuple[Atomic | Wait | Reset, ...] = ()

    def holds(self, old: int) -> bool:
        return self.pred.holds(old, self.value)

    def taken(self, regs: dict[str, int]) -> tuple[Atomic | Wait | Reset, ...]:
        """The branch a CTA whose registers are ``regs`` runs (an unset register is 0)."""
        return self.then if self.holds(regs.get(self.reg, 0)) else self.orelse

    def cond(self, branch: int) -> str:
        """The condition under which ``branch`` runs, as a site names it."""
        test = f"{self.reg} {self.pred.value} {self.value}"
        return f"if {test}: {self.label}" if branch == THEN else f"unless {test}"

    def branches(self) -> Iterator[tuple[int, Atomic | Wait | Reset]]:
        """(branch, op) of every op of both branches, ``then``'s first."""
        for op in self.then:
            yield THEN, op
        for op in self.orelse:
            yield ORELSE, op


def on_old(
    label: str,
    reg: str,
    pred: Pred,
    value: int,
    then: Sequence[Atomic | Wait | Reset] = (),
    orelse: Sequence[Atomic | Wait | Reset] = (),
) -> OnOld:
    """The branch, or ``InvalidInput`` naming an op a branch may not hold."""
    if not reg:
        raise InvalidInput(f"{label}: a branch names the register it tests", what="branch")
    for k, op in enumerate((*then, *orelse)):
        if not isinstance(op, BRANCH_OPS):
            raise InvalidInput(
                f"{label}: op {k} of the branch is a {type(op).__name__}: a branch on an "
                "atomic's old value holds atomics, waits and resets",
                what="branch",
            )
    return OnOld(label, reg, pred, value, tuple(then), tuple(orelse))
