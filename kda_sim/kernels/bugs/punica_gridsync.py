"""Punica's sgmv_shrink: blocks call ``grid.sync()`` a different number of times, and the
blocks with more steps wait at a sync the others never reach.

Threads: https://github.com/punica-ai/punica/pull/35 and the same fix in the copy of the
kernel in LoRAX, https://github.com/predibase/lorax/pull/156 (issue
https://github.com/predibase/lorax/issues/149). Each block runs as many steps as its
segment is long and syncs the grid after each, so with segments of unequal length one
block calls ``grid.sync()`` more often than another and the launch deadlocks. The fix has
every block run the longest segment's step count, padding with extra syncs.

The protocol as modelled: a grid barrier of a counter only arrivals write (each arrival
adds 1; the s-th sync waits until every block's s-th arrival is in, ``ARRIVE >= (s + 1)
x blocks``); block 0's segment takes ``long_steps`` steps, the others' ``short_steps``.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, launch_terms, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

ARRIVE = 0  # the region id of the grid barrier's counter


@dataclass(frozen=True)
class SgmvConfig:
    blocks: int = 4
    long_steps: int = 3  # block 0's segment
    short_steps: int = 1  # every other block's
    fix: bool = False  # every block syncs as often as the longest segment needs

    def validate(self) -> SgmvConfig:
        require_at_least(self, "blocks", "long_steps", "short_steps")
        return self


def regions(cfg: SgmvConfig) -> dict[str, int]:
    return {"ARRIVE": 1}


def launch_size(cfg: SgmvConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 4 a block's sync (each of its own steps', or with
    ``fix`` the longest segment's) and 3 a step it computes."""
    most = max(cfg.long_steps, cfg.short_steps)
    first = 4 * (most if cfg.fix else cfg.long_steps) + 3 * cfg.long_steps
    other = 4 * (most if cfg.fix else cfg.short_steps) + 3 * cfg.short_steps
    return launch_terms(
        {("long_steps",): first, ("blocks", "short_steps"): (cfg.blocks - 1) * other}
    )


def build(cfg: SgmvConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    word = int(space.gid(ARRIVE, 0))
    most = max(cfg.long_steps, cfg.short_steps)
    programs = []
    for b in range(cfg.blocks):
        steps = cfg.long_steps if b == 0 else cfg.short_steps
        ops: list[Op] = []
        for s in range(most if cfg.fix else steps):
            target = (s + 1) * cfg.blocks
            if s < steps:
                ops += [Begin("step", s), Compute("sgmv.step"), End("step", s)]
            ops += [
                Begin("sync", s),
                Atomic(ARRIVE, word, AtomicKind.ADD, 1),
                Wait(f"ARRIVE>={target}", ARRIVE, word, Pred.GE, target),
                End("sync", s),
            ]
        programs.append(CtaProgram(b, "block", (), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="punica_gridsync",
    description="punica#35: blocks call grid.sync() as often as their segment is long",
    config_type=SgmvConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("block",),
    stages=("step", "sync"),
    role_colors={"block": "#2ca02c"},
    stage_colors={"step": "#ff7f0e", "sync": "#7f7f7f"},
    cost_keys=("sgmv.step",),
    default_costs={"sgmv.step": (800.0, 0.0)},  # illustrative, not measured
    threads=256,
    regs_per_thread=64,
)

CASE = BugCase(
    kernel="punica_gridsync",
    project="punica-ai/punica",
    threads=(
        "https://github.com/punica-ai/punica/pull/35",
        "https://github.com/predibase/lorax/pull/156",
        "https://github.com/predibase/lorax/issues/149",
    ),
    gpu="h200",
    category="deadlock",
    culprit="ARRIVE[0]",
    fix_args=("--fix", "true"),
)
