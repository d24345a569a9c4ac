"""Poll loops, their peeled first tries, spin loops that lost their load, and flag
stores with (or without) the drain before them.

A poll loop is a loop whose body loads, compares, and either sleeps (``s_sleep``) or
loads coherently (sc0 / sc1 / glc, or an atomic): without either, FlyDSL deletes the
loop or hoists its load out of it, leaving a spin on a value loaded once. LLVM often
peels a poll's first try out of the loop; that copy is the one that waits behind
whatever the CTA issued before the poll, so it is found (same load form from the same
kernel argument where both are traced, on the dominator path into the loop) and
counted as the poll. A loop with no such copy is not peeled: a rotated loop's first
try is its own load, entered from outside.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kda_sim.isa.cfg import Cfg, Loop
from kda_sim.isa.memops import MemKind, MemOp, Scope, scope, vm_wait
from kda_sim.isa.parser import Kernel, Marker
from kda_sim.isa.provenance import argument
from kda_sim.isa.waitcnt import Flow, State

PEEL_BLOCKS = 4  # dominator-path blocks searched for a peeled first try
WAIT_SCAN = 400  # instructions searched after a poll load for the wait that retires it
SMEM_PREFIXES = ("s_load", "s_buffer_load", "s_store", "s_buffer_store", "ds_", "s_atomic")


@dataclass(frozen=True)
class PollSite:
    loop: Loop
    loads: tuple[int, ...]  # poll loads in the loop, layout order
    first_try: tuple[int, ...]  # the peeled copy's loads, issue order (may be empty)
    sleeps: bool
    coherent: bool
    bounded: bool = False  # a clock read in the loop reaches a compare: it gives up in time

    @property
    def first(self) -> int:
        return self.first_try[0] if self.first_try else self.loads[0]


@dataclass(frozen=True)
class Flag:
    marker: Marker
    store: int  # the flag store's instruction index
    barrier: int  # -1: none between the last earlier store and the flag


def _loads(flow: Flow, indices: list[int]) -> list[MemOp]:
    return [
        flow.ops[i]
        for i in indices
        if i in flow.ops and flow.ops[i].kind in (MemKind.LOAD, MemKind.ATOMIC)
    ]


def _touches_memory(kernel: Kernel, flow: Flow, indices: list[int]) -> bool:
    return any(
        i in flow.ops or kernel.instrs[i].mnemonic.startswith(SMEM_PREFIXES) for i in indices
    )


def classify_loops(kernel: Kernel, cfg: Cfg, flow: Flow) -> tuple[list[PollSite], list[Loop]]:
    """(poll sites, loops that spin without touching memory)."""
    polls: list[PollSite] = []
    spins: list[Loop] = []
    for loop in cfg.loops:
        if any(other.header != loop.header and other.header in loop.blocks for other in cfg.loops):
            continue  # an outer loop (the kda task loop): its inner loops are the polls
        body = cfg.instrs_of(loop.blocks)
        loads = _loads(flow, body)
        sleeps = any(kernel.instrs[i].mnemonic == "s_sleep" for i in body)
        compares = any(kernel.instrs[i].mnemonic.startswith(("v_cmp", "s_cmp")) for i in body)
        coherent = any(op.coherent for op in loads)
        if loads and compares and (sleeps or coherent):
            start = cfg.blocks[loop.header].start
            order = sorted(op.index for op in loads)
            ordered = tuple([i for i in order if i >= start] + [i for i in order if i < start])
            peeled = _peeled_first_try(kernel, cfg, flow, loop, loads)
            bounded = clock_bound(kernel, body)
            polls.append(PollSite(loop, ordered, peeled, sleeps, coherent, bounded))
        elif not _touches_memory(kernel, flow, body):
            spins.append(loop)
    return polls, spins


CLOCKS = ("s_memrealtime", "s_memtime")  # the clock reads a bounded wait compares
_REG = re.compile(r"^([sv])(?:(\d+)|\[(\d+):(\d+)\])$")
_NAMED = ("vcc", "exec", "scc")


def _regs(operand: str) -> set[str]:
    """The registers an operand names (``s2``, ``s[4:7]``, ``v[0:1]``, ``vcc``)."""
    m = _REG.match(operand)
    if m:
        lo = int(m.group(2) if m.group(2) is not None else m.group(3))
        hi = int(m.group(2) if m.group(2) is not None else m.group(4))
        return {f"{m.group(1)}{n}" for n in range(lo, hi + 1)}
    base = operand.split("_")[0]
    return {base} if base in _NAMED else set()


def clock_bound(kernel: Kernel, body: list[int]) -> bool:
    """Whether a clock read in the loop (``s_memrealtime`` / ``s_memtime``) reaches a
    compare through the registers the loop computes from it: the loop can end on time,
    whatever the polled words hold (the bounded-wait build's give-up). A clock read only
    stored (a trace stamp) is no bound. Two passes over the body carry a value round the
    back edge."""
    tainted: set[str] = set()
    for _ in range(2):
        for i in body:
            ins = kernel.instrs[i]
            if not ins.operands:
                continue
            if ins.mnemonic in CLOCKS:
                tainted |= _regs(ins.operands[0])
                continue
            if ins.mnemonic.startswith(("s_cmp", "v_cmp", "s_bitcmp")):
                if any(_regs(o) & tainted for o in ins.operands):
                    return True
                continue
            if ins.mnemonic.startswith(SMEM_PREFIXES) or "store" in ins.mnemonic:
                continue  # no register written from its sources
            if any(_regs(o) & tainted for o in ins.operands[1:]):
                tainted |= _regs(ins.operands[0])
    return False


def _peeled_first_try(
    kernel: Kernel, cfg: Cfg, flow: Flow, loop: Loop, loads: list[MemOp]
) -> tuple[int, ...]:
    forms = {(kernel.instrs[op.index].mnemonic, op.cache) for op in loads}
    # the kernel arguments the loop's loads read, by form: a load of the same form from
    # another argument (the value, read before the poll) is no copy of the poll
    read: dict[tuple[str, frozenset[str]], set[int | None]] = {}
    for op in loads:
        arg = argument(kernel, op.index, op.resource)
        form = (kernel.instrs[op.index].mnemonic, op.cache)
        read.setdefault(form, set()).add(None if arg is None else arg.offset)
    # blocks of other loops (a previous poll, say) end the search; loops around this
    # one (the kda task loop) do not
    in_loops = set().union(*(lp.blocks for lp in cfg.loops if loop.header not in lp.blocks))
    in_loops |= loop.blocks  # a rotated loop's own blocks are the loop, not a peeled copy
    header_start = cfg.blocks[loop.header].start
    floor = max((m.before for m in kernel.markers if m.before <= header_start), default=0)
    found: list[int] = []
    b = cfg.idom[loop.header]
    for _ in range(PEEL_BLOCKS):
        if b < 0 or b in in_loops:
            break
        block = cfg.blocks[b]
        for i in range(block.end - 1, block.start - 1, -1):
            ins = kernel.instrs[i]
            if i < floor or ins.mnemonic in ("s_barrier", "s_sleep"):
                return tuple(sorted(found))
            op = flow.ops.get(i)
            if op is None:
                continue
            if op.kind is MemKind.STORE:
                return tuple(sorted(found))
            if (ins.mnemonic, op.cache) in forms:
                arg = argument(kernel, i, op.resource)
                sources = read[(ins.mnemonic, op.cache)]
                if arg is not None and None not in sources and arg.offset not in sources:
                    continue  # traced to another argument than every loop load of its form
                found.append(i)
                if len(found) == len(loads):
                    return tuple(sorted(found))
        if b == 0:
            break
        b = cfg.idom[b]
    return tuple(sorted(found))


def worst_state(states: frozenset[State]) -> State:
    """The path with the most ops in flight (ties: the most bytes)."""
    if not states:
        return ((), ())
    return max(states, key=lambda st: (len(st[0]) + len(st[1]), st))


@dataclass(frozen=True)
class Try:
    kind: str  # "first try" or "retry"
    load: int  # the try's first poll load
    in_flight: tuple[int, ...]  # ops issued before it and not retired: the worst path
    paths: int  # distinct queues over the paths that reach it


def tries(flow: Flow, site: PollSite) -> list[Try]:
    """The poll's first try (the peeled copy, or the loop's load entered from outside)
    and its retry (the loop's load reached round the back edge), each with what it
    retires behind. vmcnt is in order: a try's load returns after every op before it."""
    loop, first_load = site.loop, site.loads[0]
    if site.first_try:
        # peeled: the loop's load is every retry, the first one entered from outside
        first = flow.before(site.first_try[0])
        load = site.first_try[0]
        retry = flow.before(first_load)
    else:
        first = flow.before_in_loop(loop, flow.entering(loop, from_inside=False), first_load)
        load = first_load
        retry = flow.before_in_loop(loop, flow.entering(loop, from_inside=True), first_load)
    out = [Try("first try", load, worst_state(first)[0], len(first))]
    if retry:
        out.append(Try("retry", first_load, worst_state(retry)[0], len(retry)))
    return out


def in_flight_at_poll(flow: Flow, site: PollSite) -> tuple[int, ...]:
    """Ops that the poll's first load retires behind (vmcnt is in order): everything in
    flight when it issues, on the worst path, over the peeled try and the loop."""
    starts = [site.first] + ([site.loads[0]] if site.first_try else [])
    worst: tuple[int, ...] = ()
    for s in starts:
        vm, _ = worst_state(flow.before(s))
        if len(vm) > len(worst):
            worst = vm
    return worst


def wait_of(kernel: Kernel, flow: Flow, first: int) -> int:
    """Index of the ``s_waitcnt`` that retires load ``first``, following the control flow
    (a branch after the load leads to its wait), nearest first; -1 if none is found
    within :data:`WAIT_SCAN` instructions."""
    cfg = flow.cfg
    seen: set[tuple[int, int]] = set()
    frontier = [(first, 0)]  # (next instruction, ops issued since the load, inclusive)
    for _ in range(WAIT_SCAN):
        nxt = []
        for i, issued in frontier:
            if i >= len(kernel.instrs) or (i, issued) in seen:
                continue
            seen.add((i, issued))
            if i in flow.ops:
                issued += 1
            n = vm_wait(kernel.instrs[i])
            if n is not None and n < issued:
                return i
            b = cfg.blocks[cfg.block_of[i]]
            if i + 1 < b.end:
                nxt.append((i + 1, issued))
            else:
                nxt += [(cfg.blocks[s].start, issued) for s in b.succs]
        if not nxt:
            break
        frontier = nxt
    return -1


def marker_kind(m: Marker) -> tuple[str, str]:
    word, _, rest = m.text.partition(" ")
    return word, rest.strip()


def bind_polls(kernel: Kernel, sites: list[PollSite]) -> tuple[dict[int, str], list[Marker]]:
    """Site index -> its poll marker's label, and the poll markers with no site."""
    markers = sorted(kernel.markers, key=lambda m: m.before)
    labels: dict[int, str] = {}
    bound: set[int] = set()
    for n, site in enumerate(sites):
        owner = None
        for k, m in enumerate(markers):
            if m.before <= site.first:
                owner = k
        if owner is not None and marker_kind(markers[owner])[0] == "poll":
            labels[n] = marker_kind(markers[owner])[1]
            bound.add(owner)
    missing = [m for k, m in enumerate(markers) if marker_kind(m)[0] == "poll" and k not in bound]
    return labels, missing


def flags(kernel: Kernel, flow: Flow) -> list[Flag]:
    """Each publish marker's flag store (the first vector store after it) and the
    s_barrier between the last earlier store and it, if any."""
    out = []
    markers = sorted(kernel.markers, key=lambda m: m.before)
    for k, m in enumerate(markers):
        if marker_kind(m)[0] != "publish":
            continue
        stop = markers[k + 1].before if k + 1 < len(markers) else len(kernel.instrs)
        store = next(
            (
                i
                for i in range(m.before, stop)
                if i in flow.ops and flow.ops[i].kind is not MemKind.LOAD
            ),
            -1,
        )
        if store < 0:
            continue
        barrier = -1
        for i in range(store - 1, -1, -1):
            if kernel.instrs[i].mnemonic == "s_barrier":
                barrier = i
                break
            if i in flow.ops and flow.ops[i].kind is not MemKind.LOAD:
                break
        out.append(Flag(m, store, barrier))
    return out


@dataclass(frozen=True)
class Unpolled:
    load: int  # a load of a word the kernel also publishes
    store: int  # the first such store (its coherent bits make it a put or flag)
    arg: str


def unpolled_flag_loads(
    kernel: Kernel, cfg: Cfg, flow: Flow, sites: list[PollSite], spins: list[Loop]
) -> list[Unpolled]:
    """Loads of an argument the kernel also stores coherently (a put or flag: another
    workgroup is meant to poll it) that no poll protects: in no loop, no poll's peeled
    first try, and after no poll loop (nor a spin loop, already a finding). That is a
    poll the compiler deleted, or one never written: the value is read with no wait.
    Without argument provenance (a code object) nothing is said."""
    published = published_args(kernel, flow)
    if not published:
        return []
    in_loop = set().union(*(lp.blocks for lp in cfg.loops))
    peeled = {i for s in sites for i in s.first_try}
    starts = [cfg.block_of[s.first] for s in sites] + [lp.header for lp in spins]
    after = _reach(cfg, starts)
    loads = [(i, op.resource) for i, op in sorted(flow.ops.items()) if op.kind is MemKind.LOAD]
    loads += [
        (ins.index, _first_sgpr(ins.operands[1]))
        for ins in kernel.instrs
        if ins.mnemonic.startswith(SCALAR_LOADS) and len(ins.operands) >= 2
    ]  # a poll hoisted out of its loop may become one scalar load
    out = []
    for i, base in sorted(loads):
        b = cfg.block_of[i]
        if i in peeled or b in in_loop or b in after:
            continue
        arg = argument(kernel, i, base)
        if arg is not None and arg.name in published:
            out.append(Unpolled(i, published[arg.name], arg.name))
    return out


def published_args(kernel: Kernel, flow: Flow) -> dict[str, int]:
    """Arguments the kernel stores coherently or atomically (puts, flags): name -> the
    first such store."""
    out: dict[str, int] = {}
    for i, op in sorted(flow.ops.items()):
        if op.kind is MemKind.ATOMIC or (op.kind is MemKind.STORE and op.coherent):
            arg = argument(kernel, i, op.resource)
            if arg is not None:
                out.setdefault(arg.name, i)
    return out


INVALIDATES = ("buffer_inv", "buffer_wbinvl1", "buffer_gl0_inv", "buffer_gl1_inv")


@dataclass(frozen=True)
class Unordered:
    load: int  # a read of a published word after a poll, below agent scope
    poll: int  # the poll's first load before it
    arg: str


def unordered_reads(
    kernel: Kernel, cfg: Cfg, flow: Flow, sites: list[PollSite], arch: str
) -> list[Unordered]:
    """Reads of a published argument after a poll, outside it, below agent scope and
    with no cache invalidate (an acquire's ``buffer_inv``) between the poll and them:
    a relaxed poll orders nothing after it (LLVM's memory model), so the read may
    return what this CU's L1 held before the put."""
    published = published_args(kernel, flow)
    if not published or not sites:
        return []
    in_poll = {i for s in sites for i in (*s.first_try, *s.loads)}
    firsts = sorted((s.first, cfg.block_of[s.first]) for s in sites)
    reads: list[tuple[int, int | None, tuple[str, ...]]] = [
        (i, op.resource, INVALIDATES)
        for i, op in sorted(flow.ops.items())
        if op.kind is MemKind.LOAD and i not in in_poll and scope(op, arch) < Scope.AGENT
    ]
    # scalar loads go through the scalar cache, which only s_dcache_inv refreshes
    reads += [
        (ins.index, _first_sgpr(ins.operands[1]), ("s_dcache_inv",))
        for ins in kernel.instrs
        if ins.mnemonic.startswith(SCALAR_LOADS) and len(ins.operands) >= 2
    ]
    out = []
    for i, base, invalidates in sorted(reads):
        arg = argument(kernel, i, base)
        if arg is None or arg.name not in published:
            continue
        before = [f for f, b in firsts if f < i and cfg.block_of[i] in _reach(cfg, [b])]
        if not before:
            continue  # before any poll: unpolled_flag_loads' case
        poll = before[-1]
        if any(kernel.instrs[j].mnemonic.startswith(invalidates) for j in range(poll, i)):
            continue
        out.append(Unordered(i, poll, arg.name))
    return out


SCALAR_LOADS = ("s_load_", "s_buffer_load_")


def _first_sgpr(operand: str) -> int | None:
    m = re.match(r"^s\[?(\d+)", operand)
    return int(m.group(1)) if m else None


def _reach(cfg: Cfg, starts: list[int]) -> set[int]:
    seen = set(starts)
    work = list(starts)
    while work:
        for s in cfg.blocks[work.pop()].succs:
            if s not in seen:
                seen.add(s)
                work.append(s)
    return seen
