"""Mutation machinery: a named fault (:class:`Mutation`) applied to a kernel's protocol or
configuration makes a :class:`Case`, which the checks must catch with the right category.

A launch mutant transforms the programs of the kernel's launch (``spec.build(cfg)``) and
is checked through ``simulate(..., launch=...)`` and ``build_waitgraph(launch)``; a
configuration mutant changes the GPU or occupancy; a tag mutant changes the tag scheme or
the step it runs in. ``check_mutant`` runs the checks a user would (``kda-sim check``,
``kda-sim check --tags``) and returns their findings. A kernel's catalogue is its
``mutations`` hook (K1's: :mod:`kda_sim.kernels.k1.mutations`).

Any kernel also takes the generic data-flow faults (:mod:`kda_sim.checks.dataflow.faults`)
at a site of its launch, one CTA at a time (``kda-sim check --mutant NAME@CTA/stage``):
:func:`generic_fault` picks the site, :func:`sites_text` lists them. A catalogue's fault
of one of those classes is the generic injector at a fixed site (:func:`fault_case`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from kda_sim.checks.dataflow.faults import INJECTORS, Fault, FaultKind, FaultSite, apply, sites
from kda_sim.checks.findings import Category, Finding
from kda_sim.checks.launch_check import check_launch
from kda_sim.checks.tags.analysis import Policy, analyse
from kda_sim.checks.tags.footprint import Layout, tag_model
from kda_sim.checks.tags.schemes import TagScheme
from kda_sim.errors import InvalidInput
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
    fault: Fault | None = None  # a generic fault: the culprit a finding must name


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


# -- generic faults at a site -------------------------------------------------------------------
def fault_case(
    cfg: Any, prof: GpuProfile, kind: FaultKind, pick: Callable[[FaultSite], bool]
) -> Case:
    """The generic fault ``kind`` at the first site of ``cfg``'s launch that ``pick``
    accepts (a catalogue's fixed site)."""
    launch = spec_for(cfg).build(cfg)
    site = next((s for s in sites(kind, launch) if pick(s)), None)
    if site is None:
        raise InvalidInput(f"{kind}: no site of this launch is the catalogue's", what="mutant")
    fault = apply(launch, site)
    return Case(cfg, prof, launch=fault.launch, fault=fault)


def parse_site(text: str) -> tuple[int | None, str | None, int]:
    """``CTA[/STAGE][#N]`` -> (CTA, stage, N); "" -> (None, None, 0): the first site."""
    if not text:
        return None, None, 0
    where, _, n = text.partition("#")
    cta, _, stage = where.partition("/")
    try:
        return int(cta), stage or None, int(n) if n else 0
    except ValueError:
        raise InvalidInput(
            f"--mutant ...@{text}: a site is CTA, CTA/STAGE or CTA/STAGE#N (N counts from 0), "
            "e.g. @3/gate",
            what="mutant",
        ) from None


def generic_fault(
    kind: FaultKind, launch: Launch, where: str, name: str
) -> tuple[FaultSite, Fault]:
    """The fault ``kind`` at the site ``where`` names (:func:`parse_site`) of ``launch``:
    the ``N``-th site of that CTA (and stage), default the launch's first; ``InvalidInput``
    where there is none."""
    cta, stage, n = parse_site(where)
    found = sites(kind, launch)
    mine = [
        s for s in found if (cta is None or s.cta == cta) and (stage is None or s.stage == stage)
    ]
    if n >= len(mine):
        has = _grouped(found)
        raise InvalidInput(
            f"--mutant {name}: no site{' @' + where if where else ''} in this launch"
            + (f" (its sites: {'; '.join(has)})" if has else " (the fault applies nowhere in it)"),
            what="mutant",
        )
    site = mine[n]
    return site, apply(launch, site)


def _grouped(found: list[FaultSite]) -> list[str]:
    """Sites as ``CTA 0-55: gate, mix (112 sites)``: runs of CTAs with one set of stages."""
    by_cta: dict[int, dict[str, int]] = {}
    for s in found:
        stages = by_cta.setdefault(s.cta, {})
        key = s.stage or "(no stage)"
        stages[key] = stages.get(key, 0) + 1
    out: list[str] = []
    run: list[int] = []

    def close() -> None:
        if run:
            ctas = f"CTA {run[0]}" if len(run) == 1 else f"CTA {run[0]}-{run[-1]}"
            n = sum(sum(by_cta[c].values()) for c in run)
            out.append(f"{ctas}: {', '.join(by_cta[run[0]])} ({n} site{'s' if n != 1 else ''})")

    for c in sorted(by_cta):
        if run and (c != run[-1] + 1 or list(by_cta[c]) != list(by_cta[run[0]])):
            close()
            run = []
        run.append(c)
    close()
    return out


def sites_text(launch: Launch, fixed: dict[str, Mutation]) -> str:
    """``--mutant list``: each generic fault and its sites in ``launch``, then the
    kernel's own catalogue."""
    lines = ["generic faults (--mutant NAME or NAME@CTA[/STAGE][#N]; default: the first site):"]
    for kind, inj in INJECTORS.items():
        found = sites(kind, launch)
        lines.append(f"  {kind}: {inj.description}")
        groups = _grouped(found)
        lines += [f"      {g}" for g in groups] or ["      no site in this launch"]
    if fixed:
        lines.append("the kernel's catalogue (--mutant NAME):")
        width = max(len(n) for n in fixed)
        lines += [f"  {n:<{width}}  [{m.category}] {m.description}" for n, m in fixed.items()]
    return "\n".join(lines)


def caught_text(fault: Fault, findings: list[Finding]) -> tuple[bool, str]:
    """Whether a failing finding of the fault's category names its culprit, in words."""
    mine = [f for f in findings if f.fails and f.category is fault.category]
    if fault.kind is FaultKind.REMOVE_PUT and not fault.unit:
        # no layout hook: the missing put is named by the cell and the CTA that polls it,
        # and the finding says it cannot tell who should have put it
        named = [f for f in mine if f.details.get("expected", "") is None]
        culprit = "the missing put (the kernel does not say who should have put it)"
    else:
        named = [f for f in mine if fault.names_culprit(f)]
        culprit = (
            f"the unit that should have put it ({fault.unit})"
            if fault.kind is FaultKind.REMOVE_PUT
            else f"CTA {fault.cta}, op {fault.ops.start}"
            + (f"..{fault.ops.stop - 1}" if len(fault.ops) > 1 else "")
        )
    if named:
        return True, f"mutant caught: [{fault.category}] names {culprit}"
    others = sorted({str(f.category) for f in findings if f.fails})
    why = (
        f"[{fault.category}] found but not naming {culprit}"
        if mine
        else f"no [{fault.category}] finding"
    )
    return False, f"mutant NOT caught as its class: {why}" + (
        f" (failing: {', '.join(others)})" if others else ""
    )


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
