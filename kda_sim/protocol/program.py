"""Every CTA's program for one launch configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from functools import lru_cache

from kda_sim.config import LaunchConfig
from kda_sim.constants import GEMV0, N_GEMV, NA
from kda_sim.protocol.attn import attn_program
from kda_sim.protocol.gemv import gemv_program
from kda_sim.protocol.kda import kda_program, tasks_of
from kda_sim.protocol.ops import Op
from kda_sim.protocol.regions import CellSpace


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


@dataclass(frozen=True)
class CtaProgram:
    cta: int
    role: Role
    tasks: tuple[int, ...]
    ops: tuple[Op, ...] = field(repr=False)


@dataclass(frozen=True)
class Launch:
    cfg: LaunchConfig
    space: CellSpace
    programs: tuple[CtaProgram, ...] = field(repr=False)


def cta_program(cta: int, cfg: LaunchConfig, space: CellSpace) -> CtaProgram:
    role = role_of(cta)
    ops: list[Op] = []
    if role is Role.ATTN:
        ops += attn_program(cta, cfg, space)
    elif role is Role.GEMV:
        ops += gemv_program(cta, cfg, space)
    tasks = tasks_of(cta, cfg)
    for i in tasks:
        ops += kda_program(i, cfg, space)
    return CtaProgram(cta, role, tuple(tasks), tuple(ops))


@lru_cache(maxsize=64)
def build_launch(cfg: LaunchConfig) -> Launch:
    """The protocol of one launch: every CTA's ops in program order (cached: it is data)."""
    cfg.validate()
    space = CellSpace.of(cfg)
    programs = tuple(cta_program(c, cfg, space) for c in range(cfg.blocks))
    return Launch(cfg, space, programs)
