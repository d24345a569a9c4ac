"""Basic blocks, edges, dominators and loops of one kernel's instruction list.

A loop is a cycle the program can run, found as a compiler finds it: a *back edge*
goes to a block that dominates its source (in either layout direction: a rotated loop
has its latch laid out before its header), and its natural loop is what reaches the
latch without passing the header. Cycles with no such edge (more than one entry, an
irreducible region) are strongly connected components of what remains; they are loops
too, since they cycle. A branch to an earlier block is not by itself a loop: LLVM
places cold blocks after ``s_endpgm`` that branch back to where they came from, and
that is a join, not a cycle.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kda_sim.isa.parser import Kernel

ENDS = ("s_endpgm", "s_setpc_b64", "s_trap", "s_rfe_b64")


@dataclass
class Block:
    id: int
    start: int  # first instruction index
    end: int  # one past the last
    succs: list[int] = field(default_factory=list)
    preds: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class Loop:
    header: int  # block id: dominates the loop (irreducible: its first entry in RPO)
    latches: tuple[int, ...]  # blocks with an edge back to the header (entries)
    blocks: frozenset[int]
    irreducible: bool = False  # entered at more than one block
    entries: tuple[int, ...] = ()  # blocks entered from outside (the header, or several)


@dataclass
class Cfg:
    blocks: list[Block]
    block_of: list[int]  # instruction index -> block id
    idom: list[int]  # block id -> immediate dominator (entry: itself; unreachable: -1)
    loops: list[Loop]
    back_edges: list[tuple[int, int]] = field(default_factory=list)  # (latch, header)
    rpo: list[int] = field(default_factory=list)  # reachable blocks, reverse postorder

    def instrs_of(self, blocks: frozenset[int]) -> list[int]:
        return [i for b in sorted(blocks) for i in range(self.blocks[b].start, self.blocks[b].end)]


def _branch_target(mnemonic: str, operands: tuple[str, ...]) -> str | None:
    if mnemonic == "s_branch" or mnemonic.startswith("s_cbranch_"):
        return operands[0] if operands else None
    return None


def build(kernel: Kernel) -> Cfg:
    instrs = kernel.instrs
    n = len(instrs)
    leaders = {0} | {i for i in kernel.labels.values() if i < n}
    for ins in instrs:
        if ins.mnemonic.startswith(("s_branch", "s_cbranch_")) or ins.mnemonic in ENDS:
            leaders.add(ins.index + 1)
    starts = sorted(i for i in leaders if i < n)
    blocks = [
        Block(b, s, starts[b + 1] if b + 1 < len(starts) else n) for b, s in enumerate(starts)
    ]
    block_of = [0] * n
    for b in blocks:
        for i in range(b.start, b.end):
            block_of[i] = b.id
    for b in blocks:
        last = instrs[b.end - 1]
        target = _branch_target(last.mnemonic, last.operands)
        if target is not None and target in kernel.labels and kernel.labels[target] < n:
            b.succs.append(block_of[kernel.labels[target]])
        falls = last.mnemonic != "s_branch" and last.mnemonic not in ENDS
        if falls and b.end < n:
            b.succs.append(b.id + 1)
    for b in blocks:
        for s in b.succs:
            blocks[s].preds.append(b.id)
    idom = _dominators(blocks)
    loops, back = _loops(blocks, idom)
    return Cfg(blocks, block_of, idom, loops, back, _rpo(blocks))


def _dominators(blocks: list[Block]) -> list[int]:
    """Cooper-Harvey-Kennedy on reverse postorder."""
    rpo = _rpo(blocks)
    pos = {b: i for i, b in enumerate(rpo)}
    idom = [-1] * len(blocks)
    idom[0] = 0
    changed = True
    while changed:
        changed = False
        for b in rpo[1:]:
            preds = [p for p in blocks[b].preds if idom[p] != -1]
            if not preds:
                continue
            new = preds[0]
            for p in preds[1:]:
                a, c = p, new
                while a != c:
                    while pos[a] > pos[c]:
                        a = idom[a]
                    while pos[c] > pos[a]:
                        c = idom[c]
                new = a
            if idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def dominates(idom: list[int], a: int, b: int) -> bool:
    if idom[b] == -1:
        return False
    while b != a:
        if b == 0:
            return False
        b = idom[b]
    return True


def _loops(blocks: list[Block], idom: list[int]) -> tuple[list[Loop], list[tuple[int, int]]]:
    """Natural loops (one a header, its back edges merged), then the irreducible cycles
    left when back edges are taken out. Unreachable blocks run never: no loops there."""
    reachable = {b.id for b in blocks if idom[b.id] != -1}
    back = [
        (b.id, h) for b in blocks if b.id in reachable for h in b.succs if dominates(idom, h, b.id)
    ]
    by_header: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for latch, h in back:
        by_header.setdefault(h, set()).update(_natural(blocks, h, latch))
        latches.setdefault(h, []).append(latch)
    loops = [
        Loop(h, tuple(latches[h]), frozenset(by_header[h]), entries=(h,)) for h in sorted(by_header)
    ]
    back_set = set(back)
    rpo = {b: i for i, b in enumerate(_rpo(blocks))}
    for scc in _sccs(blocks, reachable, back_set):
        cyclic = len(scc) > 1 or any(
            s == b and (b, s) not in back_set for b in scc for s in blocks[b].succs
        )
        if not cyclic:
            continue
        entries = sorted(
            (b for b in scc if b == 0 or any(p not in scc for p in blocks[b].preds)),
            key=rpo.__getitem__,
        )
        header = entries[0] if entries else min(scc, key=rpo.__getitem__)
        into = set(entries) or {header}
        lat = tuple(sorted(b for b in scc if any(s in into for s in blocks[b].succs)))
        loops.append(Loop(header, lat, frozenset(scc), len(into) > 1, tuple(entries)))
    loops.sort(key=lambda lp: lp.header)
    return loops, back


def _rpo(blocks: list[Block]) -> list[int]:
    order: list[int] = []
    seen = {0}
    stack = [(0, 0)]
    while stack:
        b, k = stack.pop()
        if k < len(blocks[b].succs):
            stack.append((b, k + 1))
            s = blocks[b].succs[k]
            if s not in seen:
                seen.add(s)
                stack.append((s, 0))
        else:
            order.append(b)
    return list(reversed(order))


def _sccs(blocks: list[Block], nodes: set[int], removed: set[tuple[int, int]]) -> list[set[int]]:
    """Tarjan's strongly connected components over ``nodes``, without ``removed`` edges
    (iterative: kernels have thousands of blocks)."""
    index: dict[int, int] = {}
    low: dict[int, int] = {}
    on: set[int] = set()
    stack: list[int] = []
    out: list[set[int]] = []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, 0)]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, k = work[-1]
            succs = [s for s in blocks[v].succs if s in nodes and (v, s) not in removed]
            if k < len(succs):
                work[-1] = (v, k + 1)
                w = succs[k]
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, 0))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                out.append(comp)
    return out


def _natural(blocks: list[Block], header: int, latch: int) -> set[int]:
    body = {header, latch}
    work = [latch]
    while work:
        b = work.pop()
        if b == header:
            continue
        for p in blocks[b].preds:
            if p not in body:
                body.add(p)
                work.append(p)
    return body
