"""The tag a CTA computes for a (value, tag) pair: what a put writes, what a poll expects.

A tag expression is the arithmetic of one CTA's tag, as data:

    tag = wrap_bits( key(word - lag) * scale + (slot if slot else 0) + offset )
    key(x) = x % 2**epoch_bits   (the device's signed remainder, remsi; 1 bit: a parity)
           = x                   (epoch_bits None: the counter itself)

- ``word``: the epoch word it reads: the device counter bumped once a step inside the
  graph (``STEP``), or a value fixed when the graph was captured (``CAPTURED``: the same
  on every replay, a frozen epoch);
- ``lag``: steps behind the word it reads (1: the value before this step's bump, a
  stale epoch; 0 where correct);
- ``epoch_bits``, ``scale``, ``slot``, ``offset``: the reduction of the epoch, its
  multiplier (the slots a step: 0 for a tag with no epoch), the launch's slot term and
  the constant (the ``+ 1`` that keeps a tag off the cleared value 0);
- ``bits``: the integer the device computes in (every ``+`` and ``*`` wraps there).

A :class:`~kda_sim.protocol.ops.Put` (or ``Publish``) carries the expression of the tag it
writes, a :class:`~kda_sim.protocol.ops.Poll` the one it waits for; ``None`` where the
kernel does not say. The tag check (:mod:`kda_sim.checks.tags.programs`) evaluates them
as the device does.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class EpochWord(StrEnum):
    """Which epoch a tag expression reads."""

    STEP = "epoch"  # the device counter, bumped once a step inside the graph
    CAPTURED = "captured epoch"  # fixed at graph capture: every replay reads the same


@dataclass(frozen=True, slots=True)
class TagExpr:
    bits: int
    scale: int
    epoch_bits: int | None
    slot: bool = True
    offset: int = 1
    word: EpochWord = EpochWord.STEP
    lag: int = 0

    def __post_init__(self) -> None:
        if not 1 <= self.bits <= 64:
            raise ValueError(f"tag bits {self.bits}: must be in 1..64")
        if self.epoch_bits is not None and not 1 <= self.epoch_bits < self.bits:
            raise ValueError(f"epoch bits {self.epoch_bits}: must be in 1..{self.bits - 1}")
        if self.scale < 0 or self.lag < 0:
            raise ValueError("a tag's scale and lag are >= 0")

    @property
    def has_epoch(self) -> bool:
        """Whether the tag depends on an epoch at all."""
        return self.scale != 0

    def text(self) -> str:
        """The expression as a kernel author writes it: ``(epoch % 2^22) * 256 + slot + 1
        in int32``."""
        terms: list[str] = []
        if self.has_epoch:
            e = f"({self.word.value} - {self.lag})" if self.lag else str(self.word.value)
            if self.epoch_bits is not None:
                m = "2" if self.epoch_bits == 1 else f"2^{self.epoch_bits}"
                e = f"({e} % {m})"
            terms.append(f"{e} * {self.scale}")
        if self.slot:
            terms.append("slot")
        if self.offset or not terms:
            terms.append(str(self.offset))
        return f"{' + '.join(terms)} in int{self.bits}".replace("+ -", "- ")
