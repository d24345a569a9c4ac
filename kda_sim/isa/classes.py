"""What a vector-memory op loads: weights, staging, flagged data or mailbox pairs.

The kernel argument its resource came from decides when the caller names the
arguments' classes (our kernels do); otherwise the cache bits do: ``nt`` streams
(weights), ``sc0`` / ``sc1`` / ``glc`` are coherent (mailbox pairs), the rest is
staging; ``scratch_`` ops are register spills. gfx942 / gfx950 buffer ``aux``:
bit 0 sc0, bit 1 nt, bit 4 sc1.
"""

from __future__ import annotations

from collections.abc import Mapping

from kda_sim.isa.memops import MemOp
from kda_sim.isa.parser import KernelArg

CLASSES = ("weights", "staging", "flagged", "mailbox", "spill", "unknown")


def by_bits(op: MemOp) -> str:
    if "nt" in op.cache and not op.coherent:
        return "weights"
    if op.coherent:
        return "mailbox"
    return "staging"


def classify(
    op: MemOp, arg: KernelArg | None, arg_classes: Mapping[str, str], mnemonic: str = ""
) -> str:
    if mnemonic.startswith("scratch_"):
        return "spill"  # register spills: private memory, counted by vmcnt all the same
    if arg is not None and arg.name in arg_classes:
        return arg_classes[arg.name]
    return by_bits(op)


def source_of(op: MemOp, arg: KernelArg | None) -> str:
    bits = " ".join(sorted(op.cache)) or "no cache bits"
    return f"{arg.name} ({bits})" if arg is not None else f"unknown resource ({bits})"
