"""K1's programs: every CTA's ops for one launch configuration, by role."""

from __future__ import annotations

from enum import StrEnum

from kda_sim.gcpause import gc_paused
from kda_sim.kernels.k1.attn import attn_program
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, N_GEMV, NA
from kda_sim.kernels.k1.gemv import gemv_program
from kda_sim.kernels.k1.kda import kda_program, tasks_of
from kda_sim.kernels.k1.regions import regions
from kda_sim.kernels.k1.tickets import k1_ticket_loop
from kda_sim.memo import memo
from kda_sim.protocol.ops import Begin, Compute, Op, Publish, Put
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.protocol.tickets import TakeAhead, TicketLoop, placed


class Role(StrEnum):
    ATTN = "attn"
    GEMV = "gemv"
    IDLE = "idle"  # CTAs past the gemv range: kda tasks only


def role_of(cta: int) -> Role:
    if cta < NA:
        return Role.ATTN
    if cta < GEMV0 + N_GEMV:
        return Role.GEMV
    return Role.IDLE


def cta_program(
    cta: int, cfg: LaunchConfig, space: CellSpace, loop: TicketLoop | None = None
) -> CtaProgram:
    """CTA ``cta``'s static role, then its kda tasks, or, in a ticket launch, the loop."""
    role = role_of(cta)
    if cfg.gemv_tickets and role is Role.GEMV:
        role = Role.IDLE  # its groups are items of the loop
    ops: list[Op] = []
    if role is Role.ATTN:
        ops += attn_program(cta, cfg, space)
    elif role is Role.GEMV:
        ops += gemv_program(cta, cfg, space)
    if loop is not None:
        if cfg.take_ahead and ops:
            ops = take_ahead(ops, loop)
        return CtaProgram(cta, role, (), (*ops, loop))
    tasks = tasks_of(cta, cfg)
    for i in tasks:
        ops += kda_program(i, cfg, space)
    return CtaProgram(cta, role, tuple(tasks), tuple(ops))


def take_ahead(role: list[Op], loop: TicketLoop) -> list[Op]:
    """The role's ops with the CTA's first take issued before the hand-off that ends its
    last stage (the attn CTAs' XRDY publish, whose drain waits for the x rows' stores;
    a gemv CTA's second group's PROJ put), or, where that stage hands off nothing (CTA
    252's second group is past the 393), after its last compute: as a kernel would whose
    take is issued by a thread that does not hand off (LaunchConfig.take_ahead). The loop
    waits for it after the role."""
    stage = max(k for k, op in enumerate(role) if isinstance(op, Begin))
    puts = [k for k in range(stage, len(role)) if isinstance(role[k], Put | Publish)]
    at = puts[-1] if puts else max(k for k, op in enumerate(role) if isinstance(op, Compute)) + 1
    return [*role[:at], TakeAhead(loop.region, loop.cell), *role[at:]]


@memo(64)
@gc_paused  # kda_sim.gcpause says why
def build_launch(cfg: LaunchConfig) -> Launch:
    """The protocol of one launch: every CTA's ops in program order (cached: it is data)."""
    cfg.validate()
    if cfg.placed:  # the loop's items where a run took them: static programs
        launch = placed(build_launch(cfg.dynamic()), cfg.placed)
        return Launch(cfg, launch.space, launch.programs)
    space = CellSpace.from_sizes(regions(cfg))
    loop = k1_ticket_loop(cfg, space) if cfg.tickets else None
    programs = tuple(cta_program(c, cfg, space, loop) for c in range(cfg.blocks))
    return Launch(cfg, space, programs)
