"""CUB's GridBarrier on a P100: a grid larger than the GPU holds at once hangs.

Thread: https://github.com/NVIDIA/cub/issues/369. A 128-block grid of 1024 threads synced
with ``cub::GridBarrier`` busy-waits forever on a P100 and finishes with 56 blocks. The
barrier needs every block resident at once, and a P100 SM holds two 1024-thread blocks:
the main block spins until a block that never got an SM reports in.

The protocol, as ``cub::GridBarrier::Sync`` has it: every other block sets its flag
``SYNC[b]`` to 1 and waits until the main block (block 0) clears it; the main block waits
for every peer's flag, then clears them all; ``iterations`` syncs in a row. The fix is
the thread's: a grid the GPU holds at once (``--blocks 56``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.ops import Begin, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SYNC = 0  # the region id of the blocks' flags


@dataclass(frozen=True)
class CubBarrierConfig:
    blocks: int = 128  # the thread's grid
    iterations: int = 8  # syncs in a row (the thread's)

    def validate(self) -> CubBarrierConfig:
        require_at_least(self, "blocks", "iterations")
        return self


def regions(cfg: CubBarrierConfig) -> dict[str, int]:
    return {"SYNC": cfg.blocks}


def launch_size(cfg: CubBarrierConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: a sync is block 0's wait on each peer and its reset,
    and each peer's 2 ops, within a Begin and End each."""
    peers = cfg.blocks - 1
    return cfg.iterations * (peers + 3 + 4 * peers), ("blocks", "iterations")


def build(cfg: CubBarrierConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    flag = [int(space.gid(SYNC, b)) for b in range(cfg.blocks)]
    peers = range(1, cfg.blocks)
    programs = []
    for b in range(cfg.blocks):
        ops: list[Op] = []
        for i in range(cfg.iterations):
            ops.append(Begin("sync", i))
            if b == 0:
                ops += [Wait(f"SYNC[{p}]==1", SYNC, flag[p], Pred.EQ, 1) for p in peers]
                ops.append(Reset(SYNC, tuple(flag[p] for p in peers)))
            else:
                ops += [
                    Atomic(SYNC, flag[b], AtomicKind.EXCH, 1),
                    Wait(f"SYNC[{b}]==0", SYNC, flag[b], Pred.EQ, 0),
                ]
            ops.append(End("sync", i))
        programs.append(CtaProgram(b, "main" if b == 0 else "peer", (), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="cub_gridbarrier",
    description="cub#369: cub::GridBarrier with 128 blocks of 1024 threads on a 56-SM P100",
    config_type=CubBarrierConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("main", "peer"),
    stages=("sync",),
    role_colors={"main": "#d62728", "peer": "#1f77b4"},
    stage_colors={"sync": "#7f7f7f"},
    cost_keys=(),
    threads=1024,  # the thread's block: two an SM on a P100
    regs_per_thread=32,
)

CASE = BugCase(
    kernel="cub_gridbarrier",
    project="NVIDIA/cub",
    threads=("https://github.com/NVIDIA/cub/issues/369",),
    gpu="p100",
    category="deadlock",
    culprit="SYNC[112]",
    fix_args=("--blocks", "56"),
)
