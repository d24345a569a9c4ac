"""aiter's ASM split-K GEMM in a CUDA graph: the semaphore is zeroed once, outside the
graph, and a replay spins on the count an earlier run left.

Threads: https://github.com/ROCm/aiter/pull/4494 (reverted in
https://github.com/ROCm/aiter/pull/4709), https://github.com/ROCm/aiter/pull/4916 and
https://github.com/ROCm/aiter/issues/4920. The kernel needs its split-K counter to be 0
when a launch starts, but aiter zeroed it once, where it allocated it, and a graph
records the launches, not that zeroing; on replay the counter is not 0, the reduction
never fires and the waves spin (Kimi-K3 TP8 on 8x MI355X hung at warm-up; rocgdb: 132
waves waiting on a counter holding 2).

The protocol as modelled: 132 waves, ``tiles`` x ``splits``; each wave computes its
partial, adds 1 to its tile's counter ``SEM[t]`` and waits until it reads ``splits``
(every split arrived), then the tile is reduced. The thread does not say which path
leaves the counter non-zero; the model writes nothing back, so a launch leaves
``splits``. The fix (#4916) is the host's: the zero-fill recorded in the graph with each
launch (``launch zero=SEM``), one counter a recorded launch.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SEM = 0  # the region id of the tiles' counters


@dataclass(frozen=True)
class AiterSplitKConfig:
    tiles: int = 66  # output tiles: 66 x 2 splits = the thread's 132 waves
    splits: int = 2

    def validate(self) -> AiterSplitKConfig:
        require_at_least(self, "tiles", "splits")
        return self


def regions(cfg: AiterSplitKConfig) -> dict[str, int]:
    return {"SEM": cfg.tiles}


def launch_size(cfg: AiterSplitKConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 8 a wave, ``splits`` waves a tile."""
    return 8 * cfg.tiles * cfg.splits, ("tiles", "splits")


def build(cfg: AiterSplitKConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    programs = []
    for t in range(cfg.tiles):
        word = int(space.gid(SEM, t))
        ops = (
            Begin("partial", t),
            Compute("ak.partial"),
            Atomic(SEM, word, AtomicKind.ADD, 1),
            Wait(f"SEM[{t}]=={cfg.splits}", SEM, word, Pred.EQ, cfg.splits),
            End("partial", t),
            Begin("reduce", t),
            Compute("ak.reduce"),
            End("reduce", t),
        )
        programs += [CtaProgram(len(programs) + s, "wave", (t,), ops) for s in range(cfg.splits)]
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="aiter_splitk",
    description="aiter#4494/#4916/#4920: a split-K counter zeroed once, outside the captured graph",
    config_type=AiterSplitKConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("wave",),
    stages=("partial", "reduce"),
    role_colors={"wave": "#1f77b4"},
    stage_colors={"partial": "#ff7f0e", "reduce": "#9467bd"},
    cost_keys=("ak.partial", "ak.reduce"),
    default_costs={"ak.partial": (1500.0, 0.0), "ak.reduce": (300.0, 0.0)},  # illustrative
    threads=256,
    regs_per_thread=128,
)

CASE = BugCase(
    kernel="aiter_splitk",
    project="ROCm/aiter",
    threads=(
        "https://github.com/ROCm/aiter/pull/4494",
        "https://github.com/ROCm/aiter/pull/4709",
        "https://github.com/ROCm/aiter/pull/4916",
        "https://github.com/ROCm/aiter/issues/4920",
    ),
    gpu="mi355x",
    category="deadlock",
    culprit="SEM[0]",
    sequence="zero=SEM; launch; replay",
    fix_sequence="launch zero=SEM; replay",
)
