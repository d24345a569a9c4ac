"""Where a fit starts from the traces themselves, for parameters the loss is flat around
at their stock values (docs/calibration.md, "What is fitted, and how"), and the cost
lines both these starts and the cost correction fit.

- a streamed stage's cost (``streamed_weights``): its measured busy time, so the stage
  starts compute-bound and the search can lower the cost until the stream binds;
- ``cold_code``: the measured excess of a CTA's later kda tasks' stages over its first's;
- a compute that runs between two polls of one stage (the attn mix between its WGT and
  MSQ polls): the gap between the first poll's satisfaction and the second's first issue
  is that compute alone, as the trace measures it, so its cost starts where the simulated
  gap equals the real one. The stage's busy time cannot say this: it holds the norm, the
  x rows' store and the XRDY publish too, and the stage is mostly waiting;
- a stage cost that grows with its launch's work (``cost_growth``): the growth and line
  that fit the compute part of its busy time over the training shapes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache
from itertools import pairwise
from typing import TYPE_CHECKING, Any

import numpy as np

from kda_sim.kernels.registry import spec_for
from kda_sim.machine.profile import MAX_GROWTH, GpuProfile
from kda_sim.protocol.ops import Begin, Compute, End, Load, LoadKind, Poll, Use
from kda_sim.timeline.model import Timeline

if TYPE_CHECKING:
    from kda_sim.compare.calibrate import Trace


@lru_cache(maxsize=64)
def first_computes(cfg: Any) -> dict[str, Compute]:
    """stage -> its first Compute op for this shape (over every CTA's program)."""
    out: dict[str, Compute] = {}
    for prog in spec_for(cfg).build(cfg).programs:
        stage = None
        for op in prog.ops:
            if isinstance(op, Begin):
                stage = op.stage
            elif isinstance(op, End):
                stage = None
            elif isinstance(op, Compute) and stage is not None and stage not in out:
                out[stage] = op
    return out


@lru_cache(maxsize=64)
def stage_costs(cfg: Any) -> dict[str, tuple[str, float]]:
    """stage -> (the cost key of its first Compute, its units) for this shape."""
    return {st: (op.cost, float(op.units)) for st, op in first_computes(cfg).items()}


@lru_cache(maxsize=64)
def launch_units_of(cfg: Any) -> dict[str, float]:
    """stage -> the launch's work its first Compute runs beside (``Compute.launch_units``,
    what a profile's ``cost_growth`` multiplies by) for this shape."""
    return {st: float(op.launch_units) for st, op in first_computes(cfg).items()}


@lru_cache(maxsize=64)
def streamed_stages(cfg: Any) -> dict[str, str]:
    """stage -> cost key, for the stages whose compute waits on weight loads (Use of a
    WEIGHT load, then Compute): under ``streamed_weights`` their compute runs alongside
    the stream."""
    out: dict[str, str] = {}
    for prog in spec_for(cfg).build(cfg).programs:
        weights = {
            op.name for op in prog.ops if isinstance(op, Load) and op.kind is LoadKind.WEIGHT
        }
        stage, waited = None, False
        for op in prog.ops:
            if isinstance(op, Begin):
                stage, waited = op.stage, False
            elif isinstance(op, Use):
                waited = waited or any(n in weights for n in op.names)
            elif isinstance(op, Compute) and stage is not None and waited:
                out[stage] = op.cost
    return out


def stages_of(cfg: Any, key: str) -> set[str]:
    """The stages whose compute is stage cost ``key``."""
    return {st for st, (k, _) in stage_costs(cfg).items() if k == key}


def sharing_ctas(tr: Trace, key: str) -> set[int]:
    """The CTAs of a trace that compute stage cost ``key`` on a unit where another CTA
    does too (units as the trace records them: SM ids)."""
    first, later = sharing_by_order(tr, key)
    return first | later


def sharing_by_order(tr: Trace, key: str) -> tuple[set[int], set[int]]:
    """:func:`sharing_ctas` split: on each unit the CTA of the lowest number (a launch's
    blocks are dispatched in order, so the one resident there first, as the engine's
    ``unit_share_skew`` takes it), and the others."""
    stages = stages_of(tr.cfg, key)
    on_unit: dict[int, list[int]] = {}
    for c in tr.tl.ctas:
        if any(s.name in stages for s in c.stages):
            on_unit.setdefault(c.unit, []).append(c.cta)
    first: set[int] = set()
    later: set[int] = set()
    for ctas in on_unit.values():
        if len(ctas) > 1:
            ctas = sorted(ctas)
            first.add(ctas[0])
            later.update(ctas[1:])
    return first, later


def share_start(prof: GpuProfile, traces: Sequence[Trace], by_order: bool = False) -> GpuProfile:
    """``unit_share`` from the traces: for each stage cost in ``unit_shared``, the median
    over the traces of (busy time of the CTAs sharing their unit with another that
    computes it) / (busy time of the rest), less one; over the traces whose stage has at
    least ``unit_share_from`` units, the ones the factor slows. With ``by_order``, also
    ``unit_share_skew``: the median over the same traces of (r_later - r_first) /
    (r_later + r_first - 2), the two ratios taken apart for the CTA first on its unit and
    the later ones (0 where the later is no slower). Fitted no further: the search's
    loss (makespans, median starts) barely sees them, the stage durations do."""
    if not prof.unit_shared:
        return prof
    ratios, skews = [], []
    for tr in traces:
        costs = stage_costs(tr.cfg)
        for key in prof.unit_shared:
            stages = {st for st, (k, n) in costs.items() if k == key and prof.shares_at(k, n)}
            # the order's split is read where the profile applies it
            ordered = {st for st in stages if costs[st][1] >= prof.unit_share_skew_from}
            first, later = sharing_by_order(tr, key)
            # busy times: alone, first on the unit, later on it
            parts: tuple[list[float], ...] = ([], [], [])
            for (cta, stage, _), v in tr.busy.items():
                if stage in stages:
                    parts[1 if cta in first else 2 if cta in later else 0].append(v)
            alone, firsts, laters = parts
            if alone and (firsts or laters):
                ratios.append(float(np.median(firsts + laters) / np.median(alone)))
            if by_order and ordered and alone and firsts and laters:
                r1, r2 = (float(np.median(x) / np.median(alone)) for x in (firsts, laters))
                if r1 + r2 > 2.0:
                    skews.append(min(1.0, max(0.0, (r2 - r1) / (r1 + r2 - 2.0))))
    if not ratios:
        return prof
    skew = float(np.median(skews)) if skews else 0.0
    share = max(0.0, float(np.median(ratios)) - 1.0)
    return replace(prof, unit_share=share, unit_share_skew=skew if share else 0.0)


def streamed_start(prof: GpuProfile, traces: Sequence[Trace]) -> GpuProfile:
    """Under ``streamed_weights``, a streamed stage's cost starts as its measured busy time
    (a line over the shapes' units, for each form of a switched cost): the stage is then
    compute-bound, and the search can lower the cost until the stream binds. From a cost
    below the stream the loss does not move with the cost (the stage takes the stream's
    time either way), so the search could not find a compute-bound stage from there
    (docs/calibration.md)."""
    if not prof.streamed_weights:
        return prof
    pts: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for tr in traces:
        costs = stage_costs(tr.cfg)
        streamed = streamed_stages(tr.cfg)
        # key -> (units, every busy time of its stages): one point a shape
        by_key: dict[str, tuple[float, list[float]]] = {}
        shared = {k: sharing_by_order(tr, k) for k in prof.unit_shared if prof.unit_share}
        for (cta, stage, _), v in tr.busy.items():
            if stage in streamed and stage in costs:
                key = streamed[stage]
                first, later = shared.get(key, ((), ()))
                if cta in first or cta in later:  # its cost is what it takes alone
                    v /= prof.share_factor(cta in first, costs[stage][1])
                by_key.setdefault(key, (costs[stage][1], []))[1].append(v)
        for key, (units, vs) in by_key.items():
            sw = prof.cost_above.get(key)
            above = sw is not None and units > sw[0]
            pts.setdefault((key, above), []).append((units, float(np.median(vs))))
    return with_lines(prof, pts)


GROWTH_GRID = 401  # growths tried from 0 to MAX_GROWTH by growth_start


def growth_start(
    prof: GpuProfile, traces: Sequence[Trace], sims: Sequence[Timeline], keys: Sequence[str]
) -> GpuProfile:
    """``cost_growth`` and the cost line of each stage cost in ``keys`` from the traces:
    per trace, the compute part of the stage's median busy time (the real one less what
    the simulation ``sims`` spends beside its compute: loads, barriers, puts), and the
    line (base, per unit) times (1 + g x the launch's units) that fits those points best
    in relative least squares, g on a grid from 0 to ``MAX_GROWTH``. A key whose
    training traces do not differ in launch units at some units, or give g = 0, is left
    as it is."""
    new: dict[str, Any] = {}
    for key in keys:
        pts: list[tuple[float, float, float]] = []  # (units, launch units, compute ns)
        for tr, sim in zip(traces, sims, strict=True):
            costs, grows = stage_costs(tr.cfg), launch_units_of(tr.cfg)
            sb = busy_of(sim)
            for stage, (k, units) in costs.items():
                if k != key or stage not in sb:
                    continue
                real = [v for (_, st, _), v in tr.busy.items() if st == stage]
                if not real:
                    continue
                lu = grows.get(stage, 0.0)
                beside = float(np.median(sb[stage])) - prof.cost(key, units) * prof.grown(key, lu)
                pts.append((units, lu, float(np.median(real)) - beside))
        by_units: dict[float, set[float]] = {}
        for u, lu, _ in pts:
            by_units.setdefault(u, set()).add(lu)
        if not any(len(v) > 1 for v in by_units.values()):
            continue  # nothing tells a growth from the line
        u, lu, y = (np.array(c) for c in zip(*pts, strict=True))
        best: tuple[float, float, np.ndarray] | None = None
        for g in np.linspace(0.0, MAX_GROWTH, GROWTH_GRID):
            a = np.stack([np.ones_like(u), u], axis=1) * (1.0 + g * lu)[:, None]
            w = a / np.maximum(np.abs(y), 1e-9)[:, None]  # relative least squares
            line, *_ = np.linalg.lstsq(w, y / np.maximum(np.abs(y), 1e-9), rcond=None)
            err = float(np.sum((w @ line - y / np.maximum(np.abs(y), 1e-9)) ** 2))
            if best is None or err < best[0]:
                best = (err, float(g), line)
        assert best is not None
        _, g, (base, per) = best
        if g <= 0.0 or per < 0.0:
            continue
        new[f"growth_{key}"] = g
        new.update(cost_param(prof, key, False, float(base), float(per)))
    return prof.with_params(**new) if new else prof


def busy_of(tl: Timeline) -> dict[str, list[float]]:
    """stage -> every busy time of it in ``tl`` (its spans less their polls' waits)."""
    from kda_sim.compare.calibrate import busy_times  # calibrate imports this module

    out: dict[str, list[float]] = {}
    for (_, stage, _), v in busy_times(tl).items():
        out.setdefault(stage, []).append(v)
    return out


def with_lines(
    prof: GpuProfile, pts: dict[tuple[str, bool], list[tuple[float, float]]]
) -> GpuProfile:
    """``prof`` with each (cost key, above its switch?) set to the line through its
    (units, cost) points; a cost falling with work becomes their mean, flat."""
    new: dict[str, tuple[float, ...]] = {}
    for (key, above), xy in pts.items():
        base, per = fit_line(xy)
        if per < 0:
            base, per = float(np.mean([p[1] for p in xy])), 0.0
        new.update(cost_param(prof, key, above, base, per))
    return prof.with_params(**new) if new else prof  # type: ignore[arg-type]


def fit_line(pts: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """(base, per unit) through (units, value) points: least squares once two points differ
    in units, else their mean as the base."""
    u = np.array([p[0] for p in pts])
    y = np.array([p[1] for p in pts])
    if np.unique(u).size >= 2:
        a = np.stack([np.ones_like(u), u], axis=1)
        (base, per), *_ = np.linalg.lstsq(a, y, rcond=None)
        return float(base), float(per)
    return float(y.mean()), 0.0


def cost_param(
    prof: GpuProfile, key: str, above: bool, base: float, per: float
) -> dict[str, tuple[float, ...]]:
    """The with_params entry that sets a cost line (of the form above the switch, if so)."""
    if above:
        return {f"above_{key}": (prof.cost_above[key][0], max(base, 0.0), per)}
    return {f"cost_{key}": (max(base, 0.0), per)}


def later_task_excess(traces: Sequence[Trace]) -> float | None:
    """Over the traces where some CTA runs two kda tasks or more, the median over kda
    stages of (the stage's median busy time in CTAs' later tasks - in their first); None
    where no CTA of any trace runs a second task."""
    diffs: list[float] = []
    for tr in traces:
        slots: dict[int, dict[int, int]] = {}  # cta -> task -> slot
        for cta, _, task in tr.busy:
            if task >= 0:
                slots.setdefault(cta, {})[task] = 0
        for tasks in slots.values():
            for n, task in enumerate(sorted(tasks)):
                tasks[task] = n
        first: dict[str, list[float]] = {}
        later: dict[str, list[float]] = {}
        for (cta, stage, task), v in tr.busy.items():
            if task >= 0:
                (later if slots[cta][task] else first).setdefault(stage, []).append(v)
        per_stage = [
            float(np.median(later[st]) - np.median(first[st])) for st in later if st in first
        ]
        if per_stage:
            diffs.append(float(np.median(per_stage)))
    return float(np.median(diffs)) if diffs else None


def cold_start(prof: GpuProfile, traces: Sequence[Trace]) -> GpuProfile:
    """``cold_code`` starts as measured (:func:`later_task_excess`), where that is
    positive: the stage costs alone cannot tell a CTA's tasks apart, and with one such
    shape in the fit the search barely moves it from 0."""
    excess = later_task_excess(traces)
    if excess is None or excess <= 0:
        return prof
    return prof.with_params(cold_code=excess)


@lru_cache(maxsize=64)
def between_polls(cfg: Any) -> dict[tuple[str, str, str], tuple[str, float]]:
    """(stage, a poll's label, the next poll's label) -> (cost key, units) of the one
    Compute between two consecutive polls of a stage, where nothing is loaded between."""
    out: dict[tuple[str, str, str], tuple[str, float]] = {}
    for prog in spec_for(cfg).build(cfg).programs:
        stage: str | None = None
        last: str | None = None
        comp: list[tuple[str, float]] = []
        loads = False
        for op in prog.ops:
            if isinstance(op, Begin | End):
                stage = op.stage if isinstance(op, Begin) else None
                last = None
            elif isinstance(op, Poll) and stage is not None:
                if last is not None and len(comp) == 1 and not loads:
                    out[(stage, last, op.label)] = comp[0]
                last, comp, loads = op.label, [], False
            elif isinstance(op, Compute):
                comp.append((op.cost, float(op.units)))
            elif isinstance(op, Load | Use):
                loads = True
    return out


def poll_gaps(tl: Timeline) -> dict[tuple[str, str, str], list[float]]:
    """(stage, poll, next poll) -> every CTA's time from the one's satisfaction to the
    other's first issue."""
    out: dict[tuple[str, str, str], list[float]] = {}
    for c in tl.ctas:
        by: dict[tuple[str, int], list] = {}
        for p in c.polls:
            if p.satisfied is not None:
                by.setdefault((p.stage, p.task), []).append(p)
        for (stage, _), ps in by.items():
            ps.sort(key=lambda p: p.first_issue)
            for a, b in pairwise(ps):
                out.setdefault((stage, a.label, b.label), []).append(b.first_issue - a.satisfied)
    return out


def gap_start(prof: GpuProfile, traces: Sequence[Trace], sims: Sequence[Timeline]) -> GpuProfile:
    """The cost of each compute that runs between two polls, moved by the median real gap
    less the median simulated one (``sims``: the traces' launches simulated on ``prof``),
    a line over the shapes' units for each form of a switched cost."""
    pts: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for tr, sim in zip(traces, sims, strict=True):
        real, simg = poll_gaps(tr.tl), poll_gaps(sim)
        for k, (key, units) in between_polls(tr.cfg).items():
            if real.get(k) and simg.get(k):
                d = float(np.median(real[k]) - np.median(simg[k]))
                sw = prof.cost_above.get(key)
                above = sw is not None and units > sw[0]
                pts.setdefault((key, above), []).append((units, prof.cost(key, units) + d))
    return with_lines(prof, pts)
