"""A grid barrier from an arrival counter: each of ``ctas`` CTAs works, adds 1 to
``ARRIVE`` (an atomic add) and waits until ``ARRIVE >= ctas``, then works again, for
``rounds`` rounds.

The counter is never reset: it counts arrivals over every round, so round r waits for
``(r + 1) * ctas`` (the count is the barrier's generation times ctas). With ``broken``,
CTA 0 resets the counter after passing each barrier so that the next round can count
from 0 and wait for ``ctas`` again: a CTA still waiting on the previous round may read
the 0 instead of the full count and wait forever (an ABA hazard), and every CTA then
waits on it. With ``last_resets`` the reset is the last arriver's (the CTA whose add
returns ``ctas - 1``, whichever it is): it stores 0 instead of waiting, while the others
may not yet have read the full count. The barrier needs every CTA resident at once.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import Kernel
from kda_sim.protocol.branches import on_old
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

ARRIVE = 0  # the region id of the arrival counter


@dataclass(frozen=True)
class GridBarrierConfig:
    ctas: int = 8  # CTAs in the grid: the barrier waits for all of them
    rounds: int = 2  # barriers, each between two phases of work
    broken: bool = False  # CTA 0 resets the counter while others may still wait
    last_resets: bool = False  # the last CTA to arrive resets it instead of waiting

    def validate(self) -> GridBarrierConfig:
        if self.ctas < 1:
            raise InvalidInput(f"ctas = {self.ctas}: at least 1", what="ctas")
        if self.rounds < 1:
            raise InvalidInput(f"rounds = {self.rounds}: at least 1", what="rounds")
        return self


def regions(cfg: GridBarrierConfig) -> dict[str, int]:
    return {"ARRIVE": 1}


def launch_size(cfg: GridBarrierConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: a CTA's round is work (3 ops), the barrier's Begin,
    add and End, and its wait (1 op) or the last arriver's branch (the branch and its
    two ops); then the last work (3 ops); ``broken``: CTA 0's reset a round."""
    barrier = 3 + (3 if cfg.last_resets else 1)
    ops = cfg.ctas * (cfg.rounds * (3 + barrier) + 3) + (cfg.rounds if cfg.broken else 0)
    return ops, ("ctas", "rounds")


def build(cfg: GridBarrierConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    word = int(space.gid(ARRIVE, 0))
    programs = []
    for c in range(cfg.ctas):
        ops: list[Op] = []
        for r in range(cfg.rounds):
            target = cfg.ctas if cfg.broken or cfg.last_resets else (r + 1) * cfg.ctas
            wait = Wait(f"ARRIVE>={target}", ARRIVE, word, Pred.GE, target)
            ops += [Begin("work", r), Compute("gb.work"), End("work", r), Begin("barrier", r)]
            if cfg.last_resets:
                reset = (Reset(ARRIVE, (word,)),)
                last = on_old("last arriver", "old", Pred.EQ, cfg.ctas - 1, reset, (wait,))
                ops += [Atomic(ARRIVE, word, AtomicKind.ADD, 1, into="old"), last]
            else:
                ops += [Atomic(ARRIVE, word, AtomicKind.ADD, 1), wait]
            ops.append(End("barrier", r))
            if cfg.broken and c == 0:
                ops.append(Reset(ARRIVE, (word,)))
        ops += [Begin("work", cfg.rounds), Compute("gb.work"), End("work", cfg.rounds)]
        programs.append(CtaProgram(c, "member", (), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


@dataclass(frozen=True)
class _GridBarrierKernel(Kernel):
    # the optional hook (kda_sim.kernels.spec): the safety map's axes, and the fields a
    # traced launch's file name gives (kda-sim spread: gridbarrier_ctas{C}_rounds{R}_{i})
    sweep_axes: tuple[str, str] = ("ctas", "rounds")


KERNEL = _GridBarrierKernel(
    name="gridbarrier",
    description="a grid barrier from an atomic arrival counter and a >= wait, over rounds",
    config_type=GridBarrierConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("member",),
    stages=("work", "barrier"),
    role_colors={"member": "#2ca02c"},
    stage_colors={"work": "#ff7f0e", "barrier": "#7f7f7f"},
    cost_keys=("gb.work",),
    default_costs={"gb.work": (1000.0, 0.0)},
    threads=256,
    regs_per_thread=32,
)
