"""Per-stage figures of a timeline: what the CLI prints and the app tabulates."""

from __future__ import annotations

import bisect
from dataclasses import dataclass
from typing import Any

import numpy as np

from kda_sim.timeline.colors import display
from kda_sim.timeline.model import CtaTrack, Timeline


def fmt_ns(ns: float | None, signed: bool = False) -> str:
    """A duration in the unit a person reads: ``850 ns``, ``2.30 us``, ``1.25 ms``
    (``-`` for none; ``signed`` writes ``+`` before a positive one)."""
    if ns is None or ns != ns:
        return "-"
    sign = "+" if signed and ns > 0 else ""
    a = abs(ns)
    if a < 999.5:
        return f"{sign}{ns:.0f} ns"
    if a < 999_995:
        return f"{sign}{ns / 1e3:.2f} us"
    if a < 999_995_000:
        return f"{sign}{ns / 1e6:.2f} ms"
    return f"{sign}{ns / 1e9:.2f} s"


@dataclass(frozen=True)
class StageStats:
    stage: str
    count: int
    mean_ns: float
    max_ns: float
    poll_wait_ns: float  # mean time a stage's polls waited, summed over its polls
    retries: int


def stage_stats(tl: Timeline) -> list[StageStats]:
    durs: dict[str, list[float]] = {}
    waits: dict[tuple[str, int, int], float] = {}
    retries: dict[str, int] = {}
    for c in tl.ctas:
        for s in c.stages:
            durs.setdefault(s.name, []).append(s.end - s.start)
        for p in c.polls:
            if p.satisfied is not None:
                key = (p.stage, c.cta, p.task)
                waits[key] = waits.get(key, 0.0) + p.satisfied - p.first_issue
                retries[p.stage] = retries.get(p.stage, 0) + (p.retries or 0)
    stages = tuple(display(tl.meta.kernel).stages)
    order = [s for s in stages if s in durs] + sorted(set(durs) - set(stages))
    out = []
    for name in order:
        d = np.asarray(durs[name])
        w = [v for (st, _, _), v in waits.items() if st == name]
        out.append(
            StageStats(
                name,
                len(d),
                float(d.mean()),
                float(d.max()),
                float(np.mean(w)) if w else 0.0,
                retries.get(name, 0),
            )
        )
    return out


@dataclass(frozen=True)
class SlotStats:
    """A kda stage over the CTAs' n-th task (slot 0: each CTA's first)."""

    stage: str
    slot: int
    count: int
    median_ns: float


def slot_stats(tl: Timeline) -> list[SlotStats]:
    """Each kda stage's median duration by task slot. Where CTAs run two tasks (R = 4),
    the second runs code the CTA has not run yet in a build that unrolls its slots (the
    Triton K1 on the H200: docs/calibration.md, "What the model has"); this shows it."""
    by: dict[tuple[str, int], list[float]] = {}
    for c in tl.ctas:
        tasks = sorted({s.task for s in c.stages if s.task >= 0})
        for s in c.stages:
            if s.task >= 0:
                by.setdefault((s.name, tasks.index(s.task)), []).append(s.end - s.start)
    order = {s: i for i, s in enumerate(display(tl.meta.kernel).stages)}
    keys = sorted(by, key=lambda k: (k[1], order.get(k[0], 99), k[0]))
    return [SlotStats(k[0], k[1], len(by[k]), float(np.median(by[k]))) for k in keys]


def slots_side_by_side(tls: dict[str, Timeline | None]) -> list[dict[str, Any]]:
    """:func:`slot_stats` of several timelines (label -> timeline) a row a (stage, slot):
    ``{"stage", "slot", "dur_<label>_median_ns", "<label>_count"}``; empty where no CTA of
    any runs a second task (nothing to tell apart)."""
    rows: dict[tuple[str, int], dict[str, Any]] = {}
    for label, tl in tls.items():
        if tl is None:
            continue
        for st in slot_stats(tl):
            r = rows.setdefault((st.stage, st.slot), {"stage": st.stage, "slot": st.slot})
            r[f"dur_{label}_median_ns"] = st.median_ns
            r[f"{label}_count"] = st.count
    if not any(slot for _, slot in rows):
        return []
    return list(rows.values())


def unrecorded_ctas(tl: Timeline) -> tuple[list[int], list[int]]:
    """The CTAs a trace lacks: those that recorded nothing, and those that started but
    never ended (a trace cut short, a ktrace of a few workgroups, a hang)."""
    nothing = [c.cta for c in tl.ctas if c.start is None and not c.stages]
    gone = set(nothing)
    return nothing, [c.cta for c in tl.ctas if c.cta not in gone and not c.finished]


def say_missing(nothing: list[int], unfinished: list[int], of: int) -> str:
    """What a trace lacks, in words ("" when nothing): every view says it the same."""
    parts = []
    for ctas, what in ((nothing, "recorded nothing"), (unfinished, "never ended")):
        if ctas:
            first = ", ".join(map(str, ctas[:8])) + (", ..." if len(ctas) > 8 else "")
            parts.append(f"{len(ctas)} of {of} CTAs {what} ({first})")
    return "; ".join(parts)


def missing_part(tl: Timeline) -> str:
    """:func:`say_missing` of ``tl``."""
    return say_missing(*unrecorded_ctas(tl), len(tl.ctas))


@dataclass(frozen=True)
class PartnerStats:
    """A role stage over the CTAs whose unit (SM / CU) holds the same other roles."""

    stage: str
    partners: str  # the other CTAs' roles on the unit, sorted, "+"-joined; "" alone
    count: int
    median_ns: float
    max_ns: float


def partner_stats(tl: Timeline) -> list[PartnerStats]:
    """Each role stage's duration by what shares the CTA's unit while the stage runs (the
    other CTAs resident there at some time during it). In the Triton K1's H200 traces a
    gemv CTA beside another gemv CTA takes longer than one beside an attn CTA or alone
    (docs/calibration.md, "What the model has"), and the slowest of them end the weight
    stream.
    Units as the timeline records them: a measured trace's SM ids, a simulation's
    placement; a CTA of no recorded unit (stamp tensors carry none) shares none.
    Linear in CTAs where few are resident on a unit at once: a stage looks only at its
    unit's CTAs that started by its end (a launch of 65,536 mostly idle CTAs took 20 s
    in a scan of every CTA of the unit a stage)."""
    by_unit: dict[int, list[CtaTrack]] = {}
    for c in tl.ctas:
        if c.unit is not None and c.start is not None:  # one never started was not resident
            by_unit.setdefault(c.unit, []).append(c)
    starts: dict[int, list[float]] = {}
    for u, cs in by_unit.items():
        cs.sort(key=lambda c: c.start)
        starts[u] = [c.start for c in cs]
    by: dict[tuple[str, str], list[float]] = {}
    for c in tl.ctas:
        for st in c.stages:
            if st.task >= 0:
                continue
            if c.unit is None or c.unit not in by_unit:
                others: list[str] = []
            else:
                began = by_unit[c.unit][: bisect.bisect_right(starts[c.unit], st.end)]
                others = [o.role for o in began if o is not c and _overlaps(o, st.start, st.end)]
            by.setdefault((st.name, "+".join(sorted(others))), []).append(st.end - st.start)
    order = {s: i for i, s in enumerate(display(tl.meta.kernel).stages)}
    keys = sorted(by, key=lambda k: (order.get(k[0], 99), k[0], k[1]))
    return [
        PartnerStats(k[0], k[1], len(by[k]), float(np.median(by[k])), float(np.max(by[k])))
        for k in keys
    ]


def _overlaps(c: CtaTrack, t0: float, t1: float) -> bool:
    """Whether CTA ``c`` was resident at some time in [t0, t1] (one that never started
    was not; one that never ended still is)."""
    if c.start is None:
        return False
    return c.start <= t1 and (c.end is None or c.end >= t0)


def partners_side_by_side(tls: dict[str, Timeline | None]) -> list[dict[str, Any]]:
    """:func:`partner_stats` of several timelines a row a (stage, partners), as
    :func:`slots_side_by_side`; only the stages whose CTAs have more than one kind of
    partner in some timeline (nothing to tell apart otherwise)."""
    rows: dict[tuple[str, str], dict[str, Any]] = {}
    kinds: dict[str, set[str]] = {}
    for label, tl in tls.items():
        if tl is None:
            continue
        for st in partner_stats(tl):
            r = rows.setdefault(
                (st.stage, st.partners), {"stage": st.stage, "partners": st.partners}
            )
            r[f"dur_{label}_median_ns"] = st.median_ns
            r[f"dur_{label}_max_ns"] = st.max_ns
            r[f"{label}_count"] = st.count
            kinds.setdefault(st.stage, set()).add(st.partners)
    kernels = [tl.meta.kernel for tl in tls.values() if tl is not None]
    stages = display(kernels[0]).stages if kernels else ()
    order = {s: i for i, s in enumerate(stages)}
    keys = sorted(rows, key=lambda k: (order.get(k[0], 99), k[0], k[1]))
    return [rows[k] for k in keys if len(kinds[k[0]]) > 1]


def format_table(stats: list[StageStats]) -> str:
    head = (
        f"{'stage':<9}{'count':>7}{'mean us':>10}{'max us':>10}{'poll wait us':>14}{'retries':>9}"
    )
    rows = [head]
    for s in stats:
        rows.append(
            f"{s.stage:<9}{s.count:>7}{s.mean_ns / 1e3:>10.3f}{s.max_ns / 1e3:>10.3f}"
            f"{s.poll_wait_ns / 1e3:>14.3f}{s.retries:>9}"
        )
    return "\n".join(rows)
