"""A corpus bug's two ``kda-sim check`` runs, the bug's and the fix's, as the bug view
shows them: the check's findings and report, and the simulated launches of its
counterexample with the waits that passed on what an earlier launch left.

The runs go through the CLI's own parser and the functions its ``check`` calls
(:func:`kda_sim.commands.check.launch_report`, :func:`kda_sim.host.command.sequence_check`),
so the page says what the command line says. Nothing here draws.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

import streamlit as st

from kda_sim.checks.findings import Finding
from kda_sim.checks.launch_check import LaunchReport, launch_text
from kda_sim.cli import build_parser
from kda_sim.commands.check import launch_report
from kda_sim.commands.common import gpu_profile, kernel_and_config
from kda_sim.errors import KdaSimError
from kda_sim.host.command import sequence_check
from kda_sim.host.report import sequence_text
from kda_sim.host.run import LaunchRun, SequenceRun
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.corpus import cases
from kda_sim.machine.costs import with_kernel_costs
from kda_sim.timeline.model import Timeline


@dataclass(frozen=True)
class StalePass:
    """A wait of a launch that passed on a value an earlier launch left."""

    cta: int  # the engine's CTA (a row of the launch's timeline)
    at_ns: float  # when it passed
    what: str  # the wait and the word or pair, as the finding names them
    left_by: str  # the launch (and CTA) that wrote the value it passed on


@dataclass
class Shown:
    """One simulated launch of a check: a drawable timeline and its stale passes."""

    label: str  # "the launch", "launch 0", "replay 1 of launch 0"
    timeline: Timeline
    stale: tuple[StalePass, ...] = ()
    grids: tuple[tuple[int, int], ...] = ()  # grids run together: (first row, CTAs) each

    @property
    def hangs(self) -> bool:
        return bool(self.timeline.stuck)


@dataclass
class BugRun:
    """One ``kda-sim check`` run of a corpus case."""

    command: str  # the command line, as docs/bugs.md shows it
    ok: bool  # the check's exit status would be 0
    findings: list[Finding]
    report: str  # the check's text report, as the CLI prints it
    launches: list[Shown] = field(default_factory=list)
    shown: int = 0  # the launch the counterexample is: the first that hangs or passes stale
    profile: str = ""  # the GPU profile's name and the kernel costs it ran (costs_from)
    costs: str = ""

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.fails]


def case_of(kernel: str) -> BugCase:
    """The corpus case of the bug kernel ``kernel``."""
    return next(c for c in cases() if c.kernel == kernel)


def command_of(case: BugCase, fixed: bool) -> str:
    return "kda-sim " + shlex.join(case.argv(fixed))


def _first_bad(launches: list[Shown]) -> int:
    return next((i for i, s in enumerate(launches) if s.hangs or s.stale), len(launches) - 1)


def _launch_shown(rep: LaunchReport) -> list[Shown]:
    """The engine run the counterexample is: the first that deadlocks, else the nominal one."""
    runs = rep.dynamic.runs
    run = next((r for r in runs if not r.finishes), runs[0])
    # kept whole where the app checks, in its own process: the nominal run and a hang
    assert run.result is not None
    return [Shown(f"the launch ({run.label} engine run)", run.result.timeline)]


def _stale_of(run: LaunchRun) -> tuple[StalePass, ...]:
    final = run.result.final
    if final is None:
        return ()
    space = run.handoffs.launch.space
    out = []
    for sp in final.stale_polls:
        if sp.rec.satisfied is not None and len(sp.cells):
            cell = int(sp.cells[0])
            region, index = space.split(cell)
            what = f"polls {sp.label} on {region.name}[{index}]"
            left = run.tag_from.get(cell, "?")
            out.append(StalePass(sp.cta, sp.rec.satisfied, what, left))
    for sw in final.stale_waits:
        region, index = space.split(sw.cell)
        what = f"waits {sw.label} on {region.name}[{index}], reads {sw.seen}"
        out.append(StalePass(sw.cta, sw.satisfied, what, run.word_from.get(sw.cell, "?")))
    return tuple(out)


def _sequence_shown(seq: SequenceRun) -> list[Shown]:
    out = []
    for r in seq.runs:
        grids = tuple((g.first, g.ctas) for g in r.grids) if len(r.grids) > 1 else ()
        out.append(Shown(r.label, r.result.timeline, _stale_of(r), grids))
    return out


def run_case(case: BugCase, fixed: bool) -> BugRun:
    """``kda-sim check`` of the case's bug or fix, parsed and run as ``kda_sim.cli`` does."""
    argv = case.argv(fixed)
    args, rest = build_parser().parse_known_args(argv)
    args.kernel_args = rest
    spec, cfg = kernel_and_config(args)
    prof = gpu_profile(args)
    if args.sequence is not None:
        seq, findings = sequence_check(spec, cfg, prof, args.sequence, occupancy=args.occupancy)
        launches = _sequence_shown(seq)
        report = sequence_text(seq, findings, prof.name)
    else:
        rep = launch_report(cfg, prof, args, occupancy=args.occupancy)
        findings, launches, report = rep.findings, _launch_shown(rep), launch_text(rep)
    ok = not any(f.fails for f in findings)
    return BugRun(
        command_of(case, fixed),
        ok,
        findings,
        report,
        launches,
        _first_bad(launches),
        prof.name,
        with_kernel_costs(prof, spec).costs_from,
    )


@st.cache_data(max_entries=32, show_spinner=False)
def _run_cached(kernel: str, fixed: bool, costs_id: str) -> BugRun:
    del costs_id  # part of the cache key only: the profile's identity
    return run_case(case_of(kernel), fixed)


def run_cached(kernel: str, fixed: bool) -> BugRun:
    """:func:`run_case` once per bug, side and identity of the profile it runs on (its
    name alone may come to mean other costs): a check takes seconds."""
    return _run_cached(kernel, fixed, profile_id_of(case_of(kernel), fixed))


def profile_id_of(case: BugCase, fixed: bool) -> str:
    """The identity of the profile the case's check runs on, with its kernel's costs;
    where it does not load, why (the run says so again)."""
    args, rest = build_parser().parse_known_args(case.argv(fixed))
    args.kernel_args = rest
    try:
        spec, _ = kernel_and_config(args)
        return with_kernel_costs(gpu_profile(args), spec).identity()
    except KdaSimError as e:
        return f"error: {e}"
