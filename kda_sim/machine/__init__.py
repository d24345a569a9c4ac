"""The machine model: GPU profiles (data) and residency."""

from kda_sim.machine.profile import GpuProfile, bundled_names, load_profile
from kda_sim.machine.residency import Residency, check_fits, lds_bytes, residency

__all__ = [
    "GpuProfile",
    "Residency",
    "bundled_names",
    "check_fits",
    "lds_bytes",
    "load_profile",
    "residency",
]
