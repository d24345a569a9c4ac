"""The faults a watchdog build plants (``kda_sim.kernels.k1.constants.FAULTS``) and the
kernel's code for each: ``drop`` skips the put of one scratch word, ``corrupt`` writes it
with a wrong tag; ``skip-bump`` is planted by the host, which runs a step without bumping
the epoch. Imports neither torch nor Triton."""

from __future__ import annotations

from kda_sim.kernels.k1.constants import FAULTS

# fault -> the kernel's inj_mode
INJECT_CODES = {"drop": 1, "corrupt": 2, "skip-bump": 0}
assert tuple(INJECT_CODES) == FAULTS
