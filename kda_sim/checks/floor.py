"""How fast a protocol could run on a GPU: the model with its costs taken away, step by step.

A ladder of what-ifs, each on top of the one before: the profile as it is; every stage's
compute free; the weight stream at a given read rate; the hand-offs at a given minimum;
every latency not given at 0; and last the weights held on chip from the kernel's start
(the seed's register-held first group, where the Triton K1 streams each group after XRDY
because 229 KB a CTA does not fit the H200's registers). What is left is the protocol's
own chain (hand-offs in order, the weight read behind the XRDY flags), set against the
HBM bound (the launch's bytes at the datasheet's bandwidth). Like the late-load advice,
it prices what-ifs by simulating them; ``kda-sim floor`` and the app's what-if
view show it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import spec_for
from kda_sim.machine.profile import FIRST_TRY, MIN_POLL_NS, PUT_BEHIND, GpuProfile
from kda_sim.timeline.critical import critical_path

# the latencies the figures do not set (none measured on the H200 here): 0 at that rung,
# the most optimistic
OTHERS = (
    "hbm_load",
    "l2_load",
    "store_ack",
    "barrier",
    "retry",
    "dispatch",
    "cold_code",
    "poll_lane",
    "backoff",
    *FIRST_TRY,
    *PUT_BEHIND,
)
HANDOFF = "(hand-off latency)"  # critical_path's name for time between a put and its poll


@dataclass(frozen=True)
class Figures:
    """The measured figures the ladder sets (B/ns and ns)."""

    stream_bytes_per_ns: float
    visibility_ns: float
    poll_ns: float


def _no_compute(p: GpuProfile, _f: Figures) -> GpuProfile:
    free = {f"cost_{k}": (0.0, 0.0) for k in p.costs}
    return replace(p.with_params(**free, cold_code=0.0), cost_above={}, unit_share=0.0)


def _best_stream(p: GpuProfile, f: Figures) -> GpuProfile:
    # one CTA's cap lifted: only the whole stream's rate bounds the read
    return p.with_params(hbm_bytes_per_ns=f.stream_bytes_per_ns, unit_bytes_per_ns=1e6)


def _measured_handoffs(p: GpuProfile, f: Figures) -> GpuProfile:
    # one figure for every pair of CTAs: the least a store takes to be seen (on a GPU of
    # several XCDs, a floor, as the same-XCD figure stands for the cross-XCD one too)
    v = f.visibility_ns
    return p.with_params(visibility_same_xcd=v, visibility_cross_xcd=v, poll=f.poll_ns)


def _others_zero(p: GpuProfile, _f: Figures) -> GpuProfile:
    return p.with_params(**dict.fromkeys(OTHERS, 0.0))


def _held_weights(p: GpuProfile, _f: Figures) -> GpuProfile:
    return replace(p, streamed_weights=False)


Rung = tuple[str, Callable[[GpuProfile, Figures], GpuProfile]]
LADDER: tuple[Rung, ...] = (
    ("every stage's compute free", _no_compute),
    ("the weight stream at the best measured read", _best_stream),
    ("hand-offs at their measured minimum", _measured_handoffs),
    ("every other latency 0", _others_zero),
    ("weights held on chip from the start (the seed's form)", _held_weights),
)


def check_figures(f: Figures, prof: GpuProfile) -> None:
    if f.stream_bytes_per_ns <= 0 or f.visibility_ns < 0 or f.poll_ns < MIN_POLL_NS:
        raise InvalidInput(
            f"the stream must be > 0, the latencies >= 0 and a poll's round trip "
            f">= {MIN_POLL_NS:g} ns",
            what="figures",
        )
    peak = prof.hbm_peak_bytes_per_ns
    if peak is not None and f.stream_bytes_per_ns > peak:
        raise InvalidInput(
            f"a stream of {f.stream_bytes_per_ns / 1e3:g} TB/s is above the datasheet's "
            f"{peak / 1e3:g} TB/s ({prof.name})",
            what="stream",
        )


def rung(
    label: str, cfg: Any, prof: GpuProfile, peak: float, occupancy: int | None = None
) -> dict[str, Any]:
    res = simulate(cfg, prof, occupancy=occupancy)
    tl = res.timeline
    if tl.makespan is None:
        name = spec_for(cfg).label(cfg)
        raise InvalidInput(f"{name} does not finish on {prof.name}", where=label)
    path = critical_path(tl)
    by_stage = dict(path.by_stage) if path else {}
    bound = res.hbm_bytes / peak
    return {
        "step": label,
        "makespan_us": tl.makespan / 1e3,
        "bound_us": bound / 1e3,
        # a launch that reads nothing from HBM (a ticket queue's counters) has no bound
        "x_bound": tl.makespan / bound if bound > 0 else float("inf"),
        "handoff_latency_us": by_stage.get(HANDOFF, 0.0) / 1e3,
        "gemv_us": sum(v for k, v in by_stage.items() if k.startswith("gemv")) / 1e3,
        "critical_path_us": {k: v / 1e3 for k, v in sorted(by_stage.items())},
    }


def ladder(cfg: Any, prof: GpuProfile, f: Figures, occupancy: int | None = None) -> dict[str, Any]:
    """Every rung's makespan, its multiple of the bound and its critical path;
    ``occupancy``: CTAs a unit (default: from the kernel's resources)."""
    check_figures(f, prof)
    # the bound: the launch's bytes at the datasheet's bandwidth
    peak = prof.hbm_peak_bytes_per_ns or prof.hbm_bytes_per_ns
    rows = [rung(f"the profile ({prof.name})", cfg, prof, peak, occupancy)]
    costs = prof.costs_from
    for label, step in LADDER:
        prof = step(prof, f)
        rows.append(rung(f"+ {label}", cfg, prof, peak, occupancy))
    return {
        "config": spec_for(cfg).label(cfg),
        "costs": costs,  # which kernel costs the profile's rung ran
        "figures": {
            "stream_tbps": f.stream_bytes_per_ns / 1e3,
            "visibility_ns": f.visibility_ns,
            "poll_ns": f.poll_ns,
        },
        "rows": rows,
    }
