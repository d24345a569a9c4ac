"""Simulating "the same configuration" as a measured trace: which bundled profile its
GPU is, and the measured build's resources.

A measured trace names its GPU as the driver does ("NVIDIA H200"); the bundled
profiles are named "h200". Our H200 traces also record the compiled kernel's
resources (``meta.extra["resources"]``: threads, registers a thread, shared bytes,
CTAs an SM): the simulated launch uses them, so the model runs with the residency the
real one had. The Triton build keeps its shared memory at ``shared_bytes`` for every
shape (the x rows are not staged in shared memory), so the AMD build's x-rows limit
(``x_lds_budget``) does not bound it: the launch's profile lifts it. Nor does it hold a
gemv weight group in registers from the kernel's start, as the seed's build does: it
streams each group through its loop, so the launch's profile streams its weights
(``streamed_weights``). Only our Triton K1 records its resources (``kernel/run.py``), so
a trace that records them is taken for that build.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile, KernelResources, bundled_for, load_profile
from kda_sim.timeline.model import Timeline

NO_X_LIMIT = 2**31 - 1
MEASURED_BUILD = "kernel (measured build)"  # the sources entry that says so


def profile_of(tl: Timeline, explicit: str | None = None) -> GpuProfile:
    """``explicit`` (a name or a file), else the trace's GPU's bundled profile; with the
    costs of the kernel the trace ran: of the build it ran, where that build has its own
    fitted overlay (``h200-k1-kda_tickets``: the kernel's ``cost_build`` hook names it)."""
    if explicit:
        return load_profile(explicit, kernel=tl.meta.kernel)
    name = bundled_for(tl.meta.gpu, tl.meta.measured_build())
    if name is None:
        raise InvalidInput(
            f"the trace's GPU {tl.meta.gpu!r} has no bundled profile: pass --gpu / --profile",
            what="gpu",
        )
    return load_profile(build_profile(name, tl), kernel=tl.meta.kernel)


def build_profile(name: str, tl: Timeline) -> str:
    """``name``'s alias for the build the trace ran (``h200-k1`` -> ``h200-k1-kda_tickets``)
    where that build has its own fitted overlay, else ``name``."""
    from kda_sim.kernels.registry import get
    from kda_sim.kernels.spec import hook
    from kda_sim.machine.costs import aliases

    spec = get(tl.meta.kernel)
    of = hook(spec, "cost_build")
    if of is None:
        return name
    build = of(spec.validate(tl.meta.config()))
    return f"{name}-{build}" if build and f"{name}-{build}" in aliases() else name


def resources(tl: Timeline) -> dict[str, Any] | None:
    r = tl.meta.extra.get("resources") if isinstance(tl.meta.extra, dict) else None
    if not isinstance(r, dict):
        return None
    need = ("threads", "regs_per_thread", "shared_bytes")
    if not all(isinstance(r.get(k), int) and not isinstance(r.get(k), bool) for k in need):
        return None
    return r


def with_resources(prof: GpuProfile, res: dict[str, Any] | None) -> GpuProfile:
    """``prof`` running the measured build (see the module docstring)."""
    if res is None:
        return prof
    kernel = KernelResources(
        int(res["threads"]), int(res["regs_per_thread"]), int(res["shared_bytes"])
    )
    if kernel == prof.kernel and prof.x_lds_budget == NO_X_LIMIT and prof.streamed_weights:
        return prof
    src = dict(prof.sources)
    src[MEASURED_BUILD] = (
        f"the traced build's resources: {kernel.threads} threads, {kernel.regs_per_thread} "
        f"registers a thread, {kernel.lds_bytes} B shared for every shape; x rows are not "
        f"staged in shared memory, so no x-rows limit; its gemv streams each weight group "
        f"through its loop (streamed_weights)"
    )
    return replace(prof, kernel=kernel, x_lds_budget=NO_X_LIMIT, streamed_weights=True, sources=src)


def occupancy_of(tl: Timeline) -> int | None:
    """CTAs an SM the measured launch had, where the trace says."""
    r = resources(tl) or {}
    v = r.get("ctas_per_sm")
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else None


def placement_of(tl: Timeline, prof: GpuProfile) -> tuple[int, ...] | None:
    """Each CTA's unit as the measured launch placed it, for ``simulate(placement=...)``:
    the hardware's block scheduler places blocks by state the model does not hold (on the
    H200 the first GPC a launch fills rotates from launch to launch, so which CTAs share
    an SM differs between launches of one shape). None where the trace does not say, or
    says in units ``prof`` does not have (a unit past its count, an XCD not the unit's)."""
    per_xcd = prof.units // prof.xcds
    units: list[int] = []
    for c in tl.ctas:
        u = c.unit
        if u is None or not 0 <= u < prof.units or (c.xcd is not None and c.xcd != u // per_xcd):
            return None
        units.append(u)
    return tuple(units)
