"""Is a trace the launch its header says it is?

A trace names its kernel and configuration (``meta``); everything that compares it
with the model (``compare``, ``simulate --like``, the app's overlay) reads the
model's launch of that configuration and matches records to it. A trace of another
launch -- relabelled, truncated, or of another shape -- would be matched record by
record to the wrong programs and yield a confident, meaningless answer. So before
any of that, :func:`check_claimed_launch` checks what identifies the launch:

- the kernel is registered and the configuration valid;
- one CTA track a program, each CTA's role its program's;
- every (stage, task) a CTA recorded is one its program runs;
- where the trace records polls (or puts) at all, a finished CTA recorded as many as
  its program has, an unfinished one no more (as the engine records them: a counter
  wait is a poll, an atomic a put, a reset a put a cell; a ticket loop's items and a
  branch on an atomic's old value add to the program's own);
- every time is finite and in order: a span ends at or after it starts, a poll is
  satisfied at or after its first issue, and a CTA's records lie within its start
  and end;
- a CTA's unit (SM / CU) is one the GPU has; a stuck record names CTAs of the launch;
- the kernel's ``check_trace`` hook, where it has one: what else the trace records of
  its configuration (K1: ``nb`` by its PART and WGT polls' cells; a K1 trace records no
  loads, so nothing of ``nw_first`` or ``onw_first``: :mod:`kda_sim.kernels.k1.trace_evidence`).

The *order* of stages and hand-offs is not checked here: that is what the trace is
compared for (:mod:`kda_sim.compare.conformance`). The first mismatch raises
:class:`~kda_sim.errors.TraceFormatError` naming the record and both sides.
"""

from __future__ import annotations

import math
from typing import Any

from kda_sim.errors import InvalidInput, KdaSimError, TraceFormatError
from kda_sim.importers.caps import check_ctas
from kda_sim.timeline.model import CtaTrack, Timeline

# measured clocks are quantised (H200's globaltimer: 32 ns steps; s_memrealtime: 10 ns)
# and a CTA's start and its first stage are two reads of it: this much disorder is
# the clock's, not the trace's
CLOCK_SLACK_NS = 64.0


def gpu_units(tl: Timeline) -> int | None:
    """How many units a CTA's ``unit`` counts up to: the SMs our K1's traces record,
    else, for a simulation, its GPU's bundled profile's units; None where the numbering
    is another (ktrace's unit is a packed hardware id, XCD / SE / SH / CU)."""
    extra = tl.meta.extra if isinstance(tl.meta.extra, dict) else {}
    sms = extra.get("sms")
    if isinstance(sms, int) and not isinstance(sms, bool) and sms > 0:
        return sms
    if tl.meta.source != "simulated":
        return None
    from kda_sim.machine.profile import bundled_for, load_gpu

    name = bundled_for(tl.meta.gpu) if isinstance(tl.meta.gpu, str) else None
    return load_gpu(name).units if name else None


def _check_kernel_evidence(tl: Timeline, programs: tuple[Any, ...], where: str) -> None:
    """The kernel's own check of what its traces record of the configuration."""
    from kda_sim.kernels.registry import spec_for
    from kda_sim.kernels.spec import hook

    cfg = tl.meta.config()
    check = hook(spec_for(cfg), "check_trace")
    if check is not None:
        check(cfg, tl, programs, where)


def _programs(tl: Timeline, where: str) -> tuple[Any, ...]:
    from kda_sim.protocol.handoffs import handoffs_of

    m = tl.meta
    try:
        cfg = m.config()
        cfg.validate()
        return handoffs_of(cfg).launch.programs
    except InvalidInput as e:
        raise TraceFormatError(
            f"the header's kernel {m.kernel!r} / configuration is not a launch: {e}",
            what="meta",
            where=where,
        ) from e
    except (KdaSimError, TypeError, ValueError, KeyError) as e:
        raise TraceFormatError(
            f"the header's configuration cannot be built: {type(e).__name__}: {e}",
            what="meta",
            where=where,
        ) from e


def _program_facts(prog: Any) -> tuple[set[tuple[str, int]], int, int, bool, bool]:
    """A program's (stage, task) pairs, its polls and puts as the engine records them
    (:func:`kda_sim.protocol.records.counted`), whether it runs a ticket loop (then any
    item's stages are its own, and its polls and puts are at least its static ones:
    which items a CTA takes is the run's, not the program's) and whether it branches on
    an atomic's old value (then its polls and puts are at least those outside the
    branches: which branch runs is the run's)."""
    from kda_sim.protocol.branches import OnOld
    from kda_sim.protocol.ops import Begin
    from kda_sim.protocol.records import counted
    from kda_sim.protocol.tickets import TicketLoop

    stages = {(op.stage, op.task) for op in prog.ops if isinstance(op, Begin)}
    polls, puts = counted(prog.ops)
    loops = [op for op in prog.ops if isinstance(op, TicketLoop)]
    for loop in loops:
        for body in loop.bodies:
            stages |= {(op.stage, op.task) for op in body if isinstance(op, Begin)}
    branches = any(isinstance(op, OnOld) for op in prog.ops)
    return stages, polls, puts, bool(loops), branches


def _bad(what: str, rec: str, where: str) -> TraceFormatError:
    return TraceFormatError(
        f"{rec}: {what} (not the launch its header names)", what=rec, where=where
    )


def _check_times(c: CtaTrack, rec: str, where: str) -> None:
    lo = -math.inf if c.start is None else c.start - CLOCK_SLACK_NS
    hi = math.inf if c.end is None else c.end + CLOCK_SLACK_NS
    for name in ("start", "end"):
        v = getattr(c, name)
        if v is not None and not math.isfinite(v):
            raise _bad(f"{name} {v} is not a finite time", rec, where)
    if c.start is not None and c.end is not None and c.end < c.start:
        raise _bad(f"ends ({c.end:.0f} ns) before it starts ({c.start:.0f} ns)", rec, where)
    for k, s in enumerate(c.stages):
        at = f"{rec} stage[{k}] ({s.name!r})"
        if not (math.isfinite(s.start) and math.isfinite(s.end)):
            raise _bad("a time is not finite", at, where)
        if s.end < s.start:
            raise _bad(f"ends ({s.end:.0f} ns) before it starts ({s.start:.0f} ns)", at, where)
        if s.start < lo or s.end > hi:
            raise _bad(
                f"{s.start:.0f} .. {s.end:.0f} ns lies outside the CTA's {c.start} .. {c.end} ns",
                at,
                where,
            )
    for k, p in enumerate(c.polls):
        at = f"{rec} poll[{k}]"
        if p.satisfied is not None and p.satisfied < p.first_issue:
            raise _bad(
                f"satisfied ({p.satisfied:.0f} ns) before its first issue ({p.first_issue:.0f} ns)",
                at,
                where,
            )
        last = p.first_issue if p.satisfied is None else p.satisfied
        if p.first_issue < lo or last > hi:
            raise _bad("lies outside the CTA's start .. end", at, where)
        if p.retries is not None and p.retries < 0:
            raise _bad(f"retries {p.retries} < 0", at, where)
    for k, u in enumerate(c.puts):
        if not lo <= u.time <= hi:
            raise _bad(
                f"at {u.time:.0f} ns, outside the CTA's start .. end", f"{rec} put[{k}]", where
            )


def _unrecorded(tl: Timeline, c: CtaTrack, stages: set[tuple[str, int]]) -> set[tuple[str, int]]:
    """Stages of CTA ``c`` its trace format cannot hold, as the trace's header says: a
    stamp tensor of the twin keeps only a CTA's last task (``only_last_task``), and a CTA
    of several tasks loses that task's k.stage start (``k_stage_start_lost``)."""
    extra = tl.meta.extra if isinstance(tl.meta.extra, dict) else {}
    tasks = [t for _, t in stages if t >= 0]
    out: set[tuple[str, int]] = set()
    if extra.get("only_last_task") is True and tasks:
        out |= {(n, t) for n, t in stages if 0 <= t < max(tasks)}
    lost = extra.get("k_stage_start_lost")
    if isinstance(lost, list) and c.cta in lost and tasks:
        out.add(("k.stage", max(tasks)))
    return out


def _check_complete(
    c: CtaTrack, missing: set[tuple[str, int]], of: int, rec: str, where: str
) -> None:
    """A finished CTA ran every stage its program runs: one missing is a trace cut short
    or edited (a compare would match the rest and call it conforming)."""
    if missing:
        name, task = min(missing)
        what = name if task < 0 else f"{name} of task {task}"
        raise _bad(
            f"finished, but recorded no {what} span ({len(missing)} of its program's "
            f"{of} stages missing)",
            rec,
            where,
        )


def check_claimed_launch(tl: Timeline, where: str = "trace", units: int | None = None) -> None:
    """Refuse ``tl`` unless it is a run of the launch its header names (module
    docstring); ``units``: the GPU's SMs / CUs (default :func:`gpu_units`)."""
    blocks = tl.meta.blocks if isinstance(tl.meta.blocks, int) else 0
    check_ctas(max(len(tl.ctas), blocks), where)  # before its launch is built
    programs = _programs(tl, where)
    n = len(programs)
    if len(tl.ctas) != n:
        raise _bad(
            f"{len(tl.ctas)} CTA tracks, but {tl.meta.kernel} {tl.meta.config().label()} "
            f"launches {n} CTAs",
            "CTA count",
            where,
        )
    units = gpu_units(tl) if units is None else units
    polls_recorded = any(c.polls for c in tl.ctas)
    puts_recorded = any(c.puts for c in tl.ctas)
    for i, (c, prog) in enumerate(zip(tl.ctas, programs, strict=True)):
        rec = f"CTA {i}"
        if c.cta != i:
            raise _bad(f"is numbered {c.cta}", rec, where)
        if c.role != prog.role:
            raise _bad(f"role {c.role!r}, its program's is {str(prog.role)!r}", rec, where)
        if units is not None and c.unit is not None and not 0 <= c.unit < units:
            raise _bad(f"ran on unit {c.unit}, but the GPU has units 0 .. {units - 1}", rec, where)
        stages, n_polls, n_puts, takes, branches = _program_facts(prog)
        for k, s in enumerate(c.stages):
            if (s.name, s.task) not in stages:
                task = "" if s.task < 0 else f" of task {s.task}"
                raise _bad(
                    f"stage[{k}] {s.name!r}{task}: its program runs no such stage "
                    f"(it runs {', '.join(sorted({f'{a}/{b}' for a, b in stages}))})",
                    rec,
                    where,
                )
        for kind, got, want, recorded in (
            ("polls", len(c.polls), n_polls, polls_recorded),
            ("puts", len(c.puts), n_puts, puts_recorded),
        ):
            if takes or branches:  # its items' or branches' come on top of its static ones
                if recorded and c.finished and got < want:
                    raise _bad(
                        f"{got} {kind} recorded, its program has {want} and more", rec, where
                    )
            elif recorded and (got > want or (c.finished and got != want)):
                raise _bad(f"{got} {kind} recorded, its program has {want}", rec, where)
        if c.finished and not takes:  # a ticket loop's items are the run's, not the program's
            missing = stages - {(s.name, s.task) for s in c.stages} - _unrecorded(tl, c, stages)
            _check_complete(c, missing, len(stages), rec, where)
        _check_times(c, rec, where)
    _check_kernel_evidence(tl, programs, where)
    for k, s in enumerate(tl.stuck):
        for name in ("cta", "producer"):
            v = getattr(s, name)
            if v is not None and not 0 <= v < n:
                raise _bad(f"{name} {v} is not a CTA of the {n}", f"stuck[{k}]", where)
