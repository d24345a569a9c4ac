"""The faults a watchdog build can plant, named once. Imports nothing, so the CLI's parser
(``kda_sim/commands/kernel.py``) lists them without importing torch or Triton."""

from __future__ import annotations

# fault -> the kernel's inj_mode; skip-bump is planted by the host (the epoch is not bumped)
INJECT_CODES = {"drop": 1, "corrupt": 2, "skip-bump": 0}
FAULTS = tuple(INJECT_CODES)
