"""DeepGEMM's MegaMoE combine under CUDA graph replay: a readiness tag from an earlier
replay passes for this one's.

Thread: https://github.com/deepseek-ai/DeepGEMM/pull/451. Each rank marks its combine
results ready at a peer with a tag taken from ``%gridid``, and the peer pulls once the tag
is this launch's; graph replay can reuse ``%gridid``, so the flag an earlier replay left
already holds the tag and the peer reads old or partially updated results. The fix resets
the local peer-readiness flags before the existing pull barrier, so a replay's flags hold
nothing until its peers set them.

The protocol as modelled: ``ranks`` CTAs, one a rank; rank r writes its results into rank
r + 1's buffer and puts that rank's flag ``READY[r + 1]``, a (value, tag) pair whose tag
is the launch's (``%gridid``), then polls its own ``READY[r]`` for that tag and pulls. A
replay of the captured graph keeps the captured launch's tag (the case's ``replay``: the
thread's replay that reuses ``%gridid``). ``fix`` has each rank reset its flag pair after
pulling (a pair reset: the pair holds no tag until it is put again). Odd ranks carry
twice the combine work (the model's choice: ranks are not in step, so a rank can be ready
to pull before its producer has put).
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.spec import Kernel
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import Begin, Compute, End, Op, Put
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

READY = 0  # the region id of the ranks' readiness flags


@dataclass(frozen=True)
class MegaMoeConfig:
    ranks: int = 8  # the thread's FP8 validation: 8 B300 ranks
    fix: bool = False  # reset the local readiness flag after pulling (#451)

    def validate(self) -> MegaMoeConfig:
        if self.ranks < 2:
            raise InvalidInput(f"ranks = {self.ranks}: at least 2", what="ranks")
        return self


def regions(cfg: MegaMoeConfig) -> dict[str, int]:
    return {"READY": cfg.ranks}


def launch_size(cfg: MegaMoeConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 8 a rank, and its flag's reset with ``fix``."""
    return cfg.ranks * (8 + cfg.fix), ("ranks",)


def build(cfg: MegaMoeConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    flag = [space.gid(READY, [r]) for r in range(cfg.ranks)]
    programs = []
    for r in range(cfg.ranks):
        peer = (r + 1) % cfg.ranks
        ready = poll(f"READY[{r}]", flag[r].reshape(1, 1), width=1)
        ops: list[Op] = [
            Begin("combine", r),
            Compute("mm.combine", units=1 + r % 2),
            Put(READY, flag[peer]),
            End("combine", r),
            Begin("pull", r),
            ready,
            Compute("mm.pull", reads=ready.cells),
            *([ResetPairs(READY, (int(flag[r][0]),))] if cfg.fix else []),
            End("pull", r),
        ]
        programs.append(CtaProgram(r, "rank", (r,), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


KERNEL = Kernel(
    name="deepgemm_gridid",
    description="DeepGEMM#451: a readiness tag from %gridid, reused by graph replay",
    config_type=MegaMoeConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("rank",),
    stages=("combine", "pull"),
    role_colors={"rank": "#9467bd"},
    stage_colors={"combine": "#ff7f0e", "pull": "#2ca02c"},
    cost_keys=("mm.combine", "mm.pull"),
    default_costs={"mm.combine": (0.0, 2000.0), "mm.pull": (800.0, 0.0)},  # illustrative
    threads=256,
    regs_per_thread=64,
)

CASE = BugCase(
    kernel="deepgemm_gridid",
    project="deepseek-ai/DeepGEMM",
    threads=("https://github.com/deepseek-ai/DeepGEMM/pull/451",),
    gpu="b200",
    category="stale",
    culprit="READY[",
    sequence="launch; replay",
    fix_args=("--fix", "true"),
)
