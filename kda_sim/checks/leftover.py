"""What a launch leaves in its counter and flag words for the next one.

Words hold 0 when a launch starts only if someone zeroes them: the host between
launches, or the launch itself (a ticket loop's last taker resets its counter and the
words it ``clears``, once every item has finished). Host sequences (several launches,
graph replay, host zeroing) are not simulated, so the second launch is not run; this
check says, from the launch's writes, the value each word is left at and what a next
launch that starts from it would see: a ticket counter past the items runs no item, a
wait the leftover already satisfies passes before this launch's writers write.

A word's leftover is decided when a last-ticket clear or reset zeroes it, or when only
positive adds (and ticket takes) write it: their sum (a queue's counter takes each item
once and each taker one ticket past them), or when every write exchanges in one value.
Any other mix is left as "depends on the order of its writes". (value, tag) pairs need
no clearing: a poll wants its own launch's tag, which a leftover pair does not carry.

A launch that zeroes some of its words itself (a self-resetting kernel, meant to be
relaunched without host zeroing) but leaves another one non-zero fails; a launch that
zeroes none is assumed to rely on the host, and is reported only.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.words import WordUse, word_uses
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import TicketLoop

_SHOWN = 3  # consequences a report names


@dataclass(frozen=True)
class Leftover:
    word: str  # "TOPK[0]"
    value: int | None  # None: depends on the order of its writes
    cleared: bool  # the launch zeroes it itself (last-ticket reset or clear)
    sees: tuple[str, ...]  # what a next launch starting from it would see


def _loops(launch: Launch) -> dict[int, tuple[TicketLoop, int]]:
    """Each ticket loop (by counter word) with the CTAs that run it."""
    out: dict[int, tuple[TicketLoop, int]] = {}
    for p in launch.programs:
        for op in p.ops:
            if isinstance(op, TicketLoop):
                lp, n = out.get(op.cell, (op, 0))
                out[op.cell] = (lp, n + 1)
    return out


def _value(use: WordUse, loops: dict[int, tuple[TicketLoop, int]]) -> tuple[int | None, bool]:
    """(the word's value at the end of the launch, whether the launch zeroes it)."""
    loop = loops.get(use.cell)
    if loop is not None and loop[0].takers > 0:
        return 0, True
    if any(w.kind == "clear" for w in use.writes):
        return 0, True
    kinds = {w.kind for w in use.writes}
    if kinds <= {"add", "ticket"} and all(w.value > 0 for w in use.writes):
        adds = sum(w.value for w in use.writes if w.kind == "add")
        takes = loop[0].n_items + loop[1] if loop is not None else 0
        return adds + takes, False
    if kinds == {"exch"} and len({w.value for w in use.writes}) == 1:
        return use.writes[0].value, False  # a flag every writer sets to the same value
    return None, False


def leftovers(launch: Launch) -> list[Leftover]:
    loops = _loops(launch)
    space = launch.space
    out = []
    for cell, use in sorted(word_uses(launch).items()):
        value, cleared = _value(use, loops)
        region, index = space.split(cell)
        word = f"{region.name}[{index}]"
        sees: list[str] = []
        if value:
            if cell in loops:
                n = loops[cell][0].n_items
                sees.append(
                    f"the first take returns {value}, past the {n} items: no item runs"
                    if value >= n
                    else f"the first take returns {value}: items 0..{value - 1} are skipped"
                )
            sees += [
                f"{x.site.text()} passes {x.op.describe(word)} at once, before its writers"
                for x in use.waits
                if not x.op.plus and x.op.pred.holds(value, x.op.value)
            ]
        out.append(Leftover(word, value, cleared, tuple(sees)))
    return out


def _runs(los: list[Leftover]) -> list[tuple[str, int | None]]:
    """Consecutive words of a region left at one value as one ``R[a..b]``."""
    out: list[tuple[str, int, int, int | None]] = []  # region, first, last index, value
    for lo in los:
        name, index = lo.word[:-1].split("[")
        i = int(index)
        if out and out[-1][0] == name and out[-1][2] == i - 1 and out[-1][3] == lo.value:
            out[-1] = (name, out[-1][1], i, lo.value)
        else:
            out.append((name, i, i, lo.value))
    return [(f"{n}[{a}]" if a == b else f"{n}[{a}..{b}]", v) for n, a, b, v in out]


def _said(dirty: list[Leftover]) -> str:
    """``W = v`` a word, then what the next launch sees, the first few of it."""
    words = ", ".join(
        f"{w} = {'? (depends on the order of its writes)' if v is None else v}"
        for w, v in _runs(dirty)
    )
    sees = [s for lo in dirty for s in lo.sees]
    if not sees:
        return words
    more = f"; and {len(sees) - _SHOWN} more" if len(sees) > _SHOWN else ""
    return f"{words}. A next launch from these: {'; '.join(sees[:_SHOWN])}{more}"


def check_leftover(launch: Launch) -> tuple[str, list[Leftover], list[Finding]]:
    """The report's line, each word's leftover, and the failure of a launch that zeroes
    some of its words itself but not all."""
    los = leftovers(launch)
    cleared = [w for w, _ in _runs([lo for lo in los if lo.cleared])]
    dirty = [lo for lo in los if not lo.cleared and lo.value != 0]
    head = "  next launch (host sequences not simulated, the second launch not run): "
    if not dirty:
        line = head + f"every word zeroed by the launch ({', '.join(cleared)})"
        return line, los, []
    said = _said(dirty)
    zeroed = f"; zeroed by the launch: {', '.join(cleared)}" if cleared else ""
    line = head + f"unless the host zeroes them first: {said}{zeroed}"
    if not cleared:
        return line, los, []
    msg = (
        f"the launch zeroes {', '.join(cleared)} itself but leaves {_said(dirty)}"
        + ". Relaunched without host zeroing (a graph replay), the next launch starts from it"
    )
    fix = "clear every counter with the ticket counter (the last ticket's taker's clears)"
    details = {"words": {lo.word: lo.value for lo in dirty}}
    return line, los, [Finding(Category.LEFTOVER, Severity.FAIL, msg, fix, details)]
