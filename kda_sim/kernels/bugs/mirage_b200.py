"""Mirage's persistent kernel split in a scheduler grid and a worker grid on a B200: the
scheduler blocks take SMs the workers need, and the first request hangs.

Threads: https://github.com/mirage-project/mirage/issues/761 and the fix adopted,
https://github.com/mirage-project/mirage/pull/775. The two grids run on two streams with
no order between them, and a worker needs most of an SM's shared memory (213 KB), so it
cannot share an SM with a scheduler block. With one 32-thread block a scheduler, the
default 80 schedulers placed first spread over 80 of the B200's 148 SMs and only 68 of
the 128 workers start: the resident workers spin in their dependent-event wait forever.

The protocol as modelled: scheduler block b hands a task to each worker w with w % blocks
== b (``QUEUE[w]`` += 1), waits until every worker reports the wave done (``EVENT >=
workers``), then hands out the next, dependent wave; a worker waits for each of its two
tasks and reports the first. The grids share each SM by footprint; a scheduler block's
16 KiB of LDS is the model's choice (the threads give none): more than a worker leaves
(#775), and 80 blocks still pack into the 20 spare SMs when the workers are placed first
(#761: then 128/80 works). The fix (#775): four scheduler warps a block, 20 blocks.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.machine.profile import KernelResources
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

QUEUE, EVENT = 0, 1  # region ids
GRIDS = ("scheduler", "worker")
SCHEDULERS_PER_BLOCK = 4  # the fix's packing (#775)
WARP, SCHEDULER_LDS, WORKER_LDS = 32, 16 * 1024, 213 * 1024  # bytes: the model's, #761's


@dataclass(frozen=True)
class MirageConfig:
    grid: str = "worker"  # which of the two grids this launch is
    workers: int = 128  # the default sizing on a B200 (#775)
    schedulers: int = 80
    fix: bool = False  # pack SCHEDULERS_PER_BLOCK schedulers into a block

    def validate(self) -> MirageConfig:
        if self.grid not in GRIDS:
            raise InvalidInput(f"grid = {self.grid!r}: one of {', '.join(GRIDS)}", what="grid")
        require_at_least(self, "workers", "schedulers")
        return self


def scheduler_blocks(cfg: MirageConfig) -> int:
    return -(-cfg.schedulers // (SCHEDULERS_PER_BLOCK if cfg.fix else 1))


def resources(cfg: MirageConfig) -> KernelResources:  # a CTA's, by grid
    if cfg.grid == "worker":
        return KernelResources(256, 64, WORKER_LDS)
    return KernelResources(WARP * (SCHEDULERS_PER_BLOCK if cfg.fix else 1), 64, SCHEDULER_LDS)


def regions(cfg: MirageConfig) -> dict[str, int]:
    return {"QUEUE": cfg.workers, "EVENT": 1}


def launch_size(cfg: MirageConfig) -> tuple[int, tuple[str, ...]]:  # build's ops
    if cfg.grid == "scheduler":  # 5 a block, a hand-out a worker a wave
        return 5 * scheduler_blocks(cfg) + 2 * cfg.workers, ("schedulers", "workers")
    return 9 * cfg.workers, ("workers",)


def build(cfg: MirageConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    queue = [int(space.gid(QUEUE, w)) for w in range(cfg.workers)]
    event = int(space.gid(EVENT, 0))
    programs = []
    if cfg.grid == "scheduler":
        for b in range(blocks := scheduler_blocks(cfg)):
            mine = range(b, cfg.workers, blocks)
            hand = [Atomic(QUEUE, queue[w], AtomicKind.ADD, 1) for w in mine]
            wave = Wait(f"EVENT>={cfg.workers}", EVENT, event, Pred.GE, cfg.workers)
            ops: list[Op] = [Begin("schedule", 0), *hand, End("schedule", 0), Begin("schedule", 1)]
            ops += [wave, *hand, End("schedule", 1)]
            programs.append(CtaProgram(b, "scheduler", (), tuple(ops)))
        return Launch(cfg, space, tuple(programs))
    done = Atomic(EVENT, event, AtomicKind.ADD, 1)  # a worker reports its first task
    for w in range(cfg.workers):
        task = [Wait(f"QUEUE[{w}]>={v}", QUEUE, queue[w], Pred.GE, v) for v in (1, 2)]
        ops = [Begin("task", 1), task[0], Compute("mpk.task"), done, End("task", 1)]
        ops += [Begin("task", 2), task[1], Compute("mpk.task"), End("task", 2)]
        programs.append(CtaProgram(w, "worker", (w,), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="mirage_b200",
    description="mirage#761/#775: scheduler and worker grids on two streams race for a B200's SMs",
    config_type=MirageConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=GRIDS,
    stages=("schedule", "task"),
    role_colors={"scheduler": "#d62728", "worker": "#2ca02c"},
    stage_colors={"schedule": "#8c564b", "task": "#ff7f0e"},
    cost_keys=("mpk.task",),
    default_costs={"mpk.task": (3000.0, 0.0)},  # illustrative, not measured
    resources_fn=resources,
)

CASE = BugCase(
    kernel="mirage_b200",
    project="mirage-project/mirage",
    threads=(
        "https://github.com/mirage-project/mirage/issues/761",
        "https://github.com/mirage-project/mirage/pull/775",
    ),
    gpu="b200",
    category="deadlock",
    culprit="grid 1 CTA",
    sequence="launch grid=scheduler & launch grid=worker",
    fix_args=("--fix", "true"),
)
