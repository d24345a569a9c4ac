"""Tag faults of one CTA, as program mutations: the tag expression its puts write, or its
polls wait for, changed the way a kernel engineer gets it wrong. Any launch whose ops carry
tag expressions (:mod:`kda_sim.protocol.tagexpr`); no kernel's names.

- ``stale-epoch``: reads the epoch of the step before (a copy taken before the bump);
- ``no-plus-one``: the ``+ 1`` left out;
- ``parity``: the epoch reduced ``% 2`` instead of the scheme's modulus;
- ``captured-epoch``: reads the epoch captured with the graph (frozen on replay), not
  the device counter.

The tag check (:mod:`kda_sim.checks.tags.programs`) must name the CTA that carries one.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from enum import StrEnum

from kda_sim.errors import InvalidInput
from kda_sim.protocol.ops import Op, Poll, Publish, Put
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tagexpr import EpochWord, TagExpr


class TagFault(StrEnum):
    STALE_EPOCH = "stale-epoch"
    NO_PLUS_ONE = "no-plus-one"
    PARITY = "parity"
    CAPTURED_EPOCH = "captured-epoch"


class Side(StrEnum):
    PUT = "put"  # the tags the CTA writes (its puts and flags)
    POLL = "poll"  # the tags its polls wait for


_CHANGE: dict[TagFault, Callable[[TagExpr], TagExpr]] = {
    TagFault.STALE_EPOCH: lambda e: replace(e, lag=e.lag + 1),
    TagFault.NO_PLUS_ONE: lambda e: replace(e, offset=e.offset - 1),
    TagFault.PARITY: lambda e: replace(e, epoch_bits=1),
    TagFault.CAPTURED_EPOCH: lambda e: replace(e, word=EpochWord.CAPTURED),
}


def faulty(expr: TagExpr, fault: TagFault) -> TagExpr:
    """``expr`` with ``fault``."""
    return _CHANGE[fault](expr)


def _change(op: Op, side: Side, fault: TagFault) -> Op:
    kinds = (Put, Publish) if side is Side.PUT else (Poll,)
    if isinstance(op, kinds) and op.tag is not None:
        return replace(op, tag=faulty(op.tag, fault))  # type: ignore[type-var]
    return op


def with_tag_fault(launch: Launch, cta: int, fault: TagFault, side: Side = Side.PUT) -> Launch:
    """``launch`` with CTA ``cta``'s puts (``side`` put) or polls carrying ``fault``;
    ``InvalidInput`` where that CTA has no such op with a tag expression."""
    progs = {p.cta: p for p in launch.programs}
    if cta not in progs:
        raise InvalidInput(f"CTA {cta}: the launch has CTAs 0..{len(progs) - 1}", what="cta")
    p = progs[cta]
    ops = tuple(_change(op, side, fault) for op in p.ops)
    if all(a is b for a, b in zip(ops, p.ops, strict=True)):
        raise InvalidInput(
            f"CTA {cta} has no {side.value} carrying a tag expression for --fault {fault}",
            what="cta",
        )
    new = replace(p, ops=ops)
    return replace(launch, programs=tuple(new if q.cta == cta else q for q in launch.programs))
