"""Who writes and who waits on each counter or flag word of a launch: the facts the
ticket and ABA checks reason from. A ticket loop's items are enumerated, each once."""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.protocol.branches import OnOld
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import Site, TicketLoop, walk


@dataclass(frozen=True)
class WordWrite:
    site: Site
    # "add", "exch", "cas", "reset", "ticket" (a ticket loop's take), "clear" (a word the
    # last ticket's taker zeroes, once every item of the loop has finished)
    kind: str
    value: int  # the addend or the value written (0 for a reset)


@dataclass(frozen=True)
class WordWait:
    site: Site
    op: Wait


@dataclass
class WordUse:
    cell: int
    writes: list[WordWrite]
    waits: list[WordWait]

    @property
    def adds_only(self) -> bool:
        """Only positive adds write it while its loop runs: its value counts them (a wait for
        >= K needs K). A last-ticket clear comes after every item, so it counts no less."""
        return all(w.kind == "add" and w.value > 0 for w in self.writes if w.kind != "clear")


def uses_words(launch: Launch) -> bool:
    """Whether any op of the launch is a counter op (the static wait-for analysis of
    (value, tag) polls does not reason about them)."""
    # each op type once, not each op (K1 has 20,000 ops and none of these)
    types = {type(op) for p in launch.programs for op in p.ops}
    return any(issubclass(t, Atomic | Wait | Reset | TicketLoop | OnOld) for t in types)


def word_uses(launch: Launch) -> dict[int, WordUse]:
    out: dict[int, WordUse] = {}

    def use(cell: int) -> WordUse:
        return out.setdefault(cell, WordUse(cell, [], []))

    walked: set[int] = set()
    for prog in launch.programs:
        for site, op in walk(prog, walked):
            if isinstance(op, Atomic):
                if op.kind is AtomicKind.ADD:
                    use(op.cell).writes.append(WordWrite(site, "add", op.value))
                else:
                    use(op.cell).writes.append(WordWrite(site, op.kind.value, op.value))
            elif isinstance(op, Reset):
                for cell in op.cells:
                    use(cell).writes.append(WordWrite(site, "reset", 0))
            elif isinstance(op, Wait):
                use(op.cell).waits.append(WordWait(site, op))
            elif isinstance(op, TicketLoop):
                use(op.cell).writes.append(WordWrite(site, "ticket", 1))
                for clear in op.clears:
                    for cell in clear.cells:
                        use(cell).writes.append(WordWrite(site, "clear", 0))
    return out


def clearing_op(op: object) -> bool:
    """Whether the op stores 0 in a word: a reset, an exchange or CAS of 0 (what the
    reset-race check, :mod:`kda_sim.checks.dataflow.resets`, takes for a clear)."""
    if isinstance(op, Reset):
        return True
    return isinstance(op, Atomic) and op.kind in (AtomicKind.EXCH, AtomicKind.CAS) and op.value == 0


def clears(w: WordWrite) -> bool:
    """Whether the write stores 0: a :func:`clearing_op`'s, or a last-ticket clear."""
    return w.kind in ("reset", "clear") or (w.kind in ("exch", "cas") and w.value == 0)


def falsifies(w: WordWrite, pred: Pred, target: int) -> bool:
    """Whether the write can turn a satisfied ``pred`` against ``target`` false."""
    if w.kind in ("add", "ticket"):
        return pred is Pred.EQ and w.value != 0  # a >= stays true under positive adds
    if pred is Pred.EQ:
        return w.value != target
    return w.value < target
