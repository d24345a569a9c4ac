"""The machine model: GPU profiles (data) and residency."""

from kda_sim.machine.profile import GpuProfile, bundled_names, load_profile
from kda_sim.machine.residency import Residency, check_fits, residency

__all__ = [
    "GpuProfile",
    "Residency",
    "bundled_names",
    "check_fits",
    "load_profile",
    "residency",
]
