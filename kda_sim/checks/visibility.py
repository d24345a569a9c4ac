"""Visibility: flagged data (x rows after XRDY) is never read older than its producer
wrote it.

The engine records a read of flagged data before the producer's stores were acknowledged
(``SimResult.stale_reads``). The nominal profile can hide a missing drain (a store acked
before the flag's poll returns anyway), so the check also runs an adversarial store model:
plain stores acknowledged 50x later than the profile says and flags visible at once (the
fastest hand-off a consumer could see), with jittered seeds. The real publish (drain, then
the flag) stays clean under it because the flag's put waits for every ack.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.engine import SimResult, StaleRead, simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.regions import Region
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.program import Launch
from kda_sim.protocol.space import CellSpace

STORE_SLOW = 50.0


def adversarial(prof: GpuProfile) -> GpuProfile:
    """Stores slow to land, flags fast to be seen."""
    lat = prof.latency_ns
    return prof.with_params(
        store_ack=lat["store_ack"] * STORE_SLOW,
        visibility_same_xcd=0.0,
        visibility_cross_xcd=0.0,
    )


@dataclass
class VisibilityVerdict:
    ok: bool
    runs: int
    stale: list[StaleRead] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


def check_visibility(
    cfg: LaunchConfig,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    seeds: Sequence[int] = (1,),
    jitter: float = 0.5,
    results: Sequence[SimResult] = (),
) -> VisibilityVerdict:
    """``results``: runs already made (e.g. by the deadlock check) to look at as well."""
    adv = adversarial(prof)
    runs = list(results)
    runs.append(simulate(cfg, adv, occupancy=occupancy, launch=launch))
    for s in seeds:
        runs.append(simulate(cfg, adv, occupancy=occupancy, seed=s, jitter=jitter, launch=launch))
    stale = [r for res in runs for r in res.stale_reads]
    v = VisibilityVerdict(not stale, len(runs), stale)
    if stale:
        space = CellSpace.of(cfg)
        first = min(stale, key=lambda r: r.read_at)
        sl = first.cell - space.offsets[Region.X] if first.cell >= 0 else first.producer
        slices = sorted({r.cell for r in stale})
        landed = (
            "had not landed"
            if first.visible_at == float("inf")
            else f"landed only at {first.visible_at:.0f} ns"
        )
        v.findings.append(
            Finding(
                Category.VISIBILITY,
                Severity.FAIL,
                f"CTA {first.cta} in {first.stage} read the x rows of slice {sl} (X[{sl}], "
                f"flagged by XRDY[{sl}] with this launch's tag) at {first.read_at:.0f} ns, but "
                f"attn CTA {sl}'s stores {landed}: the flag was seen before the data. "
                f"{len(stale)} stale reads of {len(slices)} slices in {len(runs)} runs (stores "
                f"acked {STORE_SLOW:g}x late).",
                "drain the CTA's stores before the flag (s_waitcnt vmcnt(0), barrier, then "
                "the XRDY put: Publish(drain=True)) and keep the x stores before the publish",
                {
                    "cta": first.cta,
                    "stage": first.stage,
                    "region": "X",
                    "index": sl,
                    "flag": f"XRDY[{sl}]",
                    "read_at": first.read_at,
                    "visible_at": first.visible_at,
                    "count": len(stale),
                },
            )
        )
    return v
