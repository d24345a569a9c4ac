"""Which kernel argument a buffer resource (or global ``saddr``) was built from.

The base address's low SGPR is followed back through ``s_mov`` / ``s_add`` copies to
the ``s_load`` that read it from the kernarg segment; its offset names the argument.
The search takes the nearest earlier definition in layout order, not per path: the
compiler materialises a resource once near its first use, and a wrong answer only
costs a class (the cache bits still classify the load).

Under SGPR pressure the compiler spills SGPRs into VGPR lanes: ``v_writelane_b32 vN,
sK, L`` saves sK in lane L of vN, ``v_readlane_b32 sJ, vN, L`` restores it. A restored
SGPR is followed to the SGPR that lane last saved (the debug + delta + gate_local K1
restores most of its kernarg pointers that way).
"""

from __future__ import annotations

import re

from kda_sim.isa.parser import Instr, Kernel, KernelArg

_RANGE = re.compile(r"^s(?:\[(\d+):(\d+)\]|(\d+))$")
MAX_HOPS = 16
_FOLLOW_FIRST_SOURCE = (
    "s_mov_b32",
    "s_mov_b64",
    "s_add_u32",
    "s_add_i32",
    "s_sub_u32",
    "s_or_b32",
    "s_cselect_b32",
)


def sgpr_range(operand: str) -> tuple[int, int] | None:
    m = _RANGE.match(operand)
    if not m:
        return None
    if m.group(3) is not None:
        r = int(m.group(3))
        return r, r
    return int(m.group(1)), int(m.group(2))


def _writer(kernel: Kernel, before: int, sgpr: int) -> Instr | None:
    for i in range(before - 1, -1, -1):
        ins = kernel.instrs[i]
        if not ins.operands or not ins.mnemonic.startswith(("s_", "v_readlane_b32")):
            continue
        dst = sgpr_range(ins.operands[0])
        if (
            dst
            and dst[0] <= sgpr <= dst[1]
            and not ins.mnemonic.startswith(("s_cmp", "s_store", "s_buffer_store"))
        ):
            return ins
    return None


def _lane_saver(kernel: Kernel, before: int, vgpr: str, lane: str) -> Instr | None:
    """The nearest earlier ``v_writelane_b32`` into lane ``lane`` of ``vgpr``."""
    for i in range(before - 1, -1, -1):
        ins = kernel.instrs[i]
        if (
            ins.mnemonic == "v_writelane_b32"
            and len(ins.operands) >= 3
            and ins.operands[0] == vgpr
            and ins.operands[2] == lane
        ):
            return ins
    return None


def kernarg_offset(kernel: Kernel, at: int, sgpr: int) -> int | None:
    """Byte offset in the kernarg segment that SGPR ``sgpr`` holds at instruction ``at``."""
    for _ in range(MAX_HOPS):
        ins = _writer(kernel, at, sgpr)
        if ins is None:
            return None
        dst = sgpr_range(ins.operands[0])
        assert dst is not None
        if ins.mnemonic.startswith("s_load_dword") and len(ins.operands) >= 3:
            base = sgpr_range(ins.operands[1])
            if base is None or base[0] != kernel.kernarg_sgpr:
                return None
            try:
                offset = int(ins.operands[2], 0)
            except ValueError:
                return None
            return offset + 4 * (sgpr - dst[0])
        if ins.mnemonic == "v_readlane_b32" and len(ins.operands) >= 3:
            saver = _lane_saver(kernel, ins.index, ins.operands[1], ins.operands[2])
            src = sgpr_range(saver.operands[1]) if saver is not None else None
            if saver is None or src is None or src[0] != src[1]:
                return None
            at, sgpr = saver.index, src[0]
            continue
        if ins.mnemonic in _FOLLOW_FIRST_SOURCE and len(ins.operands) >= 2:
            src = sgpr_range(ins.operands[1])
            if src is None:
                return None
            at, sgpr = ins.index, src[0] + (sgpr - dst[0])
            continue
        return None
    return None


def argument(kernel: Kernel, at: int, sgpr: int | None) -> KernelArg | None:
    if sgpr is None:
        return None
    offset = kernarg_offset(kernel, at, sgpr)
    if offset is None:
        return None
    for arg in kernel.args:
        if arg.offset <= offset < arg.offset + max(arg.size, 1):
            return arg
    return KernelArg(offset, 8, f"kernarg+{offset:#x}", "")
