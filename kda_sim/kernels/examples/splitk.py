"""A split-K semaphore: each tile's K is split over ``splits`` CTAs; each computes its
partial sum and adds 1 to the tile's counter in ``SEM`` (an atomic add); the tile's
split-0 CTA waits until the counter shows every split arrived (``== splits``, or
``>= splits`` with ``wait=ge``) and reduces.

One launch is correct with the counter at 0 when it starts. Run again, it starts from
the ``splits`` the last run left unless the host zeroes ``SEM`` before every launch
(inside a captured graph, with the launch) or ``reset`` has the reducer zero it after
reducing: otherwise ``==`` never holds again (the replay hangs) and ``>=`` passes before
this launch's partials arrive.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import Kernel, require_at_least
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Reset, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SEM = 0  # the region id of the tiles' counters
WAITS = {"eq": Pred.EQ, "ge": Pred.GE}


@dataclass(frozen=True)
class SplitKConfig:
    tiles: int = 1  # output tiles, one counter each
    splits: int = 2  # CTAs a tile's K is split over
    wait: str = "eq"  # the reducer's predicate: eq (== splits) or ge (>= splits)
    reset: bool = False  # the reducer zeroes its counter after reducing

    def validate(self) -> SplitKConfig:
        require_at_least(self, "tiles", "splits")
        if self.wait not in WAITS:
            raise InvalidInput(f"wait = {self.wait!r}: one of {', '.join(WAITS)}", what="wait")
        return self


def regions(cfg: SplitKConfig) -> dict[str, int]:
    return {"SEM": cfg.tiles}


def launch_size(cfg: SplitKConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: 4 a CTA's partial, and a tile's reduce (4, and the
    reset with ``reset``)."""
    return cfg.tiles * (4 * cfg.splits + 4 + cfg.reset), ("tiles", "splits")


def build(cfg: SplitKConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    programs = []
    for t in range(cfg.tiles):
        word = int(space.gid(SEM, t))
        for s in range(cfg.splits):
            ops: list[Op] = [
                Begin("partial", t),
                Compute("sk.partial"),
                Atomic(SEM, word, AtomicKind.ADD, 1),
                End("partial", t),
            ]
            if s == 0:
                pred = WAITS[cfg.wait]
                ops += [
                    Begin("reduce", t),
                    Wait(f"SEM{pred.value}{cfg.splits}", SEM, word, pred, cfg.splits),
                    Compute("sk.reduce"),
                    *([Reset(SEM, (word,))] if cfg.reset else []),
                    End("reduce", t),
                ]
            role = "reducer" if s == 0 else "split"
            programs.append(CtaProgram(len(programs), role, (t,), tuple(ops)))
    return Launch(cfg, space, tuple(programs))


def work_items(cfg: SplitKConfig) -> dict[str, range]:
    """Each tile is reduced once (its partials are one a split, each tagged with the tile)."""
    return {"reduce": range(cfg.tiles)}


KERNEL = Kernel(
    name="splitk",
    description="split-K partial sums joined by a semaphore counter a tile",
    config_type=SplitKConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("reducer", "split"),
    stages=("partial", "reduce"),
    role_colors={"reducer": "#d62728", "split": "#1f77b4"},
    stage_colors={"partial": "#ff7f0e", "reduce": "#9467bd"},
    cost_keys=("sk.partial", "sk.reduce"),
    default_costs={"sk.partial": (1500.0, 0.0), "sk.reduce": (300.0, 0.0)},
    threads=256,
    regs_per_thread=64,
    work_items=work_items,
)
