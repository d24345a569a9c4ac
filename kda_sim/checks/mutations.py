"""Mutation machinery: a named fault (:class:`Mutation`) applied to a kernel's protocol or
configuration makes a :class:`Case`, which the checks must catch with the right category.

A launch mutant transforms the programs of the kernel's launch (``spec.build(cfg)``) and
is checked through ``simulate(..., launch=...)`` and ``build_waitgraph(launch)``; a
configuration mutant changes the GPU or occupancy; a tag mutant changes the tag scheme or
the step it runs in. ``check_mutant`` runs the checks a user would (``kda-sim check``,
``kda-sim check --tags``) and returns their findings. A kernel's catalogue is its
``mutations`` hook (K1's: :mod:`kda_sim.kernels.k1.mutations`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kda_sim.checks.findings import Category, Finding
from kda_sim.checks.launch_check import check_launch
from kda_sim.checks.tags.analysis import Policy, analyse
from kda_sim.checks.tags.footprint import Layout, tag_model
from kda_sim.checks.tags.schemes import TagScheme
from kda_sim.kernels.registry import DEFAULT_KERNEL, get, spec_for
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile, load_profile
from kda_sim.protocol.ops import Begin, End, Op
from kda_sim.protocol.program import CtaProgram, Launch


@dataclass(frozen=True)
class TagSetup:
    scheme: TagScheme
    policy: Policy
    shapes: tuple[tuple[int, int], ...]
    nb_per_slot: tuple[int, ...]


@dataclass(frozen=True)
class Case:
    cfg: Any
    prof: GpuProfile
    occupancy: int | None = None
    launch: Launch | None = None
    tags: TagSetup | None = None


@dataclass(frozen=True)
class Mutation:
    name: str
    category: Category
    description: str
    apply: Callable[[Any, GpuProfile], Case]


# -- helpers on programs --------------------------------------------------------------------
def with_programs(launch: Launch, programs: dict[int, CtaProgram]) -> Launch:
    progs = tuple(programs.get(p.cta, p) for p in launch.programs)
    return replace(launch, programs=progs)


def with_ops(p: CtaProgram, ops: list[Op]) -> CtaProgram:
    return replace(p, ops=tuple(ops))


def stage_span(ops: tuple[Op, ...], stage: str, task: int = -1) -> tuple[int, int]:
    """[start, end] op indices of a stage (Begin .. End)."""
    lo = next(
        k
        for k, op in enumerate(ops)
        if isinstance(op, Begin) and op.stage == stage and op.task == task
    )
    hi = next(k for k in range(lo, len(ops)) if isinstance(ops[k], End) and ops[k].stage == stage)
    return lo, hi


def role_end(ops: tuple[Op, ...]) -> int:
    return next((k for k, op in enumerate(ops) if isinstance(op, Begin) and op.task >= 0), len(ops))


def in_order(prof: GpuProfile) -> GpuProfile:
    # the role rule is about in-order load retirement: check such mutants on an AMD profile
    return prof if prof.in_order_loads else load_profile("mi355x")


def catalogue(kernel: str = DEFAULT_KERNEL) -> dict[str, Mutation]:
    """The kernel's mutations by name (its ``mutations`` hook; none: empty)."""
    return dict(hook(get(kernel), "mutations") or {})


def check_case(case: Case, *, quick: bool = True) -> list[Finding]:
    """The findings the checks make on a case (``quick``: fewer engine runs)."""
    if case.tags is not None:
        t = case.tags
        spec = spec_for(case.cfg)
        # the kernel's default launch but for the case's shapes and nbs
        model = tag_model(spec).step_model(
            t.shapes, t.nb_per_slot, Layout.FIXED, spec.default_config()
        )
        return analyse(model, t.scheme, t.policy, name_readers=False).findings
    rep = check_launch(
        case.cfg,
        case.prof,
        occupancy=case.occupancy,
        launch=case.launch,
        seeds=(1,) if quick else (1, 2, 3),
        extreme=not quick,
        fixes=False,
        advice=False,
    )
    return rep.findings


def check_mutant(m: Mutation, cfg: Any, prof: GpuProfile) -> list[Finding]:
    return check_case(m.apply(cfg, prof))
