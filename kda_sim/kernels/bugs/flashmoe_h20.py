"""FlashMoE on an H20: a grid sized for the H100's 132 SMs hangs on the H20's 78.

Thread: https://github.com/osayamenja/FlashMoE/issues/3 (fixed in osayamenja/Kleos
ba48791, the SM count queried at build time). The kernel's block count was the SM_90
figure compiled in (132, the H100's), and its persistent blocks talk to each other, so all
must be resident at once; on an H20 (78 SMs) the blocks past the 78th never start and the
communication deadlocks.

The protocol as modelled: the thread's 132 blocks did not fit 78 SMs, so a block takes
more than half an SM's shared memory (one an SM). One block is the OS block (scheduler
and subscriber), the others are processors: each processor announces itself (``READY``
+= 1) and waits for its task doorbell ``TASK[p]``; the OS block waits for every
processor, rings each doorbell, and waits until all are done (``DONE``). Which block is
the OS block is the model's choice (block 0); any choice hangs the same way. ``fix``
sizes the grid by the H20's SM count, from its profile.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel
from kda_sim.machine.profile import load_gpu
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

READY, TASK, DONE = 0, 1, 2  # region ids, in the order of regions()
H100_SMS = 132  # the SM_90 figure the grid was sized by (the thread)


@dataclass(frozen=True)
class FlashMoeConfig:
    blocks: int = H100_SMS  # the grid: the SM count compiled in
    fix: bool = False  # size the grid by the H20's SM count instead

    def validate(self) -> FlashMoeConfig:
        if self.blocks < 2:
            raise InvalidInput(f"blocks = {self.blocks}: at least 2 (an OS block)", what="blocks")
        return self


def grid(cfg: FlashMoeConfig) -> int:
    return load_gpu("h20").units if cfg.fix else cfg.blocks


def regions(cfg: FlashMoeConfig) -> dict[str, int]:
    return {"READY": 1, "TASK": grid(cfg) - 1, "DONE": 1}


def launch_size(cfg: FlashMoeConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: the OS block's 4 and a hand-out a processor, and 6
    ops a processor block."""
    return 4 + 7 * (grid(cfg) - 1), ("blocks",)


def build(cfg: FlashMoeConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    procs = grid(cfg) - 1
    ready, done = int(space.gid(READY, 0)), int(space.gid(DONE, 0))
    task = [int(space.gid(TASK, p)) for p in range(procs)]
    os_ops: list[Op] = [Begin("os"), Wait(f"READY>={procs}", READY, ready, Pred.GE, procs)]
    os_ops += [Atomic(TASK, task[p], AtomicKind.EXCH, 1) for p in range(procs)]
    os_ops += [Wait(f"DONE>={procs}", DONE, done, Pred.GE, procs), End("os")]
    programs = [CtaProgram(0, "os", (), tuple(os_ops))]
    for p in range(procs):
        ops = (
            Begin("expert", p),
            Atomic(READY, ready, AtomicKind.ADD, 1),
            Wait(f"TASK[{p}]", TASK, task[p], Pred.EQ, 1),
            Compute("fm.expert"),
            Atomic(DONE, done, AtomicKind.ADD, 1),
            End("expert", p),
        )
        programs.append(CtaProgram(p + 1, "processor", (p,), ops))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="flashmoe_h20",
    description="FlashMoE#3: a grid sized for 132 SMs, every block needed at once, on a 78-SM H20",
    config_type=FlashMoeConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("os", "processor"),
    stages=("os", "expert"),
    role_colors={"os": "#d62728", "processor": "#1f77b4"},
    stage_colors={"os": "#8c564b", "expert": "#ff7f0e"},
    cost_keys=("fm.expert",),
    default_costs={"fm.expert": (2000.0, 0.0)},  # illustrative, not measured
    threads=128,
    regs_per_thread=64,
    lds_bytes=128 * 1024,  # over half of an SM's 228 KiB: one block an SM
)

CASE = BugCase(
    kernel="flashmoe_h20",
    project="osayamenja/FlashMoE",
    threads=("https://github.com/osayamenja/FlashMoE/issues/3",),
    gpu="h20",
    category="deadlock",
    culprit="READY[0]",
    fix_args=("--fix", "true"),
)
