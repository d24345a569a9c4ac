"""Counter and flag words: atomic read-modify-writes, waits on a predicate, resets.

A word is one cell of a region of the launch's CellSpace (as a mailbox pair is) holding
an integer, 0 when the launch starts. Unlike a (value, tag) pair, a word's value is
data the program uses: an atomic's old value goes into a named register of the CTA, a
:class:`Wait`'s target may add one, and a ticket loop (:mod:`kda_sim.protocol.tickets`)
runs the item its atomic returned.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING

from kda_sim.errors import InvalidInput

if TYPE_CHECKING:
    from kda_sim.protocol.space import CellSpace


class AtomicKind(StrEnum):
    ADD = "add"  # old + value
    EXCH = "exch"  # value
    CAS = "cas"  # value if old == compare, else unchanged


class Pred(StrEnum):
    EQ = "=="
    GE = ">="

    def holds(self, seen: int, target: int) -> bool:
        return seen == target if self is Pred.EQ else seen >= target


@dataclass(frozen=True, slots=True)
class Atomic:
    """A device-scope atomic on one word: serialized with every other write of the word
    where it lives (L2); the CTA waits for its old value."""

    region: int  # the region's id in the launch's CellSpace
    cell: int  # the word's global id
    kind: AtomicKind = AtomicKind.ADD
    value: int = 1  # the addend, the value exchanged in, or the CAS's new value
    compare: int = 0  # CAS only: the value expected
    into: str = ""  # the register that receives the old value ("" none)
    # a latency (a profile's name) the CTA pays once the old value is back ("" none): a
    # placed ticket take's item prologue (``ticket_item``, kda_sim.protocol.tickets.placed)
    then: str = ""

    def new(self, old: int) -> int | None:
        """The word after this atomic, None where it writes nothing (a failed CAS)."""
        if self.kind is AtomicKind.ADD:
            return old + self.value
        if self.kind is AtomicKind.EXCH:
            return self.value
        return self.value if old == self.compare else None


@dataclass(frozen=True, slots=True)
class Wait:
    """Re-load one word (acquire, as a poll) until ``pred`` holds against the target:
    ``value``, plus the register ``plus`` where one is named."""

    label: str
    region: int
    cell: int
    pred: Pred
    value: int
    plus: str = ""  # a register added to ``value`` (e.g. a generation an atomic returned)

    def describe(self, name: str) -> str:
        plus = f" + {self.plus}" if self.plus else ""
        return f"{name} {self.pred.value} {self.value}{plus}"


@dataclass(frozen=True, slots=True)
class Reset:
    """Plain stores of 0 into words; the CTA does not wait for them."""

    region: int
    cells: tuple[int, ...]


def check_word(space: CellSpace, region: int, cell: int, what: str) -> int:
    """``cell``'s index in ``region``, or ``InvalidInput`` when it is not a word of it."""
    if not 0 <= region < len(space.sizes):
        raise InvalidInput(
            f"{what}: region {region}: the launch has regions 0..{len(space.sizes) - 1}",
            what="region",
        )
    index = int(cell) - space.offsets[region]
    if not 0 <= index < space.sizes[region]:
        raise InvalidInput(
            f"{what}: cell {cell} is not in {space.name(region)} (its cells are "
            f"{space.offsets[region]}..{space.offsets[region] + space.sizes[region] - 1})",
            what="cell",
        )
    return index
