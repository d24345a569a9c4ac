"""Basic blocks, edges, dominators and loops of one kernel's instruction list."""

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
    header: int  # block id
    latches: tuple[int, ...]
    blocks: frozenset[int]


@dataclass
class Cfg:
    blocks: list[Block]
    block_of: list[int]  # instruction index -> block id
    idom: list[int]  # block id -> immediate dominator (entry: itself; unreachable: -1)
    loops: list[Loop]

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
    return Cfg(blocks, block_of, idom, _loops(blocks, idom))


def _dominators(blocks: list[Block]) -> list[int]:
    """Cooper-Harvey-Kennedy on reverse postorder."""
    order: list[int] = []
    seen: set[int] = set()
    stack = [(0, 0)]
    seen.add(0)
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
    rpo = list(reversed(order))
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


def _loops(blocks: list[Block], idom: list[int]) -> list[Loop]:
    """One loop a header: the natural loop of its back edges; a backward branch to a
    block that does not dominate its source (irreducible) takes the layout range."""
    by_header: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for b in blocks:
        for h in b.succs:
            if h > b.id:
                continue
            if idom[b.id] != -1 and dominates(idom, h, b.id):
                body = _natural(blocks, h, b.id)
            else:
                body = set(range(h, b.id + 1))
            by_header.setdefault(h, set()).update(body)
            latches.setdefault(h, []).append(b.id)
    return [Loop(h, tuple(latches[h]), frozenset(by_header[h])) for h in sorted(by_header)]


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
