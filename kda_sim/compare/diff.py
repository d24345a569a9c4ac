"""Real vs simulated timelines of one configuration, CTA by CTA and stage by stage.

Both are put on their own origin (the earliest CTA start); the real one is first put
on one clock (:mod:`kda_sim.compare.clocks`). Matched on (CTA, stage, task): start
errors (real - simulated) are reported in ns and as a fraction of the real makespan.

The critical paths come from :func:`kda_sim.timeline.critical.critical_path`. A
measured trace rarely says which producer released a poll, so before the walk every
recorded poll gets, from the model's hand-off graph, the producer whose put came last
on the aligned clock (its recorded time; else the first recorded event after it --
a put is the last op before a barrier and its stage's end -- but no later than the
poll's satisfaction). The paths are
compared from their ends (both end at a CTA that finished last): where they part is
the first step back where the CTA or the hand-off differs.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field

import numpy as np

from kda_sim.compare.clocks import ClockFit, aligned, fit_clocks
from kda_sim.compare.model import ModelView, model_view
from kda_sim.compare.stage_split import split_side_by_side
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import get
from kda_sim.protocol.ops import Poll
from kda_sim.timeline.critical import CriticalPath, critical_path, kind_sequence, stage_kinds
from kda_sim.timeline.joins import NEAR_NS, NearCritical, Sources, kinds_within, near_critical
from kda_sim.timeline.model import Timeline


@dataclass
class StageError:
    cta: int
    stage: str
    task: int
    real_start: float
    sim_start: float
    real_dur: float
    sim_dur: float

    @property
    def start_err(self) -> float:
        return self.real_start - self.sim_start

    @property
    def dur_err(self) -> float:
        return self.real_dur - self.sim_dur


@dataclass
class PathPart:
    """Where two critical paths part, walking back from their ends."""

    common_steps: int  # steps the paths share at their ends
    real: dict | None  # the real path's step where they part (None: the path ended)
    sim: dict | None


@dataclass
class Comparison:
    real_makespan: float | None
    sim_makespan: float | None
    matched: list[StageError]
    only_real: list[tuple[int, str, int]]
    only_sim: list[tuple[int, str, int]]
    real_path: CriticalPath | None
    sim_path: CriticalPath | None
    part: PathPart | None
    fit: ClockFit | None = None
    by_stage: dict[str, dict[str, float]] = field(default_factory=dict)
    split: dict[str, dict[str, float | None]] = field(default_factory=dict)  # stage_split
    real_kinds: list[str] = field(default_factory=list)  # critical path by kind
    sim_kinds: list[str] = field(default_factory=list)
    real_near: NearCritical | None = None  # the paths' joins and near-critical rivals
    sim_near: NearCritical | None = None
    # the real trace records no puts (the Triton K1's): its joins' puts are placed from
    # their stages' bounds, so producers placed at one instant tie at 0 ns because the
    # trace cannot tell them apart, not because the GPU tied
    real_puts_placed: bool = False

    @property
    def kinds_agree_near(self) -> bool:
        """The paths agree within the near-critical set: by stage kinds, the real path is
        the simulated one or one of its rivals within the threshold, or the simulated path
        is one of the real one's. Looser than :attr:`kinds_agree`, never in its place."""
        if self.kinds_agree:
            return True
        r, s = self.real_near, self.sim_near
        return bool(
            (s is not None and kinds_within(self.real_kinds, s, self.sim_kinds))
            or (r is not None and kinds_within(self.sim_kinds, r, self.real_kinds))
        )

    @property
    def kinds_agree(self) -> bool:
        """The two critical paths run through the same stage kinds, in order."""
        return bool(self.real_kinds) and stage_kinds(self.real_kinds) == stage_kinds(self.sim_kinds)

    @property
    def handoffs_agree(self) -> bool:
        """... and through the same hand-offs too."""
        return bool(self.real_kinds) and self.real_kinds == self.sim_kinds

    def near_summary(self) -> dict | None:
        """The joins under the threshold and the rivals, real and simulated, and the
        agreement within the near-critical set."""
        r, s = self.real_near, self.sim_near
        if r is None or s is None:
            return None
        return {
            "near_ns": r.near_ns,
            "agree_within": self.kinds_agree_near,
            "real_puts_placed": self.real_puts_placed,
            "real": r.summary(self.real_kinds),
            "sim": s.summary(self.sim_kinds),
        }

    def kinds_common_tail(self) -> int:
        """How many kinds the two paths share, counted back from their ends."""
        n = 0
        for a, b in zip(reversed(self.real_kinds), reversed(self.sim_kinds), strict=False):
            if a != b:
                break
            n += 1
        return n

    @property
    def makespan_err(self) -> float | None:
        """(sim - real) / real."""
        if not self.real_makespan or self.sim_makespan is None:
            return None
        return (self.sim_makespan - self.real_makespan) / self.real_makespan

    def start_err_frac(self) -> np.ndarray:
        """|start error| / real makespan of every matched (CTA, stage)."""
        if not self.matched or not self.real_makespan:
            return np.zeros(0)
        return np.abs(np.array([m.start_err for m in self.matched])) / self.real_makespan

    def summary(self, rows: int = 0) -> dict:
        f = self.start_err_frac()
        d = np.array([m.dur_err for m in self.matched]) if self.matched else np.zeros(0)
        out: dict = {
            "real_makespan_ns": self.real_makespan,
            "sim_makespan_ns": self.sim_makespan,
            "makespan_err": self.makespan_err,
            "matched": len(self.matched),
            "only_real": len(self.only_real),
            "only_sim": len(self.only_sim),
            "start_err_frac": {
                "median": float(np.median(f)) if f.size else None,
                "p90": float(np.percentile(f, 90)) if f.size else None,
                "max": float(f.max()) if f.size else None,
            },
            "dur_err_ns": {
                "median_abs": float(np.median(np.abs(d))) if d.size else None,
                "p90_abs": float(np.percentile(np.abs(d), 90)) if d.size else None,
            },
            "by_stage": self.by_stage,
            "stage_split": self.split,
            "critical_path": {
                "real": _path_info(self.real_path),
                "sim": _path_info(self.sim_path),
                "part": asdict(self.part) if self.part else None,
                "kinds": {
                    "real": self.real_kinds,
                    "sim": self.sim_kinds,
                    "agree": self.kinds_agree,
                    "handoffs_agree": self.handoffs_agree,
                    "common_tail": self.kinds_common_tail(),
                },
                "near": self.near_summary(),
            },
        }
        if self.fit is not None:
            out["clock"] = self.fit.summary()
        if rows:
            worst = sorted(self.matched, key=lambda m: -abs(m.start_err))[:rows]
            out["worst_starts"] = [
                {**asdict(m), "start_err": m.start_err, "dur_err": m.dur_err} for m in worst
            ]
        return out


def _path_info(p: CriticalPath | None) -> dict | None:
    if p is None:
        return None
    return {
        "length_ns": p.length,
        "ctas": p.ctas[:40],
        "handoffs": len(p.handoffs()),
        "by_stage": p.by_stage,
    }


def put_estimates(
    mv: ModelView, cta: int, k: int, satisfied: float
) -> list[tuple[float, int, int, float]]:
    """Every put poll op ``k`` of ``cta`` waited on, as (its time on the aligned clock,
    producer, its op, the bound it was read from): the module says how it is placed."""
    out: list[tuple[float, int, int, float]] = []
    for d, kd in mv.handoffs.producers.get((cta, k), ()):
        # an unrecorded put lies between its bounds; a put is the last thing
        # before a barrier and its stage's end, so the upper bound is nearer --
        # but never after the poll it released
        lo, hi = mv.views[d].lb[kd], mv.views[d].ub[kd]
        t = min(hi, satisfied) if np.isfinite(hi) else lo
        if np.isfinite(t):
            out.append((float(max(t, lo)), d, kd, float(t)))
    return out


def annotate_producers(tl: Timeline, mv: ModelView) -> Timeline:
    """A copy whose recorded polls name the producer that released them (see module)."""
    out = copy.deepcopy(tl)
    progs = mv.handoffs.launch.programs
    for c in out.ctas:
        v = mv.views[c.cta]
        for k, i in v.poll_rec.items():
            p = c.polls[i]
            if p.producer is not None or p.satisfied is None:
                continue
            best: tuple[float, int, int, float] | None = None
            for e in put_estimates(mv, c.cta, k, p.satisfied):
                if best is None or e[3] > best[0]:
                    best = e
            if best is None:
                continue
            p.producer, p.put_time = best[1], best[0]
            j = mv.views[best[1]].put_rec.get(best[2])
            p.put_ref = j
            assert isinstance(progs[c.cta].ops[k], Poll)
    return out


def model_sources(tl: Timeline, mv: ModelView, shift: float = 0.0) -> Sources:
    """Every producer of each recorded poll of ``tl`` (on ``mv``'s clock), its put's time
    as :func:`annotate_producers` places it, moved by ``-shift`` (the origin taken off)."""
    rec_op = {c.cta: {i: k for k, i in mv.views[c.cta].poll_rec.items()} for c in tl.ctas}

    def get(cta: int, i: int) -> list[tuple[int, float]]:
        k = rec_op[cta].get(i)
        sat = tl.ctas[cta].polls[i].satisfied
        if k is None or sat is None:
            return []
        return [(d, t - shift) for t, d, _, _ in put_estimates(mv, cta, k, sat + shift)]

    return get


def _origin(tl: Timeline) -> Timeline:
    o = tl.origin
    if o == 0.0:
        return tl
    from kda_sim.compare.model import shifted

    return shifted(tl, np.full(len(tl.ctas), o))


def _part(a: CriticalPath | None, b: CriticalPath | None) -> PathPart | None:
    if a is None or b is None:
        return None
    sa, sb = list(reversed(a.steps)), list(reversed(b.steps))

    def sig(s) -> tuple:
        return (s.kind, s.cta, s.src)

    n = 0
    while n < min(len(sa), len(sb)) and sig(sa[n]) == sig(sb[n]):
        n += 1
    return PathPart(
        n,
        asdict(sa[n]) if n < len(sa) else None,
        asdict(sb[n]) if n < len(sb) else None,
    )


def real_side(
    real: Timeline,
    *,
    align: bool = True,
    clock_mode: str | None = None,
    clock_group: str | None = None,
) -> tuple[Timeline, Sources, ClockFit | None]:
    """A measured timeline as :func:`compare_timelines` reads it: on one clock, its polls
    naming the producer that released them, on its own origin; with every poll's
    producers (:func:`model_sources`) and the clock fit."""
    mv = model_view(real)
    fit = fit_clocks(real, mv, clock_mode, clock_group) if align else None
    r = aligned(real, fit) if fit is not None else real
    mv = model_view(r)
    o = r.origin
    r = _origin(annotate_producers(r, mv))
    return r, model_sources(r, mv, o), fit


def compare_timelines(
    real: Timeline,
    sim: Timeline,
    *,
    align: bool = True,
    clock_mode: str | None = None,
    clock_group: str | None = None,
    near_ns: float = NEAR_NS,
) -> Comparison:
    """Real (measured) vs simulated timeline of the same configuration; each critical
    path's joins of slack under ``near_ns`` come with their rivals."""
    if real.meta.kernel != sim.meta.kernel:
        raise InvalidInput(
            f"the timelines are of two kernels: {real.meta.kernel} vs {sim.meta.kernel}",
            what="kernel",
        )
    spec = get(real.meta.kernel)
    a, b = (spec.config_to_dict(t.meta.config()) for t in (real, sim))
    for k in a:
        if a[k] != b.get(k):
            raise InvalidInput(f"the timelines differ in {k}: {a[k]} vs {b.get(k)}", what=k)
    r, real_src, fit = real_side(real, align=align, clock_mode=clock_mode, clock_group=clock_group)
    s = _origin(sim)
    rs = {(c.cta, st.name, st.task): st for c in r.ctas for st in c.stages}
    ss = {(c.cta, st.name, st.task): st for c in s.ctas for st in c.stages}
    matched = [
        StageError(k[0], k[1], k[2], a.start, ss[k].start, a.dur, ss[k].dur)
        for k, a in sorted(rs.items())
        if k in ss
    ]
    only_real = sorted(k for k in rs if k not in ss)
    only_sim = sorted(k for k in ss if k not in rs)
    ms = r.makespan
    by_stage: dict[str, dict[str, float]] = {}
    for name in sorted({m.stage for m in matched}):
        e = [m for m in matched if m.stage == name]
        st = np.array([m.start_err for m in e])
        du = np.array([m.dur_err for m in e])
        by_stage[name] = {
            "n": len(e),
            "start_err_median_ns": float(np.median(st)),
            "dur_real_median_ns": float(np.median([m.real_dur for m in e])),
            "dur_sim_median_ns": float(np.median([m.sim_dur for m in e])),
            "dur_err_median_ns": float(np.median(du)),
        }
        if ms:
            by_stage[name]["start_err_median_frac"] = float(np.median(np.abs(st)) / ms)
    rp, sp = critical_path(r), critical_path(s)
    return Comparison(
        ms,
        s.makespan,
        matched,
        only_real,
        only_sim,
        rp,
        sp,
        _part(rp, sp),
        fit,
        by_stage,
        split_side_by_side(r, s),
        kind_sequence(r, rp) if rp else [],
        kind_sequence(s, sp) if sp else [],
        near_critical(r, rp, near_ns, real_src) if rp else None,
        near_critical(s, sp, near_ns) if sp else None,
        not any(c.puts for c in real.ctas),
    )


def compare(real: Timeline, sim: Timeline) -> Comparison:
    """The comparison (the name the app looks up)."""
    return compare_timelines(real, sim)
