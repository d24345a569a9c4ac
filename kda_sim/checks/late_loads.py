"""Staging loads issued after a poll: they need no hand-off, yet wait for one.

A staging load (a norm's weights, a conv's taps: inputs no CTA of the launch writes)
placed after a poll in its stage is issued only once the poll is satisfied, and its
round trip then stands between the hand-off and what the stage does with it. Issued
before the stage's first poll, it would be in flight during the wait. This lists every
such load by name and simulates the launch with each one moved there, every instance at
once: the makespan it would save on this GPU. Only where a load is issued changes; the
puts, polls and publishes are the protocol's. A kernel whose configuration has a switch
that issues a load early names it (its ``load_switches`` hook) and the advice points to it.

Advice, not a failure: a kernel may keep a load late on purpose (registers).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.engine import simulate
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.machine.profile import GpuProfile
from kda_sim.parallel import Workers
from kda_sim.protocol.ops import Begin, Load, LoadKind, Op, Poll
from kda_sim.protocol.program import CtaProgram, Launch


@dataclass(frozen=True)
class LateLoad:
    name: str  # the load, as the protocol names it ("mix.in_nw")
    stage: str
    after: str  # the label of the poll it is issued after
    ctas: int  # how many CTAs issue it late
    saved_ns: float | None  # makespan now - makespan with it moved; None: one deadlocks


def _late_in(ops: tuple[Op, ...]) -> list[tuple[int, int, str, str]]:
    """(load index, the stage's first poll index, stage, the poll before the load) for each
    staging load after a poll of its stage."""
    out = []
    begin: Begin | None = None
    first = last = None
    for k, op in enumerate(ops):
        if isinstance(op, Begin):
            begin, first, last = op, None, None
        elif isinstance(op, Poll):
            first = k if first is None else first
            last = op.label
        elif (
            isinstance(op, Load)
            and op.kind is LoadKind.STAGING
            and first is not None
            and begin is not None
        ):
            out.append((k, first, begin.stage, str(last)))
    return out


def late_loads(launch: Launch) -> dict[str, tuple[str, str, int]]:
    """Load name -> (stage, poll label, CTAs that issue it late)."""
    found: dict[str, tuple[str, str, int]] = {}
    for p in launch.programs:
        for k, _, stage, after in _late_in(p.ops):
            name = p.ops[k].name  # type: ignore[union-attr]
            n = found.get(name, (stage, after, 0))[2]
            found[name] = (stage, after, n + 1)
    return found


def issued_early(launch: Launch, name: str) -> Launch:
    """The launch with every late instance of load ``name`` moved to just before the first
    poll of its stage (its ``Use`` stays where it was)."""

    def moved(p: CtaProgram) -> CtaProgram:
        ops = list(p.ops)
        moves = 0
        for k, first, _, _ in reversed(_late_in(p.ops)):
            if ops[k].name == name:  # type: ignore[union-attr]
                ops.insert(first, ops.pop(k))
                moves += 1
        # a program with nothing moved stays the same object: what the engine keeps of
        # a program (its ops' kinds) is found for it
        return replace(p, ops=tuple(ops)) if moves else p

    return replace(launch, programs=tuple(moved(p) for p in launch.programs))


def check_late_loads(
    cfg: Any,
    prof: GpuProfile,
    *,
    occupancy: int | None = None,
    launch: Launch | None = None,
    makespan: float | None = None,
    workers: Workers | None = None,
) -> tuple[list[LateLoad], list[Finding]]:
    """Every late staging load with what moving it saves; ``makespan``: the launch's
    nominal makespan where the caller has it (saves one simulation); ``workers``: the
    processes the runs with a load moved are shared among (None: this one)."""
    spec = spec_for(cfg)
    base = launch if launch is not None else spec.build(cfg)
    late = late_loads(base)
    if not late:
        return [], []
    if makespan is None:
        makespan = simulate(cfg, prof, occupancy=occupancy, launch=base).timeline.makespan
    switches = hook(spec, "load_switches") or {}
    out: list[LateLoad] = []
    findings: list[Finding] = []
    # the names cross to a worker, not the moved launches (20,000 ops each for K1)
    early = partial(makespan_early, cfg, prof, occupancy, base)
    spans = (workers or Workers(1)).map(early, list(late))
    for (name, (stage, after, ctas)), span in zip(late.items(), spans, strict=True):
        saved = None if makespan is None or span is None else makespan - span
        out.append(LateLoad(name, stage, after, ctas, saved))
        findings.append(_finding(out[-1], prof.name, switches))
    return out, findings


def makespan_early(
    cfg: Any, prof: GpuProfile, occupancy: int | None, launch: Launch, name: str
) -> float | None:
    """The nominal makespan of ``launch`` with load ``name`` issued early (None: it does
    not finish): what a worker runs."""
    moved = issued_early(launch, name)
    return simulate(cfg, prof, occupancy=occupancy, launch=moved).timeline.makespan


def _finding(ll: LateLoad, gpu: str, switches: Mapping[str, str]) -> Finding:
    what = (
        f"saves {ll.saved_ns / 1e3:.2f} us of the makespan on {gpu}"
        if ll.saved_ns is not None and ll.saved_ns > 0
        else "saves nothing measurable here"
        if ll.saved_ns is not None
        else "not simulated (the launch deadlocks)"
    )
    return Finding(
        Category.LATE_LOAD,
        Severity.ADVICE,
        f"{ll.ctas} CTAs issue the staging load {ll.name} in {ll.stage} only after its "
        f"{ll.after} poll, though no hand-off writes what it reads; issued before the "
        f"stage's first poll it {what} (simulated)",
        f"issue {ll.name} before the {ll.stage} stage's first poll (or earlier)"
        + (f"; the variant {switches[ll.name]} does" if ll.name in switches else ""),
        {"load": ll.name, "stage": ll.stage, "after": ll.after, "ctas": ll.ctas,
         "saved_ns": ll.saved_ns},
    )  # fmt: skip
