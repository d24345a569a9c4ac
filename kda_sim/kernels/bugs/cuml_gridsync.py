"""cuML's GridSync: one arrival counter reused by back-to-back ``sync()`` calls deadlocks.

Threads: https://github.com/NVIDIA/cuml/issues/458 and the fix,
https://github.com/NVIDIA/cuml/pull/465. A block that leaves one ``sync()`` can add its
arrival for the next one before a slow block has read the counter's 0 of the current one,
so the slow block never sees 0 and every block waits on it. The fix gives a grid two
workspaces and swaps them after each sync, so consecutive syncs use different counters.

The protocol as the primitive states it: block 0 adds ``-(blocks - 1)`` and every other
block adds 1 to the counter (``markArrived``), then each waits until it reads 0
(``waitForOthers``); the counter is zeroed before the kernel. Reported on a Titan V with
many blocks; the block count and the work between syncs are the model's choice.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SYNC = 0  # the region id of the arrival counters (one, or two with the fix)


@dataclass(frozen=True)
class GridSyncConfig:
    blocks: int = 80  # one a Titan V SM
    syncs: int = 2  # back-to-back sync() calls
    fix: bool = False  # two workspaces, swapped after each sync (#465)

    def validate(self) -> GridSyncConfig:
        require_at_least(self, "blocks", "syncs")
        return self


def regions(cfg: GridSyncConfig) -> dict[str, int]:
    return {"SYNC": 2 if cfg.fix else 1}


def launch_size(cfg: GridSyncConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 7 a block's sync."""
    return 7 * cfg.blocks * cfg.syncs, ("blocks", "syncs")


def build(cfg: GridSyncConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    programs = []
    for b in range(cfg.blocks):
        arrive = -(cfg.blocks - 1) if b == 0 else 1
        ops: list[Op] = []
        for s in range(cfg.syncs):
            word = int(space.gid(SYNC, s % 2 if cfg.fix else 0))
            ops += [
                Begin("work", s),
                Compute("gs.work"),
                End("work", s),
                Begin("sync", s),
                Atomic(SYNC, word, AtomicKind.ADD, arrive),
                Wait("SYNC==0", SYNC, word, Pred.EQ, 0),
                End("sync", s),
            ]
        programs.append(CtaProgram(b, "block", (), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="cuml_gridsync",
    description="cuml#458: a grid barrier's counter reused by back-to-back sync() calls",
    config_type=GridSyncConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("block",),
    stages=("work", "sync"),
    role_colors={"block": "#2ca02c"},
    stage_colors={"work": "#ff7f0e", "sync": "#7f7f7f"},
    cost_keys=("gs.work",),
    default_costs={"gs.work": (100.0, 0.0)},  # illustrative: little work between syncs
    threads=256,
    regs_per_thread=32,
)

CASE = BugCase(
    kernel="cuml_gridsync",
    project="NVIDIA/cuml",
    threads=(
        "https://github.com/NVIDIA/cuml/issues/458",
        "https://github.com/NVIDIA/cuml/pull/465",
    ),
    gpu="titanv",
    category="aba",
    culprit="SYNC[0]",
    fix_args=("--fix", "true"),
)
