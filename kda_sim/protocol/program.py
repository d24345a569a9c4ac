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


@dataclass(frozen=True)
class Launch:
    cfg: Any  # the kernel's configuration (its spec's config type)
    space: CellSpace
    programs: tuple[CtaProgram, ...] = field(repr=False)
