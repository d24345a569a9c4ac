"""Every property of one launch: deadlock freedom (static and dynamic, in order and any
order), visibility and the role rule, and the staging loads issued late (advice); what
``kda-sim check`` runs."""

from __future__ import annotations

from dataclasses import dataclass, field

from kda_sim.checks.deadlock_dynamic import DynamicVerdict, check_dynamic
from kda_sim.checks.deadlock_static import (
    ANY_ORDER,
    IN_ORDER,
    StaticVerdict,
    any_order,
    check_static,
    slots_for,
    suggest_fix,
)
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.late_loads import LateLoad, check_late_loads
from kda_sim.checks.role_rule import RoleVerdict, check_role_rule
from kda_sim.checks.visibility import VisibilityVerdict, check_visibility
from kda_sim.checks.waitgraph import build_waitgraph, waitgraph_of
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_fits
from kda_sim.protocol.program import Launch


@dataclass
class LaunchReport:
    cfg: LaunchConfig
    gpu: str
    static: StaticVerdict
    any_order: StaticVerdict
    dynamic: DynamicVerdict
    visibility: VisibilityVerdict
    role: RoleVerdict
    findings: list[Finding] = field(default_factory=list)
    any_order_engine: bool | None = None  # the engine on the any-order witness: finishes?
    late: list[LateLoad] = field(default_factory=list)  # staging loads issued after a poll

    @property
    def ok(self) -> bool:
        return not any(f.fails for f in self.findings)

    def failing(self) -> set[Category]:
        return {f.category for f in self.findings if f.fails}


def check_launch(
    cfg: LaunchConfig,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    seeds: tuple[int, ...] = (1, 2, 3),
    jitter: float = 0.9,
    extreme: bool = True,
    fixes: bool = True,
    advice: bool = True,
) -> LaunchReport:
    """``launch``: a transformed protocol (a mutant) to check instead of the standard one;
    ``advice``: also the staging loads issued late (:mod:`kda_sim.checks.late_loads`)."""
    cfg.validate()
    check_fits(cfg, prof)
    slots = slots_for(cfg, prof, occupancy)
    g = build_waitgraph(launch) if launch is not None else waitgraph_of(cfg)
    static = check_static(g, slots)
    if fixes and launch is None and not static.finishes and static.findings:
        static.findings[0].fix = suggest_fix(cfg, prof, slots, static)
    anyo = any_order(g, slots, static)
    dyn = check_dynamic(
        cfg, prof, occupancy=occupancy, launch=launch, seeds=seeds, jitter=jitter, extreme=extreme
    )
    # the static any-order witness, replayed in the engine: the two must agree
    if anyo.finishes is False and anyo.order is not None and static.finishes:
        replay = simulate(cfg, prof, occupancy=occupancy, order=anyo.order, launch=launch)
        anyo_engine: bool | None = not replay.deadlock
    else:
        anyo_engine = None
    vis = check_visibility(cfg, prof, occupancy=occupancy, launch=launch, seeds=seeds[:1])
    role = check_role_rule(dyn.runs[0].result, prof)
    findings: list[Finding] = []
    findings += static.findings
    if static.finishes is not None and dyn.finishes != static.finishes:
        findings.append(
            Finding(
                Category.DEADLOCK,
                Severity.FAIL,
                f"the static analysis ({IN_ORDER}) says the launch "
                f"{'finishes' if static.finishes else 'deadlocks'}, the engine says it "
                f"{'finishes' if dyn.finishes else 'deadlocks'}: a modelling error",
            )
        )
    findings += [f for f in dyn.findings if not static.findings]
    if static.finishes and anyo.finishes is False:
        for f in anyo.findings:
            findings.append(
                Finding(
                    Category.DEADLOCK,
                    Severity.NOTE,
                    f"finishes under {IN_ORDER}, but not under {ANY_ORDER}: {anyo.note}. "
                    + f.message,
                    "co-residency of every CTA (more occupancy) makes the order irrelevant",
                    f.details,
                )
            )
    if anyo_engine:
        findings.append(
            Finding(
                Category.DEADLOCK,
                Severity.FAIL,
                f"the static analysis finds a deadlock under the dispatch order "
                f"({anyo.note}) that the engine runs to the end: a modelling error",
            )
        )
    findings += vis.findings + role.findings
    late: list[LateLoad] = []
    if advice and dyn.finishes:
        late, notes = check_late_loads(
            cfg, prof, occupancy=occupancy, launch=launch, makespan=dyn.makespan
        )
        findings += notes
    return LaunchReport(cfg, prof.name, static, anyo, dyn, vis, role, findings, anyo_engine, late)
