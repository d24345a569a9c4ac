"""A launch as data: every CTA's program, the kernel's configuration and its cells."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kda_sim.protocol.ops import Op
from kda_sim.protocol.space import CellSpace


@dataclass(frozen=True)
class CtaProgram:
    cta: int
    role: str  # one of the kernel's roles
    tasks: tuple[int, ...]
    ops: tuple[Op, ...] = field(repr=False)
    # its tasks run from one copy of their code in a loop (a ticket loop's items placed on
    # it, :func:`kda_sim.protocol.tickets.placed`): a later task's stages never run cold
    looped_tasks: bool = False


@dataclass(frozen=True)
class Launch:
    cfg: Any  # the kernel's configuration (its spec's config type)
    space: CellSpace
    programs: tuple[CtaProgram, ...] = field(repr=False)
