"""The analyzer's answer: dataclasses, their JSON, and a plain-text rendering."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any


class FindingKind(StrEnum):
    POLL_BEHIND_WEIGHTS = "poll_behind_weights"  # a poll expected clear waits behind weights
    PUBLISH_UNDRAINED = "publish_undrained"  # a flag store without the drain of earlier stores
    POLL_MISSING = "poll_missing"  # a poll marker with no poll loop: the compiler deleted it
    SPIN_WITHOUT_LOAD = "spin_without_load"  # a loop that spins on a value loaded once
    UNPOLLED_FLAG_LOAD = "unpolled_flag_load"  # a flag word read once, no poll before it
    UNORDERED_READ = "unordered_read"  # a published word read after a relaxed poll
    SCOPE_BELOW_AGENT = "scope_below_agent"  # a poll load / flag store another CU may not see
    LDS_WRITE_AT_BARRIER = "lds_write_at_barrier"  # s_barrier with an LDS write outstanding
    POLL_UNBOUNDED = "poll_unbounded"  # a bounded-wait build's poll with no clock bound


@dataclass(frozen=True)
class InFlight:
    """One vector-memory op still outstanding (oldest first in a list)."""

    line: int
    text: str
    kind: str  # load / store / atomic / writeback
    load_class: str  # weights / staging / flagged / mailbox / unknown
    nbytes: int
    source: str  # kernel argument the resource came from, or the cache bits


@dataclass
class TryReport:
    """One try of a poll: its first load, the ``s_waitcnt`` that retires it, and what
    that wait retires it behind (in order: everything issued before the load)."""

    kind: str  # "first try" / "retry"
    line: int  # the try's first poll load
    wait_line: int  # the s_waitcnt that waits for it (0: none found)
    wait: str  # that instruction's text
    by_class: dict[str, int]
    lines: list[int]  # the ops it waits behind, oldest first (worst path)
    paths: int  # distinct in-flight queues over the paths that reach the load


@dataclass
class PollReport:
    kernel: str
    label: str  # the marker's text after "poll", or "" without one
    line: int  # first poll load (the peeled first try where the compiler peeled one)
    loop_line: int  # the loop's header
    wait_line: int  # the s_waitcnt that retires the first poll load
    pairs: int  # poll loads a try
    sleeps: bool
    coherent: bool
    peeled: bool  # the compiler peeled the first try out of the loop
    in_flight: list[InFlight]  # worst path, issue order
    by_class: dict[str, int]
    bytes_by_class: dict[str, int]  # a lane
    wave_bytes_by_class: dict[str, int]  # a wave, every lane active: what the simulator charges
    accepted: bool = False  # weights in flight here are accepted by design
    tries: list[TryReport] = field(default_factory=list)  # the first try, then the retry
    ktrace_range: str = ""  # the innermost ktrace range around the poll ("" for none)
    bounded: bool = False  # a clock read in the loop reaches a compare (it gives up in time)


@dataclass
class PublishReport:
    kernel: str
    label: str
    line: int  # the flag store
    drained: bool
    barrier_line: int  # 0: no s_barrier before the flag
    stores_at_barrier: list[InFlight]
    stores_at_flag: list[InFlight]


@dataclass
class Finding:
    kind: FindingKind
    kernel: str
    line: int
    message: str
    ktrace_range: str = ""  # the innermost ktrace range around the line ("" for none)


@dataclass(frozen=True)
class KtraceRangeReport:
    """A FlyDSL ktrace range recognised in the ISA: its event id, its name where a name
    table gave one (else ``#id``), and the lines of its begin and end records."""

    label: str
    event_id: int
    begin_line: int
    end_line: int


@dataclass
class KernelReport:
    name: str
    instructions: int
    loops: int
    vgpr_spills: int  # spill code waits on its own scratch traffic (vmcnt) near polls
    polls: list[PollReport] = field(default_factory=list)
    publishes: list[PublishReport] = field(default_factory=list)
    ktrace_ranges: list[KtraceRangeReport] = field(default_factory=list)


@dataclass
class IsaReport:
    file: str
    arch: str
    kernels: list[KernelReport]
    findings: list[Finding]
    approximate: bool = False  # a program point held more possible queues than kept
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return _drop_empty_ktrace(asdict(self))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=2, sort_keys=False)

    def render(self) -> str:
        out = [f"{self.file}: {self.arch}, {len(self.kernels)} kernel(s)"]
        for k in self.kernels:
            spills = f", {k.vgpr_spills} VGPRs spilled" if k.vgpr_spills else ""
            out.append(f"kernel {k.name}: {k.instructions} instructions, {k.loops} loop(s){spills}")
            for p in k.polls:
                cls = ", ".join(f"{n} {c}" for c, n in p.by_class.items()) or "nothing"
                tag = " (accepted)" if p.accepted else ""
                tag += f"; in ktrace range {p.ktrace_range}" if p.ktrace_range else ""
                name = p.label or "unmarked"
                out.append(
                    f"  poll {name} @ line {p.line} (wait line {p.wait_line}, "
                    f"{p.pairs} pair load(s)"
                    f"{', peeled' if p.peeled else ''}{', bounded' if p.bounded else ''}): "
                    f"behind {cls}{tag}"
                )
                for t in p.tries:
                    tcls = ", ".join(f"{n} {c}" for c, n in t.by_class.items()) or "nothing"
                    out.append(
                        f"    {t.kind} @ line {t.line}, waits at line {t.wait_line}: behind {tcls}"
                    )
            for pub in k.publishes:
                state = "drained" if pub.drained else "NOT drained"
                out.append(f"  publish {pub.label or 'unmarked'} @ line {pub.line}: {state}")
            for r in k.ktrace_ranges:
                lines = f"lines {r.begin_line}-{r.end_line}"
                out.append(f"  ktrace range {r.label} (event {r.event_id}): {lines}")
        for f in self.findings:
            where = f" (in ktrace range {f.ktrace_range})" if f.ktrace_range else ""
            out.append(f"FINDING {f.kind}: {f.kernel} line {f.line}: {f.message}{where}")
        if not self.findings:
            out.append("no findings")
        out.extend(f"note: {n}" for n in self.notes)
        return "\n".join(out)


def _drop_empty_ktrace(doc: dict[str, Any]) -> dict[str, Any]:
    """The ktrace keys only where the kernel has ktrace ranges: a report of a build
    without them reads as it did before the analyzer knew ktrace."""
    for k in doc["kernels"]:
        if not k["ktrace_ranges"]:
            del k["ktrace_ranges"]
        for p in k["polls"]:
            if not p["ktrace_range"]:
                del p["ktrace_range"]
    for f in doc["findings"]:
        if not f["ktrace_range"]:
            del f["ktrace_range"]
    return doc
