"""A ticket queue: ``ctas`` CTAs take items from the counter ``TICKET`` until they run
out; item i computes, waits until item i - 1 has set its flag ``DONE[i - 1]``, computes
again and sets ``DONE[i]``. Which CTA runs which item is decided while the launch runs.

Every wait names a smaller ticket, so the launch finishes at any residency from one CTA
up. ``bad_wait`` makes item i wait on item i + 1 instead (a larger ticket): the CTAs
that hold the smallest items wait on an item nobody has taken, and the grid hangs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.errors import InvalidInput
from kda_sim.kernels.spec import Kernel, launch_terms
from kda_sim.protocol.counters import Atomic, AtomicKind, Pred, Wait
from kda_sim.protocol.ops import Begin, Compute, End, Op
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import ticket_loop

TICKET, DONE = 0, 1  # region ids, in the order of regions()


@dataclass(frozen=True)
class TicketQueueConfig:
    ctas: int = 4  # CTAs in the grid, each looping over tickets
    items: int = 12  # work items
    bad_wait: bool = False  # item i waits on item i + 1 (a larger ticket)

    def validate(self) -> TicketQueueConfig:
        if self.ctas < 1:
            raise InvalidInput(f"ctas = {self.ctas}: at least 1", what="ctas")
        if self.items < 1:
            raise InvalidInput(f"items = {self.items}: at least 1", what="items")
        return self


def regions(cfg: TicketQueueConfig) -> dict[str, int]:
    return {"TICKET": 1, "DONE": cfg.items}


def launch_size(cfg: TicketQueueConfig) -> tuple[int, tuple[str, ...]]:
    """The ops :func:`build` makes: the loop, one op a CTA, and its bodies once (the
    CTAs share them): 5 an item and the wait of every item but one."""
    return launch_terms({("ctas",): cfg.ctas, ("items",): 6 * cfg.items - 1})


def build(cfg: TicketQueueConfig) -> Launch:
    space = CellSpace.from_sizes(regions(cfg))
    done = [int(space.gid(DONE, i)) for i in range(cfg.items)]

    def item(i: int) -> list[Op]:
        dep = i + 1 if cfg.bad_wait else i - 1
        ops: list[Op] = [Begin("item", i), Compute("tq.load")]
        if 0 <= dep < cfg.items:
            ops.append(Wait(f"DONE[{dep}]", DONE, done[dep], Pred.EQ, 1))
        ops += [
            Compute("tq.work"),
            Atomic(DONE, done[i], AtomicKind.EXCH, 1),
            End("item", i),
        ]
        return ops

    loop = ticket_loop("items", TICKET, int(space.gid(TICKET, 0)), cfg.items, item)
    programs = tuple(CtaProgram(c, "worker", (), (loop,)) for c in range(cfg.ctas))
    return Launch(cfg, space, programs)


def work_items(cfg: TicketQueueConfig) -> dict[str, range]:
    """Item i begins its stage with task i: each runs once a launch."""
    return {"item": range(cfg.items)}


KERNEL = Kernel(
    name="ticketqueue",
    description="CTAs take items from an atomic ticket counter; item i waits on item i - 1",
    config_type=TicketQueueConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=("worker",),
    stages=("item",),
    role_colors={"worker": "#1f77b4"},
    stage_colors={"item": "#ff7f0e"},
    cost_keys=("tq.load", "tq.work"),
    default_costs={"tq.load": (300.0, 0.0), "tq.work": (600.0, 0.0)},
    threads=256,
    regs_per_thread=32,
    work_items=work_items,
)
