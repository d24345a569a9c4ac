"""Visibility: flagged data (data a Publish flags, e.g. K1's x rows after XRDY) is never
read older than its producer wrote it.

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
from functools import partial
from typing import Any

from kda_sim.checks.deadlock_dynamic import EngineRun, run_one
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.run_summary import RunSummary
from kda_sim.engine import SimResult, StaleRead
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import FlaggedData, hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.parallel import Workers
from kda_sim.protocol.handoffs import handoffs_of
from kda_sim.protocol.ops import Load, Publish, Store
from kda_sim.protocol.program import Launch

STORE_SLOW = 50.0
JITTER = 0.5  # the seeded runs' jitter


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
    flagged_loads: int = 0  # loads of flagged data in the launch: 0, nothing was checked


def stored_by(launch: Launch, cell: int) -> tuple[int, str]:
    """The CTA whose plain store writes ``cell`` and the flag its next Publish puts
    (``REGION[i]``): (-1, "") when no store of the launch writes it."""
    space = launch.space
    for prog in launch.programs:
        stored = False
        for op in prog.ops:
            if isinstance(op, Store) and cell in op.cells:
                stored = True
            elif stored and isinstance(op, Publish) and len(op.cells):
                region, index = space.split(int(op.cells[0]))
                return prog.cta, f"{region.name}[{index}]"
        if stored:
            return prog.cta, ""
    return -1, ""


def name_flagged(cfg: Any, launch: Launch, read: StaleRead) -> FlaggedData:
    """The words for the flagged data of ``read``: the kernel's (``name_flagged`` hook),
    else its region and index, the flag its writer publishes and the writer."""
    space = launch.space
    region, index = (None, -1) if read.cell < 0 else space.split(read.cell)
    name = None if region is None else region.name
    own = hook(spec_for(cfg), "name_flagged")
    if own is not None:
        return own(name, index, read.producer)
    cta, flag = stored_by(launch, read.cell) if read.cell >= 0 else (read.producer, "")
    cta = read.producer if read.producer >= 0 else cta
    data = f"{name}[{index}]" if name is not None else "flagged data"
    flagged = f"flagged by {flag}" if flag else "flagged"
    return FlaggedData(
        f"{data} ({flagged} with this launch's tag)",
        flag or "its flag",
        f"CTA {cta}" if cta >= 0 else "its writer",
    )


def visibility_plan(prof: GpuProfile, seeds: Sequence[int], jitter: float) -> list[EngineRun]:
    """The check's runs: the adversarial store model, nominal and with each seed."""
    adv = adversarial(prof)
    return [(adv, None, jitter), *((adv, s, jitter) for s in seeds)]


def check_visibility(
    cfg: Any,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    seeds: Sequence[int] = (1,),
    jitter: float = JITTER,
    results: Sequence[SimResult | RunSummary] = (),
    workers: Workers | None = None,
    made: Sequence[RunSummary] | None = None,
) -> VisibilityVerdict:
    """``results``: runs already made (e.g. by the deadlock check) to look at as well;
    ``workers``: the processes the runs are shared among (None: this one); ``made``: the
    runs of :func:`visibility_plan` already made, by a caller that shares them with
    other checks' runs."""
    if made is None:
        one = partial(run_one, cfg, occupancy, None, launch)
        made = (workers or Workers(1)).map(one, visibility_plan(prof, seeds, jitter))
    runs: list[SimResult | RunSummary] = [*results, *made]
    stale = [r for res in runs for r in res.stale_reads]
    built = launch if launch is not None else handoffs_of(cfg).launch  # the engine's, cached
    flagged = sum(isinstance(op, Load) and bool(op.reads) for p in built.programs for op in p.ops)
    v = VisibilityVerdict(not stale, len(runs), stale, flagged_loads=flagged)
    if stale:
        space = built.space
        first = min(stale, key=lambda r: r.read_at)
        words = name_flagged(cfg, built, first)
        region, index = (None, -1) if first.cell < 0 else space.split(first.cell)
        cells = sorted({r.cell for r in stale})
        landed = (
            "had not landed"
            if first.visible_at == float("inf")
            else f"landed only at {first.visible_at:.0f} ns"
        )
        v.findings.append(
            Finding(
                Category.VISIBILITY,
                Severity.FAIL,
                f"CTA {first.cta} in {first.stage} read {words.data} at {first.read_at:.0f} "
                f"ns, but {words.writer}'s stores {landed}: the flag was seen before the data. "
                f"{len(stale)} stale reads of {len(cells)} {words.unit} in {len(runs)} runs "
                f"(stores acked {STORE_SLOW:g}x late).",
                words.fix,
                {
                    "cta": first.cta,
                    "stage": first.stage,
                    "region": None if region is None else region.name,
                    "index": index if region is not None else first.producer,
                    "flag": words.flag,
                    "read_at": first.read_at,
                    "visible_at": first.visible_at,
                    "count": len(stale),
                },
            )
        )
    return v
