"""ABA hazards: a counter or flag word reused (exchanged, swapped or re-incremented) while a
CTA may still wait on its previous use, so that the waiter can read the new value
instead of the one it waits for and wait forever. A store of 0 (a reset, a last-ticket
clear, an exchange of 0) racing its waiters is :mod:`kda_sim.checks.dataflow.resets`'s,
over the launch's whole happens-before order.

A write W of a word and a wait X on it (by another CTA or item) are a hazard when W can
make X's predicate false (a reset under a ``>= K``, an add under an ``==``) and neither
is ordered before the other. X is ordered before W when the writer, before W, passed a
wait that can only be satisfied once X's CTA made a write after X: a wait for ``>= K``
on a word only positive adds write, where the adds that come without X's CTA's adds
after X fall short of K (a count; a word also reset is no count). Symmetrically W is
ordered before X (X is a later use). Ops of the same CTA are ordered by its program.
"""

from __future__ import annotations

import functools

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.words import WordUse, WordWait, WordWrite, clears, falsifies, word_uses
from kda_sim.protocol.counters import Pred, Wait
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import Site, walk

_SHOWN = 4  # waiters named a finding


def _actor(s: Site) -> tuple[str, int]:
    return ("item", s.item) if s.item >= 0 else ("cta", s.cta)


def _ops_of(launch: Launch) -> dict[tuple[str, int], list[tuple[Site, object]]]:
    """Each actor's ops in program order (a CTA's own ops; an item's body)."""
    out: dict[tuple[str, int], list[tuple[Site, object]]] = {}
    walked: set[int] = set()
    for prog in launch.programs:
        for site, op in walk(prog, walked):
            out.setdefault(_actor(site), []).append((site, op))
    return out


def _implies_passed(
    waiter_ops: list[tuple[Site, object]],
    before: Site,
    actor: tuple[str, int],
    after: Site,
    uses: dict[int, WordUse],
) -> bool:
    """Whether a wait of ``waiter_ops`` before ``before`` holds only once ``actor`` made
    an add after ``after`` (so ``actor`` had passed ``after``)."""
    for site, op in waiter_ops:
        if site.index >= before.index and site.item == before.item:
            break
        if not isinstance(op, Wait) or op.plus or op.pred is not Pred.GE or site.branch:
            continue  # a wait in a branch on an old value may be skipped: it orders nothing
        use = uses[op.cell]
        if not use.adds_only:
            continue
        total = sum(w.value for w in use.writes)
        late = sum(
            w.value
            for w in use.writes
            if _actor(w.site) == actor and w.site.item == after.item and w.site.index > after.index
        )
        if late and total - late < op.value:
            return True
    return False


def check_aba(launch: Launch) -> list[Finding]:
    uses = word_uses(launch)
    by_actor = _ops_of(launch)
    space = launch.space
    out: list[Finding] = []
    branched: dict[tuple, Finding] = {}  # a write in a branch: one finding for every CTA's
    for cell, use in uses.items():
        for w in use.writes:
            if w.kind == "ticket" or clears(w):
                continue  # a take counts; a store of 0 is the reset-race check's
            waits = use.waits
            if w.kind == "clear":  # after every item of its loop: only the CTAs' own waits
                waits = [x for x in waits if x.site.item < 0]
            hazards = [x for x in waits if _hazard(w, x, by_actor, uses, use)]
            if not hazards:
                continue
            key = (cell, w.kind, w.site.item, w.site.index, w.site.branch, w.site.cond)
            if w.site.branch and key in branched:  # whichever CTA takes it: said once
                branched[key].details["ctas"] += 1
                continue
            out.append(_finding(space.split(cell), w, hazards))
            if w.site.branch:
                out[-1].details["ctas"] = 1
                branched[key] = out[-1]
    for f in branched.values():
        f.message += (
            f" (the same branch in {f.details['ctas']} CTAs: whichever takes it writes)"
            if f.details["ctas"] > 1
            else ""
        )
    return out


def _hazard(
    w: WordWrite,
    x: WordWait,
    by_actor: dict[tuple[str, int], list[tuple[Site, object]]],
    uses: dict[int, WordUse],
    use: WordUse,
) -> bool:
    wa, xa = _actor(w.site), _actor(x.site)
    if wa == xa or not falsifies(w, x.op.pred, x.op.value):
        return False
    if _needed(w, x, use):
        return False  # X cannot hold before W: W is one of the adds X waits for
    if _implies_passed(by_actor[wa], w.site, xa, x.site, uses):
        return False  # X passed before W
    return not _implies_passed(by_actor[xa], x.site, wa, w.site, uses)  # W before X


def _needed(w: WordWrite, x: WordWait, use: WordUse) -> bool:
    """Whether an ``==`` wait X on a word only adds write (of any sign, from 0) cannot
    hold before the add W: no sum of X's actor's own adds before X and any of the adds
    that can land before W (other actors', and W's actor's earlier ones) is X's target.
    Then W is one of the arrivals X waits for (a one-shot barrier of signed adds, as
    cuML's GridSync), not a reuse. Undecided (False) past ``_SUMS`` combinations."""
    if x.op.pred is not Pred.EQ or x.op.plus or w.kind != "add":
        return False
    if any(v.kind != "add" for v in use.writes):
        return False
    wa, xa = _actor(w.site), _actor(x.site)
    base, counts = 0, {}
    for v in use.writes:
        a = _actor(v.site)
        if a == xa:
            if v.site.item == x.site.item and v.site.index < x.site.index:
                base += v.value  # made before X: in every state X reads
        elif a != wa or (v.site.item == w.site.item and v.site.index < w.site.index):
            counts[v.value] = counts.get(v.value, 0) + 1
    return x.op.value not in _sums(base, tuple(sorted(counts.items())))


_SUMS = 100_000  # the most combinations of optional adds _needed enumerates


class _All:
    """Every integer: what ``_sums`` answers past ``_SUMS`` combinations."""

    def __contains__(self, _v: object) -> bool:
        return True


_ALL = _All()


@functools.lru_cache(maxsize=256)
def _sums(base: int, counts: tuple[tuple[int, int], ...]) -> frozenset[int] | _All:
    """Every value ``base`` plus some of the adds ``counts`` ((value, how many) pairs)
    can make; every integer past ``_SUMS`` combinations."""
    size = 1
    for _v, n in counts:
        size *= n + 1
    if size > _SUMS:
        return _ALL
    reach = {base}
    for v, n in counts:
        reach = {r + k * v for r in reach for k in range(n + 1)}
    return frozenset(reach)


def _finding(where: tuple, w: WordWrite, hazards: list[WordWait]) -> Finding:
    region, index = where
    word = f"{region.name}[{index}]"
    verb = {
        "reset": "resets",
        "clear": "clears",
        "add": "adds to",
        "exch": "exchanges",
        "cas": "swaps",
    }[w.kind]
    waiters = ", ".join(
        f"{x.site.text()} waiting for {word} {x.op.pred.value} {x.op.value}"
        for x in hazards[:_SHOWN]
    ) + (f" and {len(hazards) - _SHOWN} more" if len(hazards) > _SHOWN else "")
    new = f"{w.value:+d}" if w.kind == "add" else f"to {w.value}"
    msg = (
        f"ABA: {w.site.text()} {verb} {word} ({new}) "
        f"while its previous use may still be awaited: nothing orders it after {waiters}; "
        f"a waiter that reads the new value before the old one waits forever"
    )
    fix = (
        "wait on a value that only grows (count arrivals over every round, or a generation "
        "word the last arriver bumps), or reset only after every waiter has passed"
    )
    details = {
        "word": word,
        "writer": {"cta": w.site.cta, "item": w.site.item, "op": w.site.index, "kind": w.kind},
        "waiters": [
            {"cta": x.site.cta, "item": x.site.item, "op": x.site.index, "wait": x.op.label}
            for x in hazards
        ],
    }
    return Finding(Category.ABA, Severity.FAIL, msg, fix, details)
