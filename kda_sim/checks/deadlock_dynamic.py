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
from kda_sim.checks.run_summary import RunSummary, summarize
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
    summary: RunSummary

    @property
    def finishes(self) -> bool:
        return not self.summary.deadlock

    @property
    def result(self) -> SimResult | None:
        """The whole run: the nominal one (the first) and any that does not finish, where
        this process made it (always the nominal one: every run with one job); else None
        (a worker's, a finished one's: :mod:`kda_sim.checks.run_summary`)."""
        return self.summary.result


@dataclass
class DynamicVerdict:
    finishes: bool
    assumption: str
    runs: list[Run] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def makespan(self) -> float | None:
        return self.runs[0].summary.makespan if self.runs else None

    @property
    def nominal(self) -> SimResult:
        """The nominal run, whole (made in this process whatever the workers)."""
        res = self.runs[0].result
        assert res is not None, "check_dynamic runs the nominal run in this process"
        return res


# one engine run of a check's plan: its profile, its seed (None: nominal latencies) and
# the jitter a seed draws with
EngineRun = tuple[GpuProfile, int | None, float]


def dynamic_plan(
    prof: GpuProfile, seeds: Sequence[int], jitter: float, extreme: bool
) -> list[tuple[str, EngineRun]]:
    """The deadlock check's runs, labelled, the nominal one first."""
    plan: list[tuple[str, EngineRun]] = [("nominal", (prof, None, jitter))]
    plan += [(f"seed {s}, jitter {jitter}", (prof, s, jitter)) for s in seeds]
    if extreme:
        plan += [(name, (p, None, jitter)) for name, p in extremes(prof).items()]
    return plan


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
    made: Sequence[RunSummary] | None = None,
) -> DynamicVerdict:
    """``workers``: the processes the runs are shared among (None: this one); ``made``:
    the runs of :func:`dynamic_plan` already made, in its order (the nominal one whole),
    by a caller that shares them with other checks' runs."""
    plan = dynamic_plan(prof, seeds, jitter, extreme)
    if made is None:
        # the nominal run here: the role rule and the report's sections read it whole
        one = partial(run_one, cfg, occupancy, order, launch)
        made = (workers or Workers(1)).map(one, [run for _label, run in plan], here=(0,))
    runs = [Run(label, res) for (label, _run), res in zip(plan, made, strict=True)]
    for r in runs[1:]:
        # kept whole: the nominal run and a hang (the app charts the first); a finished
        # run's records (a K1 run's 100,000 objects) are dropped now, not carried by the
        # report and walked by the collector once the check ends
        if r.finishes:
            r.summary.result = None
    bad = [r for r in runs if not r.finishes]
    v = DynamicVerdict(not bad, assumption, runs)
    if bad:
        r = bad[0]
        stuck = r.summary.stuck
        first = next((s for s in stuck if s.region), stuck[0] if stuck else None)
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
                f"the engine ({r.label}, {assumption}) stops with {len(stuck)} CTAs "
                f"waiting.{where}{timing}",
                _unplaced_fix(r.summary, prof) or _finished_fix(r.summary, launch or cfg),
                details={"run": r.label, "stuck": len(stuck), "runs": len(runs)},
            )
        )
    return v


def run_one(
    cfg: Any,
    occupancy: int | None,
    order: Sequence[int] | None,
    launch: Launch | None,
    run: EngineRun,
) -> RunSummary:
    """One engine run of a plan, on its profile with its seed (None: nominal): what a
    worker process runs, and what it sends back (the summary, not the whole run)."""
    prof, seed, jitter = run
    return summarize(
        simulate(
            cfg, prof, occupancy=occupancy, seed=seed, jitter=jitter, order=order, launch=launch
        )
    )


def _unplaced_fix(res: RunSummary, prof: GpuProfile) -> str:
    """The fix of a hang where some CTAs never got a slot while the resident ones wait:
    a grid no larger than the GPU holds at once ("" when every CTA was resident)."""
    ctas = res.spans
    unplaced = sum(start is None for start, _end in ctas)
    if not unplaced:
        return ""
    r = res.residency
    return (
        f"size the grid to the GPU: at most {r.slots} CTAs resident at once ({r.per_unit} "
        f"a {prof.unit_name}, limited by {r.limited_by}), now {len(ctas)}; or make no "
        "resident CTA wait on what a CTA without a slot must do"
    )


def _finished_fix(res: RunSummary, launch: Any) -> str:
    """The fix of a hang on a count some CTAs finished without adding enough to: every CTA
    was resident, some finished, the rest wait on a word only positive adds write ("" else:
    a word also reset or exchanged has its own finding, the ABA check's)."""
    first = next((s for s in res.stuck if s.region), None)
    done = sum(start is not None and end is not None for start, end in res.spans)
    if first is None or not done or any(start is None for start, _end in res.spans):
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
        f"{done} of {len(res.spans)} CTAs finished while the rest wait on {word}: make every "
        "CTA reach each wait the others count on (as many arrivals in every CTA, padding "
        "with extra syncs), or wait only for what the launch writes"
    )
