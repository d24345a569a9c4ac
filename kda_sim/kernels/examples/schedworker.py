"""A scheduler grid beside a worker grid, launched on two streams and sharing memory:
every worker CTA announces itself (adds 1 to ``ALIVE``) and waits until each scheduler
CTA has handed out the work (``STOP >= schedulers``), then works; every scheduler CTA
waits until all ``workers`` are up (``ALIVE >= workers``), schedules, and adds 1 to
``STOP``. ``grid`` says which of the two grids a launch is.

Both grids must be resident at once: a CTA takes a unit's worth of shared memory, so a
GPU holds one a unit, and when the two grids together have more CTAs than that, the
grid placed first takes the slots and the other's CTAs never start: the residents wait
on them forever, whichever grid goes first.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

ALIVE, STOP = 0, 1  # region ids
GRIDS = ("scheduler", "worker")


@dataclass(frozen=True)
class SchedWorkerConfig:
    grid: str = "worker"  # which grid this launch is: scheduler or worker
    schedulers: int = 1  # CTAs of the scheduler grid
    workers: int = 4  # CTAs of the worker grid

    def validate(self) -> SchedWorkerConfig:
        if self.grid not in GRIDS:
            raise InvalidInput(f"grid = {self.grid!r}: one of {', '.join(GRIDS)}", what="grid")
        require_at_least(self, "schedulers", "workers")
        return self


def regions(cfg: SchedWorkerConfig) -> dict[str, int]:
    return {"ALIVE": 1, "STOP": 1}


def launch_size(cfg: SchedWorkerConfig) -> tuple[int, tuple[str, ...]]:
    """Five ops a CTA of this launch's grid (:func:`build`)."""
    if cfg.grid == "scheduler":
        return 5 * cfg.schedulers, ("schedulers",)
    return 5 * cfg.workers, ("workers",)


def build(cfg: SchedWorkerConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    alive, stop = int(space.gid(ALIVE, 0)), int(space.gid(STOP, 0))
    if cfg.grid == "scheduler":
        ops = (
            Begin("schedule"),
            Wait(f"ALIVE>={cfg.workers}", ALIVE, alive, Pred.GE, cfg.workers),
            Compute("sw.schedule"),
            Atomic(STOP, stop, AtomicKind.ADD, 1),
            End("schedule"),
        )
        n, role = cfg.schedulers, "scheduler"
    else:
        ops = (
            Begin("work"),
            Atomic(ALIVE, alive, AtomicKind.ADD, 1),
            Wait(f"STOP>={cfg.schedulers}", STOP, stop, Pred.GE, cfg.schedulers),
            Compute("sw.work"),
            End("work"),
        )
        n, role = cfg.workers, "worker"
    return Launch(cfg, space, tuple(CtaProgram(c, role, (), ops) for c in range(n)))


KERNEL = Kernel(
    name="schedworker",
    description="a scheduler grid and a worker grid that wait on each other through memory",
    config_type=SchedWorkerConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("scheduler", "worker"),
    stages=("schedule", "work"),
    role_colors={"scheduler": "#d62728", "worker": "#2ca02c"},
    stage_colors={"schedule": "#8c564b", "work": "#ff7f0e"},
    cost_keys=("sw.schedule", "sw.work"),
    default_costs={"sw.schedule": (500.0, 0.0), "sw.work": (2000.0, 0.0)},
    threads=256,
    regs_per_thread=64,
    lds_bytes=96 * 1024,  # most of a unit's shared memory: one CTA a unit on an MI355X
)
