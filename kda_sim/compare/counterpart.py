"""A measured trace's simulated counterpart, made on demand and cached.

The counterpart simulates the kernel, configuration and protocol variants the trace's
meta names, on its GPU's bundled profile (for our Triton K1 on the H200, the fitted
``h200-k1``; for the grid barrier on the H100, ``h100``) or a given one, with the
measured build's resources and CTAs an SM (:mod:`kda_sim.compare.launch`), nominal (no
jitter): what ``kda-sim compare`` runs against the trace. Counterparts are not
committed: :func:`counterpart` keeps them in the user's cache (:mod:`kda_sim.cache`),
keyed by the trace's checksum, the profile's identity (its every figure and the costs it
says it ran, never its name alone: :meth:`GpuProfile.identity`) and the code; ``kda-sim
simulate --like TRACE --out FILE`` writes one.
"""

from __future__ import annotations

from pathlib import Path

from kda_sim import cache
from kda_sim.compare.launch import (
    occupancy_of,
    placement_of,
    profile_of,
    resources,
    with_resources,
)
from kda_sim.compare.model import config_of
from kda_sim.engine import SimResult, simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.machine.profile import GpuProfile
from kda_sim.timeline.chrome import read_chrome, write_chrome
from kda_sim.timeline.model import Timeline

KIND = "counterparts"


def read_k1_trace(path: Path) -> Timeline:
    """A measured trace of our K1 (one ``kda-sim kernel run --trace`` wrote); anything
    else is invalid input, named."""
    return _k1_only(_read(path), path)


def read_like_trace(path: Path) -> Timeline:
    """A measured trace whose launch ``simulate --like`` can run again: our K1's (its
    build named: the simulation runs the build's resources) or another kernel's, its
    configuration in its meta (the grid barrier's in ``traces/``); anything else is
    invalid input, named."""
    tl = _read(path)
    if tl.meta.source == "measured" and tl.meta.kernel != "k1":
        return tl
    return _k1_only(tl, path)


def _read(path: Path) -> Timeline:
    if not path.is_file():
        raise InvalidInput("no such trace file", where=str(path))
    return read_kernel_trace(path)


def _k1_only(tl: Timeline, path: Path) -> Timeline:
    if tl.meta.measured_build() != "k1":
        what = "a simulated timeline" if tl.meta.source != "measured" else "a measured trace"
        raise InvalidInput(
            f"{what} that is not of our K1 (its meta names no Triton build): "
            f"--like takes a trace that `kda-sim kernel run --trace` wrote",
            where=str(path),
        )
    return tl


def like_profile(tl: Timeline, explicit: str | None = None) -> GpuProfile:
    """``explicit`` (a name or a file), else the trace's GPU's bundled profile, running the
    measured build."""
    return with_resources(profile_of(tl, explicit), resources(tl))


def simulate_like(
    tl: Timeline,
    prof: GpuProfile,
    occupancy: int | None = None,
    seed: int | None = None,
    jitter: float = 0.15,
    name: str | None = None,
) -> SimResult:
    """The launch ``tl`` ran, simulated on ``prof`` (CTAs an SM: ``occupancy``, else the
    trace's, with each CTA on the unit the trace recorded). The timeline's meta says what
    it simulates and on what."""
    own = occupancy is None  # the trace's residency: its placement too
    occ = occupancy_of(tl) if own else occupancy
    # a ticket launch with its items where the trace took them (config_of)
    res = simulate(
        config_of(tl),
        prof,
        occupancy=occ,
        seed=seed,
        jitter=jitter,
        placement=placement_of(tl, prof) if own else None,
    )
    extra = res.timeline.meta.extra
    if name:
        extra["simulates"] = name
    extra["simulation"] = {
        "profile": prof.name,
        "costs": prof.costs_from,
        "occupancy": res.residency.per_unit,
        "slots": res.residency.slots,
        "limited_by": res.residency.limited_by,
        "hbm_bytes": res.hbm_bytes,
        "stale_reads": len(res.stale_reads),
    }
    return res


def counterpart_path(path: Path, explicit: str | None = None, tl: Timeline | None = None) -> Path:
    """The cached counterpart of the trace at ``path`` (made now if absent; ``tl``: the
    trace, where the caller has read it already): a Chrome JSON timeline whose
    ``meta.extra["simulation"]`` has the run's residency and HBM bytes."""
    if tl is None:
        tl = read_like_trace(path)
    prof = like_profile(tl, explicit)
    entry = cache.key("counterpart", cache.file_sha256(path), prof.identity()) + ".json"

    def make(out: Path) -> None:
        write_chrome(simulate_like(tl, prof, name=path.name).timeline, out)

    return cache.cached_file(KIND, entry, make)


def counterpart(path: Path, explicit: str | None = None, tl: Timeline | None = None) -> Timeline:
    """The simulated counterpart of the trace at ``path`` (see the module docstring)."""
    return read_chrome(counterpart_path(path, explicit, tl))
