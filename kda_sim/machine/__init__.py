"""The machine model: GPU profiles (data), a kernel's costs merged onto them, residency."""

from kda_sim.machine.costs import profile_for
from kda_sim.machine.profile import GpuProfile, bundled_names, load_gpu, load_profile
from kda_sim.machine.residency import Residency, check_fits, residency

__all__ = [
    "GpuProfile",
    "Residency",
    "bundled_names",
    "check_fits",
    "load_gpu",
    "load_profile",
    "profile_for",
    "residency",
]
