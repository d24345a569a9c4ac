"""What an instruction does to the memory counters: vector-memory ops (counted by
``vmcnt``, in issue order) and the waits on them."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum, StrEnum

from kda_sim.isa.parser import Instr

VM_PREFIXES = ("buffer_", "global_", "flat_", "scratch_", "tbuffer_", "image_")
VMCNT_MAX = 63  # gfx9: a wave stalls at issue past 63 outstanding ops (6-bit counter)
COHERENT_BITS = frozenset({"sc0", "sc1", "glc"})
_WIDTHS = {
    "ubyte": 1, "sbyte": 1, "byte": 1, "ushort": 2, "sshort": 2, "short": 2,
    "dword": 4, "dwordx2": 8, "dwordx3": 12, "dwordx4": 16,
    "u8": 1, "i8": 1, "b8": 1, "u16": 2, "i16": 2, "b16": 2,
    "b32": 4, "b64": 8, "b96": 12, "b128": 16,
}  # fmt: skip
_VMCNT = re.compile(r"vmcnt\((\d+)\)")
_LGKMCNT = re.compile(r"lgkmcnt\((\d+)\)")
LGKMCNT_MAX = 15  # gfx9: a 4-bit counter (LDS, GDS, scalar memory, messages)
_NUMBER = re.compile(r"^(0x[0-9a-fA-F]+|\d+)$")


class Scope(IntEnum):
    """The widest synchronization scope an op's cache bits give it (LLVM's AMDGPU
    memory model): a poll or a flag must reach ``AGENT`` to see / be seen by another
    workgroup, which may run on another CU (another L1)."""

    WAVEFRONT = 0  # a plain load / store: may hit a stale line in this CU's L1
    WORKGROUP = 1
    AGENT = 2
    SYSTEM = 3


class MemKind(StrEnum):
    LOAD = "load"
    STORE = "store"
    ATOMIC = "atomic"
    WRITEBACK = "writeback"  # buffer_wbl2: counted in vmcnt like a store


@dataclass(frozen=True, slots=True)
class MemOp:
    index: int
    kind: MemKind
    nbytes: int
    cache: frozenset[str]  # sc0 / sc1 / nt / glc / slc modifiers
    resource: int | None  # first SGPR of the buffer resource or global saddr

    @property
    def coherent(self) -> bool:
        return bool(self.cache & COHERENT_BITS) or self.kind is MemKind.ATOMIC


def _width(mnemonic: str) -> int:
    for word in reversed(mnemonic.split("_")):
        if word in _WIDTHS:
            return _WIDTHS[word]
    return 4


def _first_sgpr(operand: str) -> int | None:
    m = re.match(r"^s\[?(\d+)", operand)
    return int(m.group(1)) if m else None


def mem_op(ins: Instr) -> MemOp | None:
    """The vector-memory op ``ins`` issues, or None (scalar / LDS / ALU)."""
    mn = ins.mnemonic
    if not mn.startswith(VM_PREFIXES):
        return None
    if mn.startswith("buffer_wbl2"):
        kind = MemKind.WRITEBACK
    elif "_atomic" in mn:
        kind = MemKind.ATOMIC
    elif "_load" in mn:
        kind = MemKind.LOAD
    elif "_store" in mn:
        kind = MemKind.STORE
    else:
        return None  # buffer_inv / wbinvl1: no data, not counted by vmcnt
    resource = None
    if (mn.startswith(("buffer_", "tbuffer_")) and len(ins.operands) >= 3) or (
        mn.startswith(("global_", "scratch_")) and len(ins.operands) >= 3
    ):
        resource = _first_sgpr(ins.operands[2])
    cache = frozenset(m for m in ins.modifiers if m in {"sc0", "sc1", "nt", "glc", "slc", "dlc"})
    return MemOp(ins.index, kind, _width(mn), cache, resource)


def _decode_gfx9_vmcnt(imm: int) -> int:
    return (imm & 0xF) | (((imm >> 14) & 0x3) << 4)


def vm_wait(ins: Instr) -> int | None:
    """N of an ``s_waitcnt`` that waits on vmcnt (keep the N youngest), else None."""
    if ins.mnemonic != "s_waitcnt":
        return None
    m = _VMCNT.search(ins.text)
    if m:
        return int(m.group(1))
    if ins.operands and _NUMBER.match(ins.operands[0]):
        vm = _decode_gfx9_vmcnt(int(ins.operands[0], 0))
        return vm if vm < VMCNT_MAX else None
    return None


def lgkm_wait(ins: Instr) -> int | None:
    """N of an ``s_waitcnt`` that waits on lgkmcnt (at most N left outstanding), else None."""
    if ins.mnemonic != "s_waitcnt":
        return None
    m = _LGKMCNT.search(ins.text)
    if m:
        return int(m.group(1))
    if ins.operands and _NUMBER.match(ins.operands[0]):
        n = (int(ins.operands[0], 0) >> 8) & 0xF  # gfx9: lgkmcnt is bits 11:8
        return n if n < LGKMCNT_MAX else None
    return None


def vs_wait(ins: Instr) -> int | None:
    """gfx10+: N of ``s_waitcnt_vscnt null, N`` (stores counted apart)."""
    if ins.mnemonic != "s_waitcnt_vscnt" or not ins.operands:
        return None
    last = ins.operands[-1]
    return int(last, 0) if _NUMBER.match(last) else None


def separate_store_counter(arch: str) -> bool:
    """gfx10 and later count stores in vscnt; gfx9 (gfx942 / gfx950) in vmcnt."""
    m = re.match(r"gfx(\d+)", arch)
    return bool(m) and len(m.group(1)) >= 4 and int(m.group(1)[:2]) >= 10


def _gfx94x(arch: str) -> bool:
    """gfx940 / gfx941 / gfx942 / gfx950: the sc0 / sc1 / nt cache bits."""
    return arch.startswith(("gfx94", "gfx95"))


def scope(op: MemOp, arch: str) -> Scope:
    """The scope ``op``'s bits give it, by LLVM's AMDGPUUsage memory model (the GFX942
    tables, which cover gfx940..gfx950). Loads and stores: no bit = wavefront (not
    atomic), ``sc0`` = workgroup, ``sc1`` = agent, ``sc0 sc1`` = system. Atomic
    read-modify-writes bypass L1: agent without bits, system with ``sc1`` (their
    ``sc0`` only asks for the old value). ``nt`` is a temporal hint, no scope. Older
    gfx9 (``glc``): coherent loads and stores are agent scope, atomics too."""
    bits = op.cache
    if _gfx94x(arch):
        if op.kind is MemKind.ATOMIC:
            return Scope.SYSTEM if "sc1" in bits else Scope.AGENT
        if "sc1" in bits:
            return Scope.SYSTEM if "sc0" in bits else Scope.AGENT
        return Scope.WORKGROUP if "sc0" in bits else Scope.WAVEFRONT
    if op.kind is MemKind.ATOMIC or bits & COHERENT_BITS:
        return Scope.AGENT
    return Scope.WAVEFRONT


def bits_text(op: MemOp) -> str:
    return " ".join(sorted(op.cache)) or "no cache bits"
