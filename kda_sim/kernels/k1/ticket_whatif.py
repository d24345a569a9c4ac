"""What-if: K1's static placement against its ticket schedules (LaunchConfig.kda_tickets,
gemv_tickets), simulated and checked shape by shape, GPU by GPU, occupancy by occupancy.

Each row is one simulated launch (nominal latencies, no jitter) of one schedule, with
its makespan or the engine's reason it stopped, and the verdict of the check that
reasons about that schedule: the static wait-for fixpoint (kda_sim/checks/
deadlock_static.py, in block-order dispatch) for the static placement, the ticket check
(kda_sim/checks/tickets.py) for a ticket schedule, whose covered residencies are set
against the launch's resident CTAs. ``scripts/whatif_ticket_k1.py`` prints the table.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kda_sim.checks.deadlock_static import check_static, slots_for
from kda_sim.checks.tickets import TicketVerdict, check_tickets
from kda_sim.checks.waitgraph import waitgraph_of
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import SCHEDULES, LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_fits

SCHEDULE_NAMES: tuple[str, ...] = ("static", *SCHEDULES)
SHAPES: tuple[tuple[int, int], ...] = tuple((r, lng) for r in (1, 2, 4) for lng in (1, 2, 4))


@dataclass(frozen=True)
class Row:
    gpu: str
    occupancy: int
    resident: int  # CTAs resident at once (units x occupancy)
    R: int
    L: int
    schedule: str
    makespan_us: float | None  # None: the engine stopped (deadlock)
    stopped: str  # the engine's first stuck CTA's reason, "" when it finished
    check_ok: bool  # the schedule's check covers this residency
    check: str  # the check's verdict in a line


def config(R: int, L: int, schedule: str) -> LaunchConfig:
    if schedule not in SCHEDULE_NAMES:
        raise ValueError(f"schedule {schedule!r}: one of {SCHEDULE_NAMES}")
    flags = {} if schedule == "static" else {schedule: True}
    return LaunchConfig(R, L, **flags).validate()


@lru_cache(maxsize=64)
def ticket_verdict(cfg: LaunchConfig) -> TicketVerdict:
    """The ticket check of a ticket schedule (it does not depend on the GPU)."""
    (v,) = check_tickets(build_launch(cfg))
    return v


def _check(cfg: LaunchConfig, prof: GpuProfile, occupancy: int, resident: int) -> tuple[bool, str]:
    if not cfg.tickets:
        v = check_static(waitgraph_of(cfg), slots_for(cfg, prof, occupancy))
        if v.finishes:
            return True, "finishes (static fixpoint, block order)"
        return False, "deadlock (static fixpoint): " + v.findings[0].message.split(". ")[0]
    t = ticket_verdict(cfg)
    if resident in t.hangs_at:
        span = f"{min(t.hangs_at)} to {max(t.hangs_at)}"
        return False, (
            f"hangs (the ticket walk hangs at {span} resident); at {resident}: "
            + t.chains.get(resident, "")
        )
    if t.finishes:
        return True, f"deadlock-free at any residency >= {t.needs_resident}"
    low = f"hangs only below {max(t.hangs_at) + 1}" if t.hangs_at else "no hang found"
    return True, f"finishes at {resident} resident ({low}); not at every residency: " + _first(t)


def _first(t: TicketVerdict) -> str:
    """The first wait that breaks the argument, as the check words it."""
    why = t.why
    at = why.find("(item ")
    return why[at + 1 : why.find(")", why.find("written by", at)) + 1] if at >= 0 else why


def row(prof: GpuProfile, R: int, L: int, schedule: str, occupancy: int) -> Row:
    """One launch's row; a shape the GPU cannot build (x rows over its LDS) is a row that
    says so, not an error: the table covers every shape on every GPU."""
    cfg = config(R, L, schedule)
    try:
        check_fits(cfg, prof)
    except InvalidInput as e:
        return Row(prof.name, occupancy, 0, R, L, schedule, None, f"not built: {e}", False, "-")
    res = simulate(cfg, prof, occupancy=occupancy)
    tl = res.timeline
    stopped = tl.stuck[0].reason if res.deadlock and tl.stuck else ""
    span = None if res.deadlock else tl.makespan / 1000.0
    ok, check = _check(cfg, prof, occupancy, res.residency.slots)
    return Row(prof.name, occupancy, res.residency.slots, R, L, schedule, span, stopped, ok, check)


def table(
    profiles: Sequence[GpuProfile],
    shapes: Iterable[tuple[int, int]] = SHAPES,
    occupancies: Sequence[int] = (1, 2),
    schedules: Sequence[str] = SCHEDULE_NAMES,
    progress: Callable[[Row], None] | None = None,
) -> list[Row]:
    shapes = tuple(shapes)
    out = []
    for prof in profiles:
        for occ in occupancies:
            for R, L in shapes:
                for s in schedules:
                    out.append(row(prof, R, L, s, occ))
                    if progress is not None:
                        progress(out[-1])
    return out


def with_latency(prof: GpuProfile, **ns: float) -> GpuProfile:
    """The profile with some latencies replaced (a sensitivity run, e.g. ``atomic``)."""
    return dataclasses.replace(prof, latency_ns={**prof.latency_ns, **ns})


def _us(r: Row | None) -> str:
    if r is None or r.makespan_us is None:
        return "not built" if r is not None and r.stopped.startswith("not built") else "deadlock"
    return f"{r.makespan_us:.2f}"


def _delta(t: float | None, s: float | None) -> str:
    if t is None or s is None:
        return "-"
    return f"{t - s:+.2f} ({100 * (t - s) / s:+.1f} %)"


def markdown(rows: Sequence[Row]) -> str:
    """One table a (GPU, occupancy): a line a shape, each schedule's makespan (us) and
    its difference from the static placement, then the checks' verdicts."""
    out: list[str] = []
    keys = {(r.gpu, r.occupancy): r.resident for r in rows if r.resident}
    by = {(r.gpu, r.occupancy, r.R, r.L, r.schedule): r for r in rows}
    for (gpu, occ), resident in keys.items():
        out += [
            f"### {gpu}, {occ} CTA(s) a unit ({resident} resident)",
            "",
            "| R x L | static (us) | kda_tickets (us) | - static | gemv_tickets (us) | - static |",
            "|---|---|---|---|---|---|",
        ]
        shapes = dict.fromkeys((r.R, r.L) for r in rows if (r.gpu, r.occupancy) == (gpu, occ))
        notes: list[str] = []
        for R, L in shapes:
            get = {s: by.get((gpu, occ, R, L, s)) for s in SCHEDULE_NAMES}
            span = {s: (g.makespan_us if g else None) for s, g in get.items()}
            out.append(
                f"| {R} x {L} | {_us(get['static'])} | {_us(get['kda_tickets'])} | "
                f"{_delta(span['kda_tickets'], span['static'])} | {_us(get['gemv_tickets'])} | "
                f"{_delta(span['gemv_tickets'], span['static'])} |"
            )
            for s, g in get.items():
                if g is None:
                    continue
                if g.stopped.startswith("not built"):
                    notes.append(f"- {R} x {L}: {g.stopped}")
                    continue
                eng = "finishes" if g.makespan_us is not None else f"engine: {g.stopped}"
                notes.append(f"- {R} x {L} {s}: {eng}; check: {g.check}")
        out += ["", *dict.fromkeys(notes), ""]
    return "\n".join(out)
