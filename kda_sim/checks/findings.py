"""What a check reports: findings with a category, a counterexample and a fix."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class Category(StrEnum):
    DEADLOCK = "deadlock"  # a poll that is never satisfied
    STALE = "stale"  # a poll that can pass on a pair its own launch did not write
    OVERFLOW = "overflow"  # a tag the device computes differs from the scheme's integer
    VISIBILITY = "visibility"  # flagged data read before its producer's stores landed
    ROLE = "role"  # a poll behind weight loads the design does not accept
    LATE_LOAD = "late_load"  # a staging load issued after a poll it does not need
    ABA = "aba"  # a counter reused while a waiter of its previous use may still wait
    RESET_RACE = "reset-race"  # a word cleared while a waiter or an add of it is unordered
    LEFTOVER = "leftover"  # a self-resetting launch leaves a word non-zero for the next
    # data flow (static, kda_sim/checks/dataflow/)
    WRITERS = "writers"  # a cell written twice, by a unit the layout does not give it, or never
    BOUNDS = "bounds"  # a write outside its region (or regions that overlap)
    COVERAGE = "coverage"  # a read of a produced cell that no earlier poll guards
    ORDER = "order"  # a put whose inputs are polled only after it
    ITEMS = "items"  # a work item run twice, or never, in one launch
    UNREAD = "unread"  # a polled pair whose data the poller never reads (advice)


# what is advice only, never a failing property: no fault makes it fail
ADVICE_ONLY: frozenset[Category] = frozenset({Category.LATE_LOAD, Category.UNREAD})


# properties of counter and flag words: K1 has none, so no fault of its catalogue breaks
# them (the gridbarrier example's `broken` variant does)
WORDS_ONLY: frozenset[Category] = frozenset({Category.ABA, Category.RESET_RACE, Category.LEFTOVER})


class Severity(StrEnum):
    FAIL = "fail"
    NOTE = "note"  # reported, accepted by design (the role rule's gemv XRDY poll)
    ADVICE = "advice"  # no property fails: time the launch could save


@dataclass
class Finding:
    category: Category
    severity: Severity
    message: str  # one paragraph a kernel author can act on
    fix: str = ""  # the option that removes it, "" if none is known
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def fails(self) -> bool:
        return self.severity is Severity.FAIL

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["category"] = self.category.value
        d["severity"] = self.severity.value
        return d

    def text(self) -> str:
        suffix = {Severity.FAIL: "", Severity.NOTE: ", accepted", Severity.ADVICE: ", advice"}
        head = f"[{self.category.value}{suffix[self.severity]}] {self.message}"
        return head + (f"\n    fix: {self.fix}" if self.fix else "")


def failing(findings: list[Finding]) -> list[Finding]:
    return [f for f in findings if f.fails]


def verdict(finishes: bool | None) -> str:
    """A deadlock verdict as every report words it."""
    return {True: "finishes", False: "DEADLOCKS", None: "not decided"}[finishes]
