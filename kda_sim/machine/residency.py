"""How many CTAs a unit (CU / SM) holds at once, and whether a shape fits at all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile


@dataclass(frozen=True)
class Residency:
    per_unit: int
    slots: int
    limited_by: str
    overridden: bool

    def holds(self, blocks: int) -> bool:
        return self.slots >= blocks


def check_fits(cfg: Any, prof: GpuProfile) -> None:
    """The kernel's own limits beyond residency (its ``check_fits`` hook), if it has any."""
    from kda_sim.kernels.registry import spec_for
    from kda_sim.kernels.spec import hook

    fits = hook(spec_for(cfg), "check_fits")
    if fits is not None:
        fits(cfg, prof)


def residency(cfg: Any, prof: GpuProfile, occupancy: int | None = None) -> Residency:
    """CTAs a unit holds, from the threads, registers and LDS a CTA of the kernel takes
    (or ``occupancy`` if given)."""
    if occupancy is not None:
        if occupancy < 1:
            raise InvalidInput(f"--occupancy {occupancy}: at least 1", what="occupancy")
        by = "--occupancy"
        own = residency(cfg, prof)
        if occupancy > own.per_unit:  # a build that takes fewer resources, said so
            allow = f"{own.per_unit} a {prof.unit_name}"
            by += f", more than this build's {own.limited_by} allow ({allow})"
        return Residency(occupancy, occupancy * prof.units, by, True)
    from kda_sim.kernels.registry import spec_for

    k = spec_for(cfg).resources(cfg, prof)
    lds = k.lds_bytes or 0
    limits = {
        "threads": prof.threads_per_unit // k.threads,
        "registers": prof.regs_per_unit // (k.regs_per_thread * k.threads),
        **({"LDS": prof.lds_per_unit // lds} if lds > 0 else {}),
        "CTAs a unit": prof.max_ctas_per_unit,
    }
    by = min(limits, key=lambda n: limits[n])
    n = limits[by]
    return Residency(n, n * prof.units, by, False)
