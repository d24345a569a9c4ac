"""Basic blocks, edges, dominators and loops of one kernel's instruction list.

A loop is a cycle the program can run, found as a compiler finds it: a *back edge*
goes to a block that dominates its source (in either layout direction: a rotated loop
has its latch laid out before its header), and its natural loop is what reaches the
latch without passing the header. Cycles with no such edge (more than one entry, an
irreducible region) are strongly connected components of what remains; they are loops
too, since they cycle. A branch to an earlier block is not by itself a loop: LLVM
places cold blocks after ``s_endpgm`` that branch back to where they came from, and
that is a join, not a cycle. Dominators, walks and strongly connected components are
networkx's, over the blocks the entry reaches.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import networkx as nx

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
    graph = _graph(blocks)
    idom = _dominators(graph, len(blocks))
    loops, back = _loops(blocks, graph, idom)
    return Cfg(blocks, block_of, idom, loops, back, _rpo(graph))


def _graph(blocks: list[Block]) -> nx.DiGraph:
    """The blocks reachable from the entry, edges in successor order (so walks, and
    what is reported from them, are deterministic): unreachable blocks never run."""
    full = nx.DiGraph((b.id, s) for b in blocks for s in b.succs)
    full.add_node(0)
    reached = nx.descendants(full, 0) | {0}
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(reached))
    graph.add_edges_from((b.id, s) for b in blocks if b.id in reached for s in b.succs)
    return graph


def _dominators(graph: nx.DiGraph, n: int) -> list[int]:
    idom = [-1] * n
    for b, d in nx.immediate_dominators(graph, 0).items():
        idom[b] = d
    idom[0] = 0  # networkx leaves the entry out (3.5+) or maps it to itself
    return idom


def dominates(idom: list[int], a: int, b: int) -> bool:
    if idom[b] == -1:
        return False
    while b != a:
        if b == 0:
            return False
        b = idom[b]
    return True


def _loops(
    blocks: list[Block], graph: nx.DiGraph, idom: list[int]
) -> tuple[list[Loop], list[tuple[int, int]]]:
    """Natural loops (one a header, its back edges merged), then the irreducible cycles
    left when back edges are taken out. Unreachable blocks run never: no loops there."""
    back = [(b, h) for b, h in graph.edges if dominates(idom, h, b)]
    by_header: dict[int, set[int]] = {}
    latches: dict[int, list[int]] = {}
    for latch, h in back:
        by_header.setdefault(h, set()).update(_natural(graph, h, latch))
        latches.setdefault(h, []).append(latch)
    loops = [
        Loop(h, tuple(latches[h]), frozenset(by_header[h]), entries=(h,)) for h in sorted(by_header)
    ]
    back_set = set(back)
    rpo = {b: i for i, b in enumerate(_rpo(graph))}
    rest = graph.copy()
    rest.remove_edges_from(back_set)
    for scc in nx.strongly_connected_components(rest):
        if len(scc) == 1 and not any(rest.has_edge(b, b) for b in scc):
            continue  # one block and no edge to itself: no cycle
        entries = sorted(
            (b for b in scc if b == 0 or any(p not in scc for p in graph.predecessors(b))),
            key=rpo.__getitem__,
        )
        header = entries[0] if entries else min(scc, key=rpo.__getitem__)
        into = set(entries) or {header}
        lat = tuple(sorted(b for b in scc if any(s in into for s in blocks[b].succs)))
        loops.append(Loop(header, lat, frozenset(scc), len(into) > 1, tuple(entries)))
    loops.sort(key=lambda lp: lp.header)
    return loops, back


def _rpo(graph: nx.DiGraph) -> list[int]:
    return list(reversed(list(nx.dfs_postorder_nodes(graph, 0))))


def _natural(graph: nx.DiGraph, header: int, latch: int) -> set[int]:
    """What reaches ``latch`` without passing ``header`` (reachable blocks only)."""
    body = {header, latch}
    work = [latch]
    while work:
        b = work.pop()
        if b == header:
            continue
        for p in graph.predecessors(b):
            if p not in body:
                body.add(p)
                work.append(p)
    return body
