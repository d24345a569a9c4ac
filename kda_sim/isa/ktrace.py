"""FlyDSL ktrace events and ranges in a kernel's ISA.

FlyDSL's ktrace (``flydsl.expr.ktrace``, built with ``FLYDSL_KTRACE_ENABLE=1`` or the
``ktrace`` compile hint) writes each event as one 32-byte record through two inline-asm
``s_buffer_store_dwordx4``: first ``s[t:t+3]`` = the ``s_memrealtime`` timestamp and the
payload, then ``s[e:e+3]`` = HW_ID, XCC_ID, a packed word and the start slot. The packed
word is ``event_id | kind << 24`` (bits 27-31: payload type), materialised as a constant
just before the store: ``s_mov_b32 s14, 0x1000002`` (a push of event 2), or
``s_brev_b32 s14, 64`` (0x02000000: a pop, which carries no id). The ISA holds only the
event id; its name is in the build's name table (FlyDSL's ``fly_ktrace.event_names``
module attribute, ``flydsl.expr.ktrace_common.name_table()`` after the build), which the
caller may pass in.

An event is read only where its timestamp and both stores share a basic block and its
packed word is a constant defined in that block; an event whose word is not is reported,
not guessed. Ranges pair in text order (pop with the innermost open push, stop with the
open start of the same id): FlyDSL emits a range's begin and end around structured code,
which LLVM lays out between them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.isa.cfg import Cfg
from kda_sim.isa.conds import sgprs
from kda_sim.isa.parser import Kernel

# FlyDSL's event kinds (flydsl.expr.ktrace.KIND_*) and the packed word's fields
# (flydsl/runtime/device_runtime/rocm_ktrace_buffer.py reads them back the same way)
KIND_MARK, KIND_RANGE_PUSH, KIND_RANGE_POP, KIND_RANGE_START, KIND_RANGE_STOP = range(5)
ID_MASK = 0xFFFFFF
KIND_SHIFT = 24
KIND_MASK = 0x7

TIMESTAMP = "s_memrealtime"
RECORD_STORE = "s_buffer_store_dwordx4"
PACKED_DWORD = 2  # the packed word's place in the event half's four SGPRs
# ops that put a constant in an SGPR, and how they turn their literal into it
_CONSTANT_OPS = {
    "s_mov_b32": lambda v: v & 0xFFFFFFFF,
    "s_movk_i32": lambda v: v & 0xFFFFFFFF,
    "s_brev_b32": lambda v: int(f"{v & 0xFFFFFFFF:032b}"[::-1], 2),
}
# first operands that are read, not written
_NO_DEST = ("s_cmp", "s_bitcmp", "s_branch", "s_cbranch", "s_waitcnt", "s_sleep", "s_nop")


@dataclass(frozen=True)
class Event:
    index: int  # the event store's instruction index
    line: int
    kind: int
    event_id: int


@dataclass(frozen=True)
class Range:
    event_id: int
    name: str  # from the name table, or "" where the caller gave none for this id
    begin_line: int  # the opening event's store
    end_line: int  # the closing event's store

    @property
    def label(self) -> str:
        return f'"{self.name}"' if self.name else f"#{self.event_id}"

    def holds(self, line: int) -> bool:
        return self.begin_line < line < self.end_line


def _literal(operand: str) -> int | None:
    try:
        return int(operand, 0)
    except ValueError:
        return None


def _constant(kernel: Kernel, cfg: Cfg, store: int, reg: int) -> int | None:
    """The constant SGPR ``reg`` holds at ``store``, when its last write in the store's
    block is a constant op; else None (defined elsewhere, or not a constant)."""
    start = cfg.blocks[cfg.block_of[store]].start
    for i in range(store - 1, start - 1, -1):
        ins = kernel.instrs[i]
        if not ins.operands or ins.mnemonic.startswith(_NO_DEST) or "_store" in ins.mnemonic:
            continue
        dest = sgprs(ins.operands[0])
        if dest is None or reg not in dest:
            continue
        op = _CONSTANT_OPS.get(ins.mnemonic)
        value = _literal(ins.operands[1]) if op and len(ins.operands) == 2 else None
        return None if value is None else op(value)
    return None


def events(kernel: Kernel, cfg: Cfg) -> tuple[list[Event], list[str]]:
    """The kernel's ktrace events, and a note for each one whose word is not read."""
    out: list[Event] = []
    notes: list[str] = []
    instrs = kernel.instrs
    for i, ins in enumerate(instrs):
        if ins.mnemonic != TIMESTAMP or not ins.operands:
            continue
        time = sgprs(ins.operands[0])
        end = cfg.blocks[cfg.block_of[i]].end  # a record is written in one block
        stores = [j for j in range(i + 1, end) if instrs[j].mnemonic == RECORD_STORE][:2]
        if len(stores) < 2 or sgprs(instrs[stores[0]].operands[0]) != _quad(time):
            continue  # a timestamp that is not a ktrace record's
        half = sgprs(instrs[stores[1]].operands[0])
        if half is None or len(half) != 4:
            continue
        store = instrs[stores[1]]
        word = _constant(kernel, cfg, stores[1], min(half) + PACKED_DWORD)
        kind = None if word is None else (word >> KIND_SHIFT) & KIND_MASK
        if word is None or kind is None or kind > KIND_RANGE_STOP:
            notes.append(
                f"{kernel.name}: ktrace record at line {store.line}: its event word is not a "
                "constant of its block; ktrace ranges around it are not named"
            )
            continue
        out.append(Event(stores[1], store.line, kind, word & ID_MASK))
    return out, notes


def _quad(time: frozenset[int] | None) -> frozenset[int] | None:
    """The four SGPRs of a record's first half, from its timestamp's two."""
    if time is None or len(time) != 2:
        return None
    return frozenset(range(min(time), min(time) + 4))


def ranges(
    kernel: Kernel, evs: list[Event], names: Mapping[str, int]
) -> tuple[list[Range], list[str]]:
    """Pair the events into ranges (innermost last), with a note for each one unpaired."""
    by_id = {ident: name for name, ident in names.items()}
    out: list[Range] = []
    notes: list[str] = []
    pushed: list[Event] = []
    started: list[Event] = []
    for e in evs:
        if e.kind == KIND_RANGE_PUSH:
            pushed.append(e)
        elif e.kind == KIND_RANGE_START:
            started.append(e)
        elif e.kind == KIND_RANGE_POP:
            if not pushed:
                notes.append(f"{kernel.name}: ktrace range_pop at line {e.line} with no push")
                continue
            b = pushed.pop()
            out.append(Range(b.event_id, by_id.get(b.event_id, ""), b.line, e.line))
        elif e.kind == KIND_RANGE_STOP:
            b = next((s for s in reversed(started) if s.event_id == e.event_id), None)
            if b is None:
                notes.append(f"{kernel.name}: ktrace range_stop at line {e.line} with no start")
                continue
            started.remove(b)
            out.append(Range(b.event_id, by_id.get(b.event_id, ""), b.line, e.line))
    for e in pushed + started:
        notes.append(
            f"{kernel.name}: ktrace range #{e.event_id} opened at line {e.line} never closes"
        )
    out.sort(key=lambda r: (r.begin_line, -r.end_line))
    return out, notes


def innermost(rs: list[Range], line: int) -> Range | None:
    """The innermost range holding ``line``: of the ranges holding it, the last opened."""
    held = [r for r in rs if r.holds(line)]
    return held[-1] if held else None


def name_table(data: object, where: str) -> dict[str, int]:
    """A ktrace name table (JSON object: event name -> id), checked."""
    if not isinstance(data, dict) or not all(
        isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and 0 < v <= ID_MASK
        for k, v in data.items()
    ):
        raise InvalidInput(
            f"a ktrace name table is a JSON object of event name -> id (1 to {ID_MASK})",
            what="ktrace names",
            where=where,
        )
    return dict(data)
