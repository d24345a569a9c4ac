"""LDS writes that may still be in flight when a wave reaches ``s_barrier``.

Waves of one workgroup exchange values through LDS (a scalar atomic's result broadcast
to every wave, say): one wave writes, all meet at ``s_barrier``, all read. The barrier
alone orders no memory: LLVM's AMDGPU memory model (AMDGPUUsage, GFX942 tables, which
gfx950 shares) lets the LDS operations of different waves reorder, so a workgroup
release needs ``s_waitcnt lgkmcnt(0)`` before the barrier; without it a reader may see
the old value. LDS ops count in lgkmcnt with scalar loads and messages; LDS ops retire
in order, so the in-flight set is kept as a queue, as :mod:`waitcnt` keeps vmcnt's,
and ``lgkmcnt(N)`` keeps its N youngest (LLVM waits with ``lgkmcnt(0)`` whenever a
scalar load, which may return out of order, is outstanding). Paths are not pruned by
their branch tests here: the answer errs toward "in flight".
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.isa.cfg import Cfg
from kda_sim.isa.memops import LGKMCNT_MAX, lgkm_wait
from kda_sim.isa.parser import Instr, Kernel

Queue = tuple[int, ...]  # instruction indices of outstanding lgkm ops, oldest first
MAX_QUEUES = 64
MAX_ROUNDS = 200  # visits a block, on average, before the solution is called approximate
BARRIER = "s_barrier"
# lgkm ops besides LDS: scalar memory and messages
SCALAR_PREFIXES = ("s_load_", "s_buffer_load_", "s_store_", "s_buffer_store_", "s_atomic_")
SCALAR_OPS = frozenset({"s_sendmsg", "s_sendmsghalt", "s_memtime", "s_memrealtime"})
# ds_ instructions that touch no LDS word (lane shuffles, no-ops, GDS)
NOT_LDS = (
    "ds_swizzle",
    "ds_permute",
    "ds_bpermute",
    "ds_nop",
    "ds_gws_",
    "ds_append",
    "ds_consume",
)


def is_lds(ins: Instr) -> bool:
    return ins.mnemonic.startswith("ds_") and not ins.mnemonic.startswith(NOT_LDS)


def is_lds_read(ins: Instr) -> bool:
    return is_lds(ins) and ins.mnemonic.startswith(("ds_read", "ds_load"))


def is_lds_write(ins: Instr) -> bool:
    """A store or an atomic: every LDS op that changes a word."""
    return is_lds(ins) and not is_lds_read(ins)


def _counts_lgkm(ins: Instr) -> bool:
    m = ins.mnemonic
    return m.startswith("ds_") or m.startswith(SCALAR_PREFIXES) or m in SCALAR_OPS


@dataclass(frozen=True)
class UnwaitedBarrier:
    barrier: int  # the s_barrier's instruction index
    writes: tuple[int, ...]  # LDS writes that may be outstanding there, oldest first
    read: int  # an LDS read the barrier can reach


class _Flow:
    """The possible lgkm queues at each block's entry (union at joins, to a fixed point)."""

    def __init__(self, kernel: Kernel, cfg: Cfg) -> None:
        self.kernel, self.cfg = kernel, cfg
        self.writes = frozenset(i.index for i in kernel.instrs if is_lds_write(i))
        self.approximate = False
        self.block_in: list[frozenset[Queue]] = [frozenset()] * len(cfg.blocks)
        if cfg.blocks:
            self._solve()

    def step(self, queues: frozenset[Queue], ins: Instr) -> frozenset[Queue]:
        counts, n = _counts_lgkm(ins), lgkm_wait(ins)
        if not counts and n is None:
            return queues
        out = set()
        for q in queues:
            if counts:
                q = (*q, ins.index)[-LGKMCNT_MAX:]  # issue stalls while the counter is full
            if n is not None:
                q = q[len(q) - n :] if n < len(q) else q
            out.add(q)
        return self._cap(out)

    def _cap(self, queues: set[Queue]) -> frozenset[Queue]:
        if len(queues) <= MAX_QUEUES:
            return frozenset(queues)
        self.approximate = True
        # keep the queues that hold LDS writes first: the answer errs toward "in flight"
        return frozenset(sorted(queues, key=self._rank, reverse=True)[:MAX_QUEUES])

    def _rank(self, q: Queue) -> tuple[int, int, Queue]:
        return (len(self.writes.intersection(q)), len(q), q)

    def _solve(self) -> None:
        self.block_in[0] = frozenset({()})
        work, rounds = [0], 0
        while work:
            rounds += 1
            if rounds > MAX_ROUNDS * len(self.cfg.blocks):  # a cap that keeps cycling
                self.approximate = True
                return
            b = work.pop(0)
            queues = self.block_out(b)
            for s in self.cfg.blocks[b].succs:
                merged = self._cap(set(self.block_in[s] | queues))
                if merged != self.block_in[s]:
                    self.block_in[s] = merged
                    if s not in work:
                        work.append(s)

    def block_out(self, b: int, stop: int | None = None) -> frozenset[Queue]:
        """Queues at the end of block ``b``, or before instruction ``stop`` in it."""
        block = self.cfg.blocks[b]
        queues = self.block_in[b]
        for i in range(block.start, block.end if stop is None else stop):
            queues = self.step(queues, self.kernel.instrs[i])
        return queues


def _first_read_after(kernel: Kernel, cfg: Cfg, index: int) -> int | None:
    """An LDS read reachable from just after ``index`` (in its block, then any block
    the graph reaches from it), or None."""
    b = cfg.block_of[index]
    for i in range(index + 1, cfg.blocks[b].end):
        if is_lds_read(kernel.instrs[i]):
            return i
    seen, todo = set(), list(cfg.blocks[b].succs)
    while todo:
        s = todo.pop(0)
        if s in seen:
            continue
        seen.add(s)
        for i in range(cfg.blocks[s].start, cfg.blocks[s].end):
            if is_lds_read(kernel.instrs[i]):
                return i
        todo.extend(cfg.blocks[s].succs)
    return None


def unwaited_barriers(kernel: Kernel, cfg: Cfg) -> tuple[list[UnwaitedBarrier], bool]:
    """Each ``s_barrier`` that an LDS write may reach still outstanding (on some path no
    ``s_waitcnt lgkmcnt`` retires it), where an LDS read follows the barrier; and
    whether the queues were capped (then the answer errs toward "in flight")."""
    barriers = [i.index for i in kernel.instrs if i.mnemonic == BARRIER]
    if not barriers:
        return [], False
    flow = _Flow(kernel, cfg)
    out = []
    for bar in barriers:
        queues = flow.block_out(cfg.block_of[bar], stop=bar)
        writes = sorted({i for q in queues for i in q if i in flow.writes})
        if not writes:
            continue
        read = _first_read_after(kernel, cfg, bar)
        if read is not None:
            out.append(UnwaitedBarrier(bar, tuple(writes), read))
    return out, flow.approximate
