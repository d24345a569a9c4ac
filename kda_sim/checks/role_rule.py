"""The role rule: no poll waits behind weight loads, except where the design accepts it.

On an in-order profile (AMD: vmcnt retires loads in issue order) a poll's first load
returns only after every earlier load of its CTA, so weights in flight delay it. The
engine records, per poll, the loads still outstanding at its first issue; this check lists
every poll with weight bytes among them and what they cost: how much later its first try
returned than it would have without them, and whether that delay reached the schedule
(the poll was satisfied by the first try after the weights landed, so the weights, not
the producer, set its time). A kernel's design may accept some cases (its
``accepted_waits`` hook; K1 accepts the gemv CTA's XRDY poll behind its first group's
weights): those are reported, not failed; every other case fails.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.engine import SimResult
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import AcceptedWait, hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.timeline.model import PollRecord


@dataclass
class Blocked:
    cta: int
    role: str
    stage: str
    task: int
    poll: str  # the regions polled
    first: str  # the first pair polled, REGION[index]
    weight_bytes: int
    delay_ns: float  # how much later the first try returned
    exposed: bool  # the delay set the poll's satisfied time
    accepted: bool
    case: str = ""  # the accepted case (its AcceptedWait.what)


@dataclass
class RoleVerdict:
    applies: bool  # the profile retires loads in order
    blocked: list[Blocked] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not any(f.fails for f in self.findings)

    @property
    def accepted_cost_ns(self) -> float:
        return max((b.delay_ns for b in self.blocked if b.accepted and b.exposed), default=0.0)


def _accepted(cases: Sequence[AcceptedWait], role: str, rec: PollRecord) -> str:
    """The ``what`` of the first case that accepts the poll, "" if none does."""
    return next((a.what for a in cases if a.accepts(role, rec)), "")


def check_role_rule(
    res: SimResult, prof: GpuProfile, accepted: Sequence[AcceptedWait] | None = None
) -> RoleVerdict:
    """``accepted``: the cases the design accepts (default: the kernel's ``accepted_waits``
    hook, none if it has none)."""
    if accepted is None:
        accepted = hook(get(res.timeline.meta.kernel), "accepted_waits") or ()
    v = RoleVerdict(prof.in_order_loads)
    lat = prof.latency_ns["poll"]
    for track in res.timeline.ctas:
        for rec in track.polls:
            if not rec.behind_weight_bytes:
                continue
            weights = [
                ld.done
                for ld in track.loads
                if ld.kind == "weight"
                and ld.issue <= rec.first_issue
                and ld.done is not None
                and ld.done > rec.first_issue
            ]
            landed = max(weights, default=rec.first_issue)
            delay = max(0.0, landed - (rec.first_issue + lat)) if prof.in_order_loads else 0.0
            exposed = (
                delay > 0 and rec.satisfied is not None and rec.satisfied <= landed + lat * 1.001
            )
            first = f"{rec.cells[0].region}[{rec.cells[0].first}]" if rec.cells else rec.label
            case = _accepted(accepted, track.role, rec)
            v.blocked.append(
                Blocked(
                    track.cta,
                    track.role,
                    rec.stage,
                    rec.task,
                    rec.label,
                    first,
                    int(rec.behind_weight_bytes),
                    delay,
                    exposed,
                    bool(case),
                    case,
                )
            )
    if not v.applies:
        return v
    bad = [b for b in v.blocked if not b.accepted]
    for case in accepted:
        ok = [b for b in v.blocked if b.case == case.what]
        if not ok:
            continue
        worst = max(ok, key=lambda b: b.delay_ns)
        n_exp = sum(b.exposed for b in ok)
        v.findings.append(
            Finding(
                Category.ROLE,
                Severity.NOTE,
                f"{len(ok)} {case.what} (by design); the worst, CTA {worst.cta} on "
                f"{worst.first} for this launch's tag, returns its first try "
                f"{worst.delay_ns:.0f} ns late behind {worst.weight_bytes} weight bytes; in "
                f"{n_exp} of them the weights, not {case.producers}, set when the poll is "
                f"satisfied",
                details={"count": len(ok), "worst_delay_ns": worst.delay_ns, "exposed": n_exp},
            )
        )
    if bad:
        b = max(bad, key=lambda x: (x.exposed, x.delay_ns))
        task = f" (task {b.task})" if b.task >= 0 else ""
        v.findings.append(
            Finding(
                Category.ROLE,
                Severity.FAIL,
                f"{len(bad)} polls wait behind weight loads outside the accepted case: CTA "
                f"{b.cta} ({b.role}) polls {b.first} for this launch's tag in {b.stage}{task} "
                f"with {b.weight_bytes} weight bytes in flight; its first try returns "
                f"{b.delay_ns:.0f} ns late"
                + (" and that sets when the poll is satisfied" if b.exposed else ""),
                "issue the weights after the poll, or move the poll to a CTA without "
                "weight loads (the role split)",
                {
                    "cta": b.cta,
                    "stage": b.stage,
                    "task": b.task,
                    "pair": b.first,
                    "weight_bytes": b.weight_bytes,
                    "delay_ns": b.delay_ns,
                    "count": len(bad),
                },
            )
        )
    return v
