"""Deadlock freedom by running the engine under adversarial timing.

Nominal latencies, several seeds with large jitter, and extreme settings (hand-offs,
memory or dispatch 20x slower than the profile says) each run once; a launch is called
deadlock-free only if every run finishes. ``order`` runs a given dispatch order (the
witness of the static any-order analysis)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.engine import SimResult, simulate
from kda_sim.machine.profile import GpuProfile
from kda_sim.parallel import Workers
from kda_sim.protocol.counters import Atomic, AtomicKind, Reset
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import walk

SLOW = 20.0


def extremes(prof: GpuProfile) -> dict[str, GpuProfile]:
    lat = prof.latency_ns
    return {
        "slow hand-offs": prof.with_params(
            poll=lat["poll"] * SLOW,
            visibility_same_xcd=lat["visibility_same_xcd"] * SLOW,
            visibility_cross_xcd=lat["visibility_cross_xcd"] * SLOW,
        ),
        "slow memory": prof.with_params(
            hbm_load=lat["hbm_load"] * SLOW,
            store_ack=lat["store_ack"] * SLOW,
            hbm_bytes_per_ns=prof.hbm_bytes_per_ns / SLOW,
        ),
        "slow dispatch": prof.with_params(dispatch=max(lat["dispatch"], 1.0) * 1000.0),
    }


@dataclass
class Run:
    label: str
    result: SimResult

    @property
    def finishes(self) -> bool:
        return not self.result.deadlock


@dataclass
class DynamicVerdict:
    finishes: bool
    assumption: str
    runs: list[Run] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def makespan(self) -> float | None:
        return self.runs[0].result.timeline.makespan if self.runs else None


def check_dynamic(
    cfg: Any,  # the kernel's configuration
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    order: Sequence[int] | None = None,
    seeds: Sequence[int] = (1, 2, 3),
    jitter: float = 0.9,
    extreme: bool = True,
    assumption: str = "in-order block dispatch",
    workers: Workers | None = None,
) -> DynamicVerdict:
    """``workers``: the processes the runs are shared among (None: this one)."""
    plan: list[tuple[str, GpuProfile, int | None]] = [("nominal", prof, None)]
    plan += [(f"seed {s}, jitter {jitter}", prof, s) for s in seeds]
    if extreme:
        plan += [(name, p, None) for name, p in extremes(prof).items()]
    one = partial(run_one, cfg, occupancy, jitter, order, launch)
    results = (workers or Workers(1)).map(one, [(p, seed) for _label, p, seed in plan])
    runs = [Run(label, res) for (label, _p, _s), res in zip(plan, results, strict=True)]
    bad = [r for r in runs if not r.finishes]
    v = DynamicVerdict(not bad, assumption, runs)
    if bad:
        r = bad[0]
        tl = r.result.timeline
        first = next((s for s in tl.stuck if s.region), tl.stuck[0] if tl.stuck else None)
        where = ""
        if first is not None:
            task = f" (task {first.task})" if first.task >= 0 else ""
            at = f" on {first.region}[{first.index}] for this launch's tag" if first.region else ""
            where = f" CTA {first.cta} waits in {first.stage}{task}{at}: {first.reason}."
        timing = (
            ""
            if len(bad) == len(runs)
            else f" Timing-dependent: {len(runs) - len(bad)} of {len(runs)} runs finished."
        )
        v.findings.append(
            Finding(
                Category.DEADLOCK,
                Severity.FAIL,
                f"the engine ({r.label}, {assumption}) stops with {len(tl.stuck)} CTAs "
                f"waiting.{where}{timing}",
                _unplaced_fix(r.result, prof) or _finished_fix(r.result, launch or cfg),
                details={"run": r.label, "stuck": len(tl.stuck), "runs": len(runs)},
            )
        )
    return v


def run_one(
    cfg: Any,
    occupancy: int | None,
    jitter: float,
    order: Sequence[int] | None,
    launch: Launch | None,
    run: tuple[GpuProfile, int | None],
) -> SimResult:
    """One engine run of the plan, on its profile with its seed (None: nominal): what a
    worker process runs."""
    prof, seed = run
    return simulate(
        cfg, prof, occupancy=occupancy, seed=seed, jitter=jitter, order=order, launch=launch
    )


def _unplaced_fix(res: SimResult, prof: GpuProfile) -> str:
    """The fix of a hang where some CTAs never got a slot while the resident ones wait:
    a grid no larger than the GPU holds at once ("" when every CTA was resident)."""
    ctas = res.timeline.ctas
    unplaced = sum(c.start is None for c in ctas)
    if not unplaced:
        return ""
    r = res.residency
    return (
        f"size the grid to the GPU: at most {r.slots} CTAs resident at once ({r.per_unit} "
        f"a {prof.unit_name}, limited by {r.limited_by}), now {len(ctas)}; or make no "
        "resident CTA wait on what a CTA without a slot must do"
    )


def _finished_fix(res: SimResult, launch: Any) -> str:
    """The fix of a hang on a count some CTAs finished without adding enough to: every CTA
    was resident, some finished, the rest wait on a word only positive adds write ("" else:
    a word also reset or exchanged has its own finding, the ABA check's)."""
    tl = res.timeline
    first = next((s for s in tl.stuck if s.region), None)
    done = sum(c.start is not None and c.end is not None for c in tl.ctas)
    if first is None or not done or any(c.start is None for c in tl.ctas):
        return ""
    if not isinstance(launch, Launch):
        from kda_sim.kernels.registry import spec_for

        launch = spec_for(launch).build(launch)
    space = launch.space
    cell = int(space.gid(space.names.index(first.region), first.index))
    walked: set[int] = set()
    for prog in launch.programs:
        for _site, op in walk(prog, walked):  # ticket loops' bodies included
            if isinstance(op, Reset) and cell in op.cells:
                return ""
            mixed = isinstance(op, Atomic) and (op.kind is not AtomicKind.ADD or op.value <= 0)
            if mixed and op.cell == cell:
                return ""
    word = f"{first.region}[{first.index}]"
    return (
        f"{done} of {len(tl.ctas)} CTAs finished while the rest wait on {word}: make every "
        "CTA reach each wait the others count on (as many arrivals in every CTA, padding "
        "with extra syncs), or wait only for what the launch writes"
    )
