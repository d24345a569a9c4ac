"""How many CTAs a unit (CU / SM) holds at once, and whether a shape fits at all.

One grid counts in slots (every CTA takes the same threads, registers and LDS, so a unit
holds a whole number of them). Grids launched together with different footprints share
each unit's threads, registers and LDS CTA by CTA (:class:`Footprint`): a small CTA can
sit beside a large one where a slot count would give each a whole slot."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile

SHARED = "each CTA's threads, registers and LDS"  # what limits grids that share units


@dataclass(frozen=True)
class Residency:
    per_unit: int
    slots: int
    limited_by: str
    overridden: bool
    shared: bool = False  # grids of different footprints share units resource by resource

    def holds(self, blocks: int) -> bool:
        return self.slots >= blocks


@dataclass(frozen=True)
class Footprint:
    """What one CTA takes of a unit while it is resident."""

    threads: int
    regs: int  # registers, every thread's
    lds: int  # bytes

    def text(self) -> str:
        return f"{self.threads} threads, {self.regs} registers, {self.lds} B of LDS"


def footprint(cfg: Any, prof: GpuProfile) -> Footprint:
    """A CTA's footprint for the launch ``cfg`` (its kernel's ``resources``)."""
    from kda_sim.kernels.registry import spec_for

    k = spec_for(cfg).resources(cfg, prof)
    return Footprint(k.threads, k.threads * k.regs_per_thread, k.lds_bytes or 0)


def short_of(used: Footprint, ctas: int, need: Footprint, prof: GpuProfile) -> str:
    """The first resource a unit holding ``used`` in ``ctas`` CTAs lacks for a CTA of
    ``need`` ("" when it fits), in the order the limits of :func:`residency` are named."""
    if used.threads + need.threads > prof.threads_per_unit:
        return "threads"
    if used.regs + need.regs > prof.regs_per_unit:
        return "registers"
    if used.lds + need.lds > prof.lds_per_unit:
        return "LDS"
    if ctas + 1 > prof.max_ctas_per_unit:
        return "CTAs a unit"
    return ""


def check_fits(cfg: Any, prof: GpuProfile) -> None:
    """The kernel's own limits beyond residency (its ``check_fits`` hook), if it has any."""
    from kda_sim.kernels.registry import spec_for
    from kda_sim.kernels.spec import hook

    fits = hook(spec_for(cfg), "check_fits")
    if fits is not None:
        fits(cfg, prof)


def check_occupancy(cfg: Any, prof: GpuProfile, occupancy: int | None) -> None:
    """An occupancy a user asked for (``--occupancy``, the what-if's), refused where the
    build's resources hold fewer CTAs a unit: that launch cannot run as built. (The
    occupancy a trace recorded is what ran, and library callers may model another
    build: :func:`residency` takes both and says so.)"""
    if occupancy is None or occupancy < 1:
        return  # none asked, or residency's own refusal names it
    from kda_sim.kernels.registry import spec_for

    own = residency(cfg, prof)
    if occupancy > own.per_unit:
        spec = spec_for(cfg)
        k = spec.resources(cfg, prof)
        took = {
            "threads": f"{k.threads} threads a CTA of the unit's {prof.threads_per_unit}",
            "registers": f"{k.regs_per_thread * k.threads} registers a CTA of the unit's "
            f"{prof.regs_per_unit}",
            "LDS": f"{k.lds_bytes} B of LDS a CTA of the unit's {prof.lds_per_unit} B",
        }.get(own.limited_by, f"at most {prof.max_ctas_per_unit} CTAs a unit")
        raise InvalidInput(
            f"--occupancy {occupancy}: this build's {own.limited_by} allow {own.per_unit} "
            f"CTA(s) a {prof.unit_name} on {prof.name} at {spec.label(cfg)} ({took}); a "
            f"build that takes less is another profile (a --profile overlay with its "
            f"resources)",
            what="occupancy",
        )


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


def shared_residency(own: Residency, prof: GpuProfile) -> Residency:
    """The residency of grids that share units by footprint: a unit takes CTAs while its
    threads, registers, LDS and CTA count allow, so only the CTA count is a slot count
    (``own``: the first grid's; an ``--occupancy`` there caps CTAs a unit)."""
    if own.overridden:
        return Residency(own.per_unit, own.slots, own.limited_by, True, shared=True)
    n = prof.max_ctas_per_unit
    return Residency(n, n * prof.units, SHARED, False, shared=True)
