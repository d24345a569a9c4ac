"""K1 with its work taken from an atomic ticket counter (LaunchConfig.kda_tickets,
LaunchConfig.gemv_tickets) instead of placed on CTAs when the launch is built.

The design is vLLM's Kimi-K3 mono MoE launch (``vllm/models/kimi_k3/amd/mono/README.md``):
every CTA loops on one global ticket counter, the ticket picks the item, the items are
ordered so that a wait names an item of a smaller ticket, and the CTA that takes the last
ticket clears the counter for the next launch.

- ``kda_tickets``: items 0 .. R 96 - 1 are the kda tasks (task i = item i). The attn
  CTAs 0..55 and the gemv CTAs 56..252 keep their static roles and take tickets after
  them.
- ``gemv_tickets``: items 0 .. 392 are the 16-row gemv groups, then the kda tasks (task
  i = item 393 + i). Only the attn CTAs keep a static role.

The attn CTAs stay static in both: their slice / gate / mix exchange is all-to-all (each
polls the PART, WGT and MSQ pairs of all 56), so the 56 must be co-resident whoever
places them; as the lowest block ids they are dispatched first. A kda item still polls
the QK and ONRM pairs of its head's other 7 chunk tasks, some of larger tickets: the
ticket check (kda_sim/checks/tickets.py) says so.
"""

from __future__ import annotations

import numpy as np

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV_TASKS, PER_WAVE, TAG_EXPR
from kda_sim.kernels.k1.gemv import load_x, proj_rows_put, weight_load, x_cells
from kda_sim.kernels.k1.kda import kda_program
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.ops import Barrier, Begin, Compute, End, Op, Put, Use
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import TicketLoop, ticket_loop

# the counter's region: after Region's ids (present only in a ticket launch, so that a
# static launch's cell space is unchanged), one word
TICKET = len(Region)
TICKET_NAME = "TICKET"
LOOP_LABEL = "k1 tickets"


def n_gemv_items(cfg: LaunchConfig) -> int:
    """The gemv groups taken from the counter: all 393 under gemv_tickets, else none."""
    return GEMV_TASKS if cfg.gemv_tickets else 0


def gemv_item(rg: int, cfg: LaunchConfig, space: CellSpace) -> list[Op]:
    """One 16-row group as an item: its weights issued when the ticket is taken, the x
    rows polled and read (from L2: a CTA keeps no LDS between items), the gemv, the put.
    The static build's pipelining of a CTA's two groups (rg1's first chunks behind x)
    has no counterpart: the next group is not known until its ticket is taken."""
    s = cfg.S
    x = np.asarray(x_cells(space), dtype=np.int64)
    return [
        weight_load("w.rg", rg, PER_WAVE),
        *load_x(cfg, space),
        Begin("gemv0"),
        Use(("w.rg",)),
        Compute("gemv", s, reads=x),
        Barrier(),
        Put(Region.PROJ, proj_rows_put(rg, cfg, space), reads=x, tag=TAG_EXPR),
        Barrier(),
        End("gemv0"),
    ]


# the ops of a gemv item (:func:`gemv_item`): the weights' load, load_x's 7, the gemv's 7
GEMV_ITEM_OPS = 15


def k1_ticket_loop(cfg: LaunchConfig, space: CellSpace) -> TicketLoop:
    """The one loop every CTA runs after its static role (a TicketLoop is data: the same
    object in each program)."""
    ng = n_gemv_items(cfg)

    def body(i: int) -> list[Op]:
        return gemv_item(i, cfg, space) if i < ng else kda_program(i - ng, cfg, space)

    cell = int(space.gid(TICKET, 0))
    return ticket_loop(
        LOOP_LABEL,
        TICKET,
        cell,
        ng + cfg.n_tasks,
        body,
        takers=cfg.blocks,
        unrolled=cfg.ticket_unroll,
    )
