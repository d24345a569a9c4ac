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
packed word is a constant there: defined in that block, or the same constant on every
path into it (LLVM hoists a word that several records share, such as a push's, out of
their blocks), followed through LLVM's copies between SGPRs (``s_mov_b32``, or
``s_mov_b64`` of the pair it sits in) and its SGPR spills to VGPR lanes
(``v_writelane_b32`` / ``v_readlane_b32``); an event whose word is not is reported, not
guessed, and a range it would close is then reported as never closing. Ranges pair in
text order (pop with the innermost open push, stop with the open start of the same id):
FlyDSL emits a range's begin and end around structured code, which LLVM lays out between
them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.isa.cfg import Cfg
from kda_sim.isa.conds import sgprs
from kda_sim.isa.parser import Instr, Kernel

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


Def = Callable[[Instr], "tuple[bool, int | _Cycle | None]"]
# SGPR -> copy or VGPR-lane spill -> SGPR ...: a word followed through this many moves
MAX_HOPS = 8
# blocks walked back from a record for its word: a bound on the work a record costs (an
# input file is not trusted), far above the K1's (its words are a few blocks away)
MAX_BLOCKS = 512
# blocks one record's lookups visit in all (copies and spills chained, cycles not
# memoised): a bound on the work a record costs, far above the K1's
MAX_VISITS = 16 * MAX_BLOCKS
_NO_CYCLE = 1 << 30  # _Words.low where no cycle is pending
# register-to-register moves LLVM copies a word with (a 64-bit one moves the pair it sits in)
_COPY_OPS = ("s_mov_b32", "s_mov_b64")


class _Cycle:
    """A lookup that comes back to one still open (a copy saved and restored around a
    loop, as LLVM does with a word live across the K1's task loop): it adds no value of
    its own, the open one collects every other."""


CYCLE = _Cycle()


class _Words:
    """The constants SGPRs hold at an instruction, followed back through copies and
    spills. A lookup that returns to one still open is a cycle (:data:`CYCLE`, no value
    of its own); results are memoised by (register or lane, instruction, hops) unless
    they leaned on a cycle through a lookup still open above them (not final yet). Each
    record's lookups together visit at most :data:`MAX_VISITS` blocks, each at most
    :data:`MAX_BLOCKS`: the work a record costs is bounded whatever the file holds."""

    def __init__(self, kernel: Kernel, cfg: Cfg) -> None:
        self.kernel, self.cfg = kernel, cfg
        self.memo: dict[tuple[tuple[str, str, int], int], int | _Cycle | None] = {}
        self.open: dict[tuple[str, str, int], int] = {}  # lookups under way: their depth
        self.low = _NO_CYCLE  # the shallowest open lookup a cycle came back to
        self.visits = 0

    def word(self, at: int, reg: int) -> int | None:
        """The constant SGPR ``reg`` holds at ``at`` (a record's store), else None."""
        self.visits, self.low = 0, _NO_CYCLE
        value = self.sgpr(at, reg)
        return None if isinstance(value, _Cycle) else value

    def sgpr(self, at: int, reg: int, hops: int = 0) -> int | _Cycle | None:
        """What SGPR ``reg`` holds at instruction ``at``: a constant, None, or CYCLE."""
        return self._lookup(("s", str(reg), at), hops, self._sgpr_def(reg, hops))

    def lane(self, at: int, vreg: str, lane: str, hops: int) -> int | _Cycle | None:
        """What lane ``lane`` of ``vreg`` holds at instruction ``at``."""
        return self._lookup(("v", f"{vreg}:{lane}", at), hops, self._lane_def(vreg, lane, hops))

    def _lookup(self, key: tuple[str, str, int], hops: int, defines: Def) -> int | _Cycle | None:
        if (key, hops) in self.memo:
            return self.memo[key, hops]
        if key in self.open:
            self.low = min(self.low, self.open[key])
            return CYCLE
        depth = self.open[key] = len(self.open)
        try:
            value = self._reaching(key[2], defines)
        finally:
            del self.open[key]
        if self.low >= depth:  # final: no cycle through a lookup open above this one
            self.low = _NO_CYCLE
            if isinstance(value, _Cycle):
                value = None  # nothing but itself reaches it: no constant
            self.memo[key, hops] = value
        return value

    def _sgpr_def(self, reg: int, hops: int) -> Def:
        """Whether an instruction writes SGPR ``reg``, and the constant it writes (None
        where it is not one): a constant op's literal; for a copy from another SGPR (LLVM
        moves a word, or the pair it sits in, between registers), what that one holds
        there; for a reload from a VGPR lane (``v_readlane_b32``, how LLVM spills SGPRs),
        the constant spilled to that lane."""

        def match(ins: Instr) -> tuple[bool, int | None]:
            if not ins.operands or ins.mnemonic.startswith(_NO_DEST) or "_store" in ins.mnemonic:
                return False, None
            dest = sgprs(ins.operands[0])
            if dest is None or reg not in dest:
                return False, None
            if ins.mnemonic == "v_readlane_b32" and len(ins.operands) == 3 and hops < MAX_HOPS:
                vreg, lane = ins.operands[1], ins.operands[2]
                return True, self.lane(ins.index, vreg, lane, hops)
            if ins.mnemonic in _COPY_OPS and len(ins.operands) == 2:
                src = sgprs(ins.operands[1])
                if src is not None:
                    if len(src) != len(dest) or hops >= MAX_HOPS:
                        return True, None
                    return True, self.sgpr(ins.index, min(src) + reg - min(dest), hops + 1)
            op = _CONSTANT_OPS.get(ins.mnemonic)
            value = _literal(ins.operands[1]) if op and len(ins.operands) == 2 else None
            return True, None if value is None else op(value)

        return match

    def _lane_def(self, vreg: str, lane: str, hops: int) -> Def:
        """Whether an instruction writes lane ``lane`` of ``vreg`` (``v_writelane_b32``:
        the constant its SGPR holds there; any other write of ``vreg``: None)."""

        def match(ins: Instr) -> tuple[bool, int | None]:
            if not ins.operands or ins.operands[0] != vreg:
                return False, None
            if ins.mnemonic == "v_writelane_b32" and len(ins.operands) == 3:
                if ins.operands[2] != lane:
                    return False, None
                src = sgprs(ins.operands[1])
                if src is None or len(src) != 1:
                    return True, None
                (r,) = src
                return True, self.sgpr(ins.index, r, hops + 1)
            writes = "_store" not in ins.mnemonic and not ins.mnemonic.startswith("v_readlane")
            return writes, None

        return match

    def _reaching(self, at: int, defines: Def) -> int | _Cycle | None:
        """The constant that the writes ``defines`` recognises give at instruction
        ``at``: the last one before it in its block, else those that reach the block's
        start along every path into it (the compiler hoists a packed word that several
        records share out of their blocks), where all are the same constant (a cycle's
        adds none; CYCLE where there is no other); else None (not a constant, differing
        constants, or no write on some path: a kernel argument; or past
        :data:`MAX_BLOCKS` blocks back, or the record's :data:`MAX_VISITS`)."""
        kernel, cfg = self.kernel, self.cfg

        def last(lo: int, hi: int) -> tuple[bool, int | _Cycle | None]:
            for i in range(hi - 1, lo - 1, -1):
                found, value = defines(kernel.instrs[i])
                if found:
                    return True, value
            return False, None

        b = cfg.block_of[at]
        found, value = last(cfg.blocks[b].start, at)
        if found:
            return value
        values: set[int | None] = set()
        # the record's own block too, where a back edge reaches it (a one-block loop):
        # its last write then comes round to its start
        seen: set[int] = set()
        todo = list(cfg.blocks[b].preds) or [None]
        while todo:
            p = todo.pop()
            if p is None:
                return None  # the entry block: the register is an argument
            if p in seen:
                continue
            self.visits += 1
            if len(seen) >= MAX_BLOCKS or self.visits > MAX_VISITS:
                return None  # not followed this far: noted, not guessed
            seen.add(p)
            blk = cfg.blocks[p]
            found, value = last(blk.start, blk.end)
            if not found:
                todo += blk.preds or [None]
            elif not isinstance(value, _Cycle):
                values.add(value)
            if None in values or len(values) > 1:
                return None
        return values.pop() if values else CYCLE


def events(kernel: Kernel, cfg: Cfg) -> tuple[list[Event], list[str]]:
    """The kernel's ktrace events, and a note for each one whose word is not read."""
    out: list[Event] = []
    notes: list[str] = []
    instrs = kernel.instrs
    words = _Words(kernel, cfg)
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
        word = words.word(stores[1], min(half) + PACKED_DWORD)
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
