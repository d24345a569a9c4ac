"""The further checks every launch's report runs after deadlock, visibility and the role
rule (:data:`SECTIONS`, in report order): each takes a :class:`CheckInput` and returns its
:class:`Section`, or None where the launch has nothing it checks (K1's report stays as it
was). Adding a check to every kernel's report is one entry here."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kda_sim.checks.aba import check_aba
from kda_sim.checks.dataflow import check_dataflow
from kda_sim.checks.findings import Finding, verdict
from kda_sim.checks.leftover import check_leftover
from kda_sim.checks.tags.launch import check_launch_tags
from kda_sim.checks.tickets import check_tickets, engine_at_residency
from kda_sim.checks.words import uses_words
from kda_sim.engine import SimResult
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.access import accesses_of
from kda_sim.protocol.program import Launch


@dataclass
class CheckInput:
    """What a further check gets: the launch checked and its nominal run."""

    cfg: Any
    prof: GpuProfile
    occupancy: int | None
    given: Launch | None  # a transformed protocol (a mutant), None: the kernel's own
    nominal: SimResult  # the engine's nominal run of it
    launch: Launch  # the launch checked (``given`` or the kernel's own)


@dataclass
class Section:
    """One further check's part of the report: its lines, its JSON and its findings."""

    key: str  # its key in the JSON report
    line: str  # its line(s) in the text report, after the role rule's
    data: Any
    findings: list[Finding] = field(default_factory=list)


def tickets_section(inp: CheckInput) -> Section | None:
    """Ticket loops: deadlock freedom at any residency, and the engine where the walk
    says a loop hangs (the two must agree)."""
    verdicts = check_tickets(inp.launch)
    if not verdicts:
        return None
    lines = [
        f"  deadlock, tickets, any residency: {verdict(v.finishes)} ({v.why})" for v in verdicts
    ]
    data = []
    findings: list[Finding] = []
    for v in verdicts:
        at_hang = None
        if v.hangs_at:
            r = v.hangs_at[0]
            run = engine_at_residency(inp.cfg, inp.prof, r)
            at_hang = {"residency": r, "finishes": not run.deadlock}
            stuck = "".join(f"; CTA {w.cta} {w.reason}" for w in run.timeline.stuck[:1])
            lines.append(
                f"  deadlock, engine at residency {r} (1 CTA a {inp.prof.unit_name} on {r} "
                f"{inp.prof.unit_name}s): {verdict(not run.deadlock)}{stuck}"
            )
        data.append(
            {
                "loop": v.loop,
                "items": v.items,
                "finishes_at_any_residency": v.finishes,
                "why": v.why,
                "hangs_at": list(v.hangs_at),
                "engine_at_hang_residency": at_hang,
            }
        )
        findings += v.findings
    return Section("tickets", "\n".join(lines), data, findings)


def aba_section(inp: CheckInput) -> Section | None:
    """Counter and flag words reused while a wait of their previous use may be pending."""
    if not uses_words(inp.launch):
        return None
    aba = check_aba(inp.launch)
    line = "  ABA (a counter reused while awaited): " + (f"{len(aba)} hazards" if aba else "none")
    return Section("aba", line, len(aba), aba)


def leftover_section(inp: CheckInput) -> Section | None:
    """What the launch leaves in its words for the next launch."""
    if not uses_words(inp.launch):
        return None
    line, los, findings = check_leftover(inp.launch)
    data = [{"word": lo.word, "value": lo.value, "cleared": lo.cleared} for lo in los]
    return Section("leftover", line, data, findings)


def dataflow_section(inp: CheckInput) -> Section:
    """Reads and writes (static, every launch): one writer a cell, writes in bounds,
    every read after the poll that guards it, puts after their inputs' polls, flags
    after their data drained, every work item once (:mod:`kda_sim.checks.dataflow`)."""
    acc = accesses_of(inp.cfg) if inp.given is None else None  # the kernel's own: cached
    rep = check_dataflow(inp.launch, inp.cfg, acc)
    return Section("dataflow", rep.line(), rep.to_dict(), rep.findings)


def tags_section(inp: CheckInput) -> Section | None:
    """The tags each CTA's ops compute, where they are not all one expression: the CTA
    whose put or poll is wrong (:mod:`kda_sim.checks.tags.launch`)."""
    got = check_launch_tags(inp.launch)
    if got is None:
        return None
    return Section("tags", got.line(), got.to_dict(), got.findings)


SECTIONS: tuple[Callable[[CheckInput], Section | None], ...] = (
    dataflow_section,
    tags_section,
    tickets_section,
    aba_section,
    leftover_section,
)
