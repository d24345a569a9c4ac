"""aiter's FlyDSL split-K HGEMM in a CUDA graph: the semaphores are zeroed once, eagerly,
and a replay's last-workgroup handshake never re-arms.

Thread: https://github.com/ROCm/aiter/pull/4715 (the same failure as the ASM kernel's,
https://github.com/ROCm/aiter/pull/4494). The split-K workspace comes from a memoized
allocator that zeroes it once, before capture, so the zeroing is not a node of the graph;
each workgroup decrements its tile's counter as it retires and the last one reduces,
which needs the counter at 0 when a launch starts, and on replay it is not: the reduction
never fires and the kernel hangs.

The protocol as modelled: ``tiles`` x ``splits`` workgroups (the thread's skinny decode
shapes pick split_k 4 to 8); each computes its partial and adds -1 to ``SEM[t]``; the
tile's reducer waits until it reads ``-splits`` (every split retired) and reduces; nothing
in the kernel writes the counter back. The fix (#4715, as #4494) is the host's: the
workspace zeroed inside the graph with each launch (``launch zero=SEM``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SEM = 0  # the region id of the tiles' counters


@dataclass(frozen=True)
class FlyDslSplitKConfig:
    tiles: int = 4
    splits: int = 4  # split_k: 4 to 8 on the thread's shapes

    def validate(self) -> FlyDslSplitKConfig:
        require_at_least(self, "tiles", "splits")
        return self


def regions(cfg: FlyDslSplitKConfig) -> dict[str, int]:
    return {"SEM": cfg.tiles}


def launch_size(cfg: FlyDslSplitKConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 4 a CTA's partial and 4 a tile's reduce."""
    return cfg.tiles * (4 * cfg.splits + 4), ("tiles", "splits")


def build(cfg: FlyDslSplitKConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    programs = []
    for t in range(cfg.tiles):
        word = int(space.gid(SEM, t))
        for s in range(cfg.splits):
            ops: list[Op] = [
                Begin("partial", t),
                Compute("fd.partial"),
                Atomic(SEM, word, AtomicKind.ADD, -1),
                End("partial", t),
            ]
            if s == 0:
                ops += [
                    Begin("reduce", t),
                    Wait(f"SEM[{t}]==-{cfg.splits}", SEM, word, Pred.EQ, -cfg.splits),
                    Compute("fd.reduce"),
                    End("reduce", t),
                ]
            role = "reducer" if s == 0 else "split"
            programs.append(CtaProgram(len(programs), role, (t,), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="aiter_flydsl_splitk",
    description="aiter#4715: FlyDSL split-K counters zeroed once, before graph capture",
    config_type=FlyDslSplitKConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("reducer", "split"),
    stages=("partial", "reduce"),
    role_colors={"reducer": "#d62728", "split": "#1f77b4"},
    stage_colors={"partial": "#ff7f0e", "reduce": "#9467bd"},
    cost_keys=("fd.partial", "fd.reduce"),
    default_costs={"fd.partial": (1200.0, 0.0), "fd.reduce": (300.0, 0.0)},  # illustrative
    threads=256,
    regs_per_thread=128,
)

CASE = BugCase(
    kernel="aiter_flydsl_splitk",
    project="ROCm/aiter",
    threads=("https://github.com/ROCm/aiter/pull/4715",),
    gpu="mi355x",
    category="deadlock",
    culprit="SEM[0]",
    sequence="zero=SEM; launch; replay",
    fix_sequence="launch zero=SEM; replay",
)
