"""nvFuser's grid sync with the semaphore reset by the block that releases it: the other
blocks read the reset instead of the release and wait forever.

Thread: https://github.com/NVIDIA/Fuser/pull/2081 (the hazard found in its review).
To reuse a grid sync's semaphore without a memset, the change had the last block clear it
right after flipping the bit that releases the waiting blocks; a persistent kernel's
blocks still watching for that bit then read 0 and keep waiting. The author withdrew the
reset ("we can't do this without causing deadlocks").

The protocol as modelled, on the example ``gridbarrier`` kernel's machinery: each block
adds 1 to the semaphore and waits until every block has (the released state); with the
reset, the block that releases, the last to arrive (its add returns ``blocks - 1``),
stores 0 right after its add instead of waiting. The fix keeps a value that only grows
(each sync waits for its own multiple of the block count).
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.on_example import on_example
from kda_sim.kernels.examples import gridbarrier
from kda_sim.kernels.spec import require_at_least


@dataclass(frozen=True)
class FuserSyncConfig:
    blocks: int = 8
    syncs: int = 2  # grid syncs of one persistent launch
    fix: bool = False  # no reset: each sync waits for its own multiple of blocks

    def validate(self) -> FuserSyncConfig:
        require_at_least(self, "blocks", "syncs")
        return self


def _inner(cfg: FuserSyncConfig) -> gridbarrier.GridBarrierConfig:
    return gridbarrier.GridBarrierConfig(cfg.blocks, cfg.syncs, last_resets=not cfg.fix)


KERNEL = on_example(
    gridbarrier.KERNEL,
    name="fuser_gridsync",
    description="Fuser#2081: the releasing block resets the grid sync's semaphore",
    config_type=FuserSyncConfig,
    inner=_inner,
    fields={"ctas": "blocks", "rounds": "syncs"},
)

CASE = BugCase(
    kernel="fuser_gridsync",
    project="NVIDIA/Fuser",
    threads=("https://github.com/NVIDIA/Fuser/pull/2081",),
    gpu="h200",
    category="reset-race",
    culprit="ARRIVE[0]",
    fix_args=("--fix", "true"),
)
