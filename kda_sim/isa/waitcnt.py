"""Which vector-memory ops may be in flight before each instruction.

A wave's vector-memory ops retire in issue order, so the in-flight set is a queue
and ``s_waitcnt vmcnt(N)`` keeps its N youngest. Paths differ in what they issued,
so a program point holds a *set* of possible queues (union at joins, iterated to a
fixed point around loops): queues of different paths are never merged into one.
Each queue also carries what its path knows from the scalar tests it branched on
(:mod:`kda_sim.isa.conds`), so a path that no workgroup runs (the put of one role,
then the poll of another) brings nothing to the poll. The set is capped: past
:data:`MAX_QUEUES` that knowledge is dropped first (paths that differ only in it
merge), then the longest queues are kept and the result is marked approximate.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from kda_sim.isa import conds
from kda_sim.isa.cfg import Cfg, Loop
from kda_sim.isa.memops import (
    VMCNT_MAX,
    MemKind,
    MemOp,
    mem_op,
    separate_store_counter,
    vm_wait,
    vs_wait,
)
from kda_sim.isa.parser import Kernel

Queue = tuple[int, ...]  # instruction indices of in-flight ops, oldest first
State = tuple[Queue, Queue]  # (vmcnt queue, vscnt queue: gfx10+ stores only)
Path = tuple[Queue, Queue, conds.Facts]  # a state and the branch tests its path took
States = frozenset[Path]
MAX_QUEUES = 64
MAX_ROUNDS = 200


def _keep_youngest(q: Queue, n: int) -> Queue:
    return q[len(q) - n :] if n < len(q) else q


@dataclass
class Flow:
    kernel: Kernel
    cfg: Cfg
    ops: dict[int, MemOp]
    split_stores: bool
    branches: conds.Branches
    block_in: list[States]
    approximate: bool = False
    _writes: dict[int, frozenset[int] | None] = field(default_factory=dict, init=False, repr=False)

    def step(self, states: States, index: int) -> States:
        ins = self.kernel.instrs[index]
        op = self.ops.get(index)
        if index not in self._writes:
            self._writes[index] = conds.written(ins)
        writes = self._writes[index]
        out = set()
        for vm, vs, facts in states:
            if op is not None:
                if self.split_stores and op.kind is MemKind.STORE:
                    vs = _keep_youngest((*vs, index), VMCNT_MAX)
                else:
                    vm = _keep_youngest((*vm, index), VMCNT_MAX)
            n = vm_wait(ins)
            if n is not None:
                vm = _keep_youngest(vm, n)
            n = vs_wait(ins)
            if n is not None:
                vs = _keep_youngest(vs, n)
            out.add((vm, vs, conds.forget(facts, writes)))
        return self._cap(out)

    def _cap(self, states: Iterable[Path]) -> States:
        s = set(states)
        if len(s) <= MAX_QUEUES:
            return frozenset(s)
        s = {(vm, vs, frozenset()) for vm, vs, _ in s}  # sound: fewer paths pruned
        if len(s) <= MAX_QUEUES:
            return frozenset(s)
        self.approximate = True
        keep = sorted(s, key=lambda st: (len(st[0]) + len(st[1]), st[:2]), reverse=True)
        return frozenset(keep[:MAX_QUEUES])

    def edge(self, b: int, succ: int, states: States) -> States:
        """``states`` leaving block ``b`` for ``succ``: the paths whose branch tests
        allow that edge, each knowing the test's outcome."""
        out = set()
        for vm, vs, facts in states:
            after = self.branches.follow(facts, b, succ)
            if after is not None:
                out.add((vm, vs, after))
        return self._cap(out)

    def block_out(self, b: int) -> States:
        states = self.block_in[b]
        for i in range(self.cfg.blocks[b].start, self.cfg.blocks[b].end):
            states = self.step(states, i)
        return states

    def before_in_loop(self, loop: Loop, seed: States, index: int) -> frozenset[State]:
        """Possible queues before ``index`` (in ``loop``) on the paths that enter the
        loop's header with ``seed`` and reach ``index`` without going round again: the
        first try (seeded from outside the loop) apart from the retry (seeded from the
        latches). An irreducible loop has no one header: every path is taken."""
        if loop.irreducible:
            return self.before(index)
        target = self.cfg.block_of[index]
        into: dict[int, States] = {loop.header: seed}
        for b in self.cfg.rpo:
            if b not in loop.blocks or b not in into:
                continue
            states = into[b]
            block = self.cfg.blocks[b]
            if b == target:
                for i in range(block.start, index):
                    states = self.step(states, i)
                return _queues(states)
            for i in range(block.start, block.end):
                states = self.step(states, i)
            for s in block.succs:
                if s in loop.blocks and s != loop.header:
                    into[s] = self._cap(into.get(s, frozenset()) | self.edge(b, s, states))
        return frozenset()

    def entering(self, loop: Loop, from_inside: bool) -> States:
        """Paths on the edges into the header: from outside (the first entry) or from
        the latches (going round)."""
        out: set[Path] = set()
        for p in self.cfg.blocks[loop.header].preds:
            if (p in loop.blocks) == from_inside:
                out |= self.edge(p, loop.header, self.block_out(p))
        return self._cap(out)

    def before(self, index: int) -> frozenset[State]:
        """Possible in-flight queues just before instruction ``index`` issues."""
        b = self.cfg.blocks[self.cfg.block_of[index]]
        states = self.block_in[b.id]
        for i in range(b.start, index):
            states = self.step(states, i)
        return _queues(states)


def _queues(states: States) -> frozenset[State]:
    return frozenset((vm, vs) for vm, vs, _ in states)


def _branches(kernel: Kernel, cfg: Cfg) -> conds.Branches:
    spans = []
    for b in cfg.blocks:
        # a conditional branch's first successor is its target; none when it only
        # falls through (a branch to the next block tells the two edges apart not)
        two = len(b.succs) == 2 and b.succs[0] != b.succs[1]
        spans.append((b.start, b.end, b.succs[0] if two else None))
    return conds.branches(kernel.instrs, spans)


def analyze(kernel: Kernel, cfg: Cfg, arch: str) -> Flow:
    ops = {i.index: op for i in kernel.instrs if (op := mem_op(i)) is not None}
    empty: States = frozenset({((), (), frozenset())})
    blocks_in: list[States] = [frozenset()] * len(cfg.blocks)
    flow = Flow(kernel, cfg, ops, separate_store_counter(arch), _branches(kernel, cfg), blocks_in)
    flow.block_in[0] = empty
    work = [0]
    rounds = 0
    while work:
        rounds += 1
        if rounds > MAX_ROUNDS * max(1, len(cfg.blocks)):
            flow.approximate = True
            break
        b = work.pop(0)
        block = cfg.blocks[b]
        states = flow.block_in[b]
        for i in range(block.start, block.end):
            states = flow.step(states, i)
        for s in block.succs:
            merged = flow._cap(flow.block_in[s] | flow.edge(b, s, states))
            if merged != flow.block_in[s]:
                flow.block_in[s] = merged
                if s not in work:
                    work.append(s)
    return flow
