"""Deadlock freedom by running the engine under adversarial timing.

Nominal latencies, several seeds with large jitter, and extreme settings (hand-offs,
memory or dispatch 20x slower than the profile says) each run once; a launch is called
deadlock-free only if every run finishes. ``order`` runs a given dispatch order (the
witness of the static any-order analysis)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.engine import SimResult, simulate
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.program import Launch

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
) -> DynamicVerdict:
    plan: list[tuple[str, GpuProfile, int | None]] = [("nominal", prof, None)]
    plan += [(f"seed {s}, jitter {jitter}", prof, s) for s in seeds]
    if extreme:
        plan += [(name, p, None) for name, p in extremes(prof).items()]
    runs = []
    for label, p, seed in plan:
        res = simulate(
            cfg, p, occupancy=occupancy, seed=seed, jitter=jitter, order=order, launch=launch
        )
        runs.append(Run(label, res))
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
                details={"run": r.label, "stuck": len(tl.stuck), "runs": len(runs)},
            )
        )
    return v
