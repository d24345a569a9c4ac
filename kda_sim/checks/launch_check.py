"""Every property of one launch of any kernel: deadlock freedom (static and dynamic, in
order and any order), visibility and the role rule, the staging loads issued late
(advice) and the further checks of :data:`SECTIONS`; what ``kda-sim check`` runs and
reports (:func:`launch_text`, :func:`launch_json`)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from functools import partial
from typing import Any

from kda_sim.checks.deadlock_dynamic import DynamicVerdict, check_dynamic, dynamic_plan, run_one
from kda_sim.checks.deadlock_static import (
    ANY_ORDER,
    IN_ORDER,
    StaticVerdict,
    any_order,
    check_static,
    slots_for,
    suggest_fix,
)
from kda_sim.checks.findings import Category, Finding, Severity, verdict
from kda_sim.checks.late_loads import LateLoad, check_late_loads
from kda_sim.checks.role_rule import RoleVerdict, check_role_rule
from kda_sim.checks.sections import SECTIONS, CheckInput, Section
from kda_sim.checks.visibility import JITTER as VISIBILITY_JITTER
from kda_sim.checks.visibility import VisibilityVerdict, check_visibility, visibility_plan
from kda_sim.checks.waitgraph import build_waitgraph, waitgraph_of
from kda_sim.checks.words import uses_words
from kda_sim.engine import simulate
from kda_sim.gcpause import cyclic_gc_paused
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.machine.costs import with_kernel_costs
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_fits
from kda_sim.parallel import Workers
from kda_sim.protocol.program import Launch

WORDS_NOTE = (
    "the launch waits on counter or flag words, which the wait-for analysis of (value, tag) "
    "polls does not reason about: see the ticket and ABA checks and the engine"
)


@dataclass
class LaunchReport:
    cfg: Any  # the kernel's configuration
    gpu: str
    static: StaticVerdict
    any_order: StaticVerdict
    dynamic: DynamicVerdict
    visibility: VisibilityVerdict
    role: RoleVerdict
    findings: list[Finding] = field(default_factory=list)
    any_order_engine: bool | None = None  # the engine on the any-order witness: finishes?
    late: list[LateLoad] = field(default_factory=list)  # staging loads issued after a poll
    sections: list[Section] = field(default_factory=list)
    costs: str = ""  # which kernel costs the profile ran (GpuProfile.costs_from)

    @property
    def kernel(self) -> Any:
        return spec_for(self.cfg)

    @property
    def ok(self) -> bool:
        return not any(f.fails for f in self.findings)

    def failing(self) -> set[Category]:
        return {f.category for f in self.findings if f.fails}


def check_launch(
    cfg: Any,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    seeds: tuple[int, ...] = (1, 2, 3),
    jitter: float = 0.9,
    extreme: bool = True,
    fixes: bool = True,
    advice: bool = True,
    workers: Workers | None = None,
) -> LaunchReport:
    """``cfg``: any registered kernel's configuration; ``launch``: a transformed protocol
    (a mutant) to check instead of the kernel's own; ``advice``: also the staging loads
    issued late (:mod:`kda_sim.checks.late_loads`); ``workers``: the processes the
    dynamic checks' engine runs are shared among (None: this one)."""
    # its engine runs and the records they keep: one collection after, not one a run
    with cyclic_gc_paused():
        return _check_launch(
            cfg, prof, occupancy, launch, seeds, jitter, extreme, fixes, advice, workers
        )


def _check_launch(
    cfg: Any,
    prof: GpuProfile,
    occupancy: int | None,
    launch: Launch | None,
    seeds: tuple[int, ...],
    jitter: float,
    extreme: bool,
    fixes: bool,
    advice: bool,
    workers: Workers | None,
) -> LaunchReport:
    spec_for(cfg).validate(cfg)
    # the costs (and, fitted, the build's resources) every part below runs with
    prof = with_kernel_costs(prof, spec_for(cfg))
    check_fits(cfg, prof)
    slots = slots_for(cfg, prof, occupancy)
    built = launch if launch is not None else spec_for(cfg).build(cfg)
    if uses_words(built):  # the wait-for analysis reasons about (value, tag) polls only
        static = StaticVerdict(None, IN_ORDER, note=WORDS_NOTE)
        anyo = StaticVerdict(None, ANY_ORDER, note=WORDS_NOTE)
    else:
        g = build_waitgraph(launch) if launch is not None else waitgraph_of(cfg)
        static = check_static(g, slots)
        if fixes and launch is None and not static.finishes and static.findings:
            static.findings[0].fix = suggest_fix(cfg, prof, slots, static)
        anyo = any_order(g, slots, static)
    # the deadlock and visibility checks' runs in one map: with workers, one pool and
    # one wait for the last run, not one each; the nominal run here (read whole below)
    dyn_plan = dynamic_plan(prof, seeds, jitter, extreme)
    # every jittered seed the user asked for (``--seeds``), as the dynamic deadlock check:
    # a missing drain shows only where a seed's timing lets a reader outrun the stores
    vis_plan = visibility_plan(prof, seeds, VISIBILITY_JITTER)
    one = partial(run_one, cfg, occupancy, None, launch)
    made = (workers or Workers(1)).map(one, [run for _label, run in dyn_plan] + vis_plan, here=(0,))
    for summary in made[len(dyn_plan) :]:  # the visibility check reads their stale reads only
        summary.result = None
    dyn = check_dynamic(
        cfg,
        prof,
        occupancy=occupancy,
        launch=launch,
        seeds=seeds,
        jitter=jitter,
        extreme=extreme,
        made=made[: len(dyn_plan)],
    )
    # the static any-order witness, replayed in the engine: the two must agree
    if anyo.finishes is False and anyo.order is not None and static.finishes:
        replay = simulate(cfg, prof, occupancy=occupancy, order=anyo.order, launch=launch)
        anyo_engine: bool | None = not replay.deadlock
    else:
        anyo_engine = None
    vis = check_visibility(
        cfg, prof, occupancy=occupancy, launch=launch, seeds=seeds, made=made[len(dyn_plan) :]
    )
    role = check_role_rule(dyn.nominal, prof)
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
            cfg, prof, occupancy=occupancy, launch=launch, makespan=dyn.makespan, workers=workers
        )
        findings += notes
    inp = CheckInput(cfg, prof, occupancy, launch, dyn.nominal, built)
    sections = [s for s in (check(inp) for check in SECTIONS) if s is not None]
    for s in sections:
        findings += s.findings
    return LaunchReport(
        cfg,
        prof.name,
        static,
        anyo,
        dyn,
        vis,
        role,
        findings,
        anyo_engine,
        late,
        sections,
        prof.costs_from,
    )


# -- the report --------------------------------------------------------------------------------
def findings_text(fs: list[Finding]) -> list[str]:
    if not fs:
        return []
    return ["", *[f.text() for f in fs], ""]


def launch_text(rep: LaunchReport) -> str:
    spec = rep.kernel
    dyn = rep.dynamic
    res = dyn.runs[0].summary.residency
    lines = [
        f"{rep.gpu}  {spec.label(rep.cfg)}  occupancy {res.per_unit} ({res.slots} slots, "
        f"by {res.limited_by})",
        *([f"  costs: {rep.costs}"] if rep.costs else []),
        f"  deadlock, static, {rep.static.assumption}: {verdict(rep.static.finishes)}",
        f"  deadlock, static, {rep.any_order.assumption}: {verdict(rep.any_order.finishes)}"
        + (f" ({rep.any_order.note})" if rep.any_order.note else ""),
        f"  deadlock, engine, {dyn.assumption}, {len(dyn.runs)} runs "
        f"({', '.join(r.label for r in dyn.runs)}): {verdict(dyn.finishes)}"
        + (
            f", nominal makespan {dyn.makespan / 1e3:.2f} us"
            if dyn.finishes and dyn.makespan is not None
            else ""
        ),
        f"  visibility, {rep.visibility.runs} runs with stores acked late: "
        + ("ok" if rep.visibility.ok else f"{len(rep.visibility.stale)} STALE READS")
        + ("" if rep.visibility.flagged_loads else " (nothing to check: no load of flagged data)"),
        "  role rule: "
        + (
            f"{len(rep.role.blocked)} polls behind weight loads, "
            f"{sum(b.accepted for b in rep.role.blocked)} accepted by design"
            if rep.role.applies
            else "not applicable (loads retire out of order on this GPU)"
        ),
        *(s.line for s in rep.sections),
    ]
    if hook(spec, "tag_model") is None:
        lines.append(f"  tags (--tags): not available for {spec.name} (it defines no tag_model)")
    lines += findings_text(rep.findings)
    lines.append("PASS" if rep.ok else f"FAIL: {', '.join(sorted(c.value for c in rep.failing()))}")
    return "\n".join(lines)


def launch_json(rep: LaunchReport) -> dict[str, Any]:
    spec = rep.kernel
    dyn = rep.dynamic
    return {
        "kernel": spec.name,
        "gpu": rep.gpu,
        "costs": rep.costs,
        "config": spec.config_to_dict(rep.cfg),
        "ok": rep.ok,
        "failing": sorted(c.value for c in rep.failing()),
        "deadlock": {
            "static": {
                "assumption": rep.static.assumption,
                "finishes": rep.static.finishes,
                "stuck": len(rep.static.stuck),
            },
            "any_order": {
                "assumption": rep.any_order.assumption,
                "finishes": rep.any_order.finishes,
                "note": rep.any_order.note,
                "witness_order": None if rep.any_order.finishes else rep.any_order.order,
                "engine_on_witness_finishes": rep.any_order_engine,
            },
            "engine": {
                "assumption": dyn.assumption,
                "finishes": dyn.finishes,
                "runs": [
                    {
                        "run": r.label,
                        "finishes": r.finishes,
                        "makespan_ns": r.summary.makespan,
                    }
                    for r in dyn.runs
                ],
            },
        },
        "visibility": {
            "ok": rep.visibility.ok,
            "runs": rep.visibility.runs,
            "flagged_loads": rep.visibility.flagged_loads,
        },
        "role_rule": {
            "applies": rep.role.applies,
            "polls_behind_weights": len(rep.role.blocked),
            "accepted": sum(b.accepted for b in rep.role.blocked),
            "accepted_exposed_cost_ns": rep.role.accepted_cost_ns,
        },
        "late_loads": [asdict(x) for x in rep.late],
        **{s.key: s.data for s in rep.sections},
        "findings": [f.to_dict() for f in rep.findings],
    }
