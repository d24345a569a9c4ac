"""Fit a GPU profile's parameters to real traces, and say how well it predicts others.

The simulator costs 0.1 to 1.5 s a launch on this kind of machine, so the fit is
built to need few launches:

1. **Stage costs by correction** (a few launches a pass): a stage's busy time (its
   span less the time it spent in polls) is its compute cost plus loads and
   barriers. Simulate, take the median (real - simulated) busy time of every stage
   on every training trace, and move the stage's cost ``(base, per unit)`` by the
   compute share of it (the stage's cost over its simulated busy time: a gemv
   stage's time is mostly its weight loads, which the bandwidth explains, not its
   cost) -- fitted on the work units of the shapes (least squares once two shapes
   differ in units, else the base only).
2. **Machine parameters by derivative-free search** (``scipy.optimize.minimize``,
   Nelder-Mead on log-scale factors, a bounded number of launches, a progress bar):
   HBM bandwidth, one CTA's stream cap, poll latency, visibility, HBM load latency,
   store ack and the gemv cost (load-bound, so step 1 leaves it), factors up to 100
   either way, and ``cold_code`` in ns added, against the loss below (the retry
   interval only on request).
3. One more cost-correction pass.

Before step 1, a streamed gemv's cost and ``cold_code`` start from the traces
(:mod:`kda_sim.compare.starts`): around their stock values the loss is flat.

A correction pass is kept only where it lowers the training loss.

Loss of a trace: (makespan error / real makespan)^2 + (median over (CTA, stage) of
|start error| / real makespan)^2, and where asked (``stage_weight``) that weight times
the mean over the trace's stage kinds of (simulated / real median duration - 1)^2: the
figures ``kda-sim compare`` reports stage by stage, fitted rather than left to fall where
the makespans put them. Real traces are first put on one clock
(:mod:`kda_sim.compare.clocks`) and every time measured from the launch's first
CTA start, as the simulator's are.
"""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.clocks import aligned, fit_clocks
from kda_sim.compare.launch import (
    MEASURED_BUILD,
    occupancy_of,
    placement_of,
    resources,
    with_resources,
)
from kda_sim.compare.model import config_of, shifted
from kda_sim.compare.scoring import Scorer
from kda_sim.compare.starts import (
    cold_start,
    cost_param,
    fit_line,
    gap_start,
    growth_start,
    later_task_excess,
    launch_units_of,
    share_start,
    stage_costs,
    streamed_start,
)
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.registry import DEFAULT_KERNEL, spec_for
from kda_sim.kernels.registry import get as get_kernel
from kda_sim.kernels.spec import hook
from kda_sim.machine.costs import (
    BUILD_SOURCE,
    COST_FIELDS,
    OVERRIDABLE,
    apply_costs,
    validate_costs_dict,
)
from kda_sim.machine.profile import (
    FIRST_TRY,
    GROWTH_PREFIX,
    MAX_CROWD,
    MAX_GROWTH,
    PUT_BEHIND,
    GpuProfile,
    gpu_names,
    load_gpu,
    validate_profile,
)
from kda_sim.parallel import Jobs
from kda_sim.timeline.model import Timeline

# the most seeded runs a trace's score may average (``with_seeds``): each is a simulated
# launch at every evaluation of the fit
MAX_SEEDS = 64
# machine parameters the search may move: (name, how): "log" scales the value; "add"
# adds ns (for a parameter whose default may be 0); "frac" adds to a factor, kept within
# the profile's bounds
PARAMS: tuple[tuple[str, str], ...] = (
    ("hbm_bytes_per_ns", "log"),
    ("unit_bytes_per_ns", "log"),  # one CTA's stream cap
    ("poll", "log"),
    ("visibility", "log"),  # visibility_same_xcd and visibility_cross_xcd together
    ("hbm_load", "log"),
    ("store_ack", "log"),
    ("retry", "add"),
    ("cost_gemv", "log"),  # load-bound: left out of the cost correction
    ("cold_code", "add"),  # stages of a CTA's later kda tasks (0 by default)
    ("poll_lane", "add"),  # a try's cost a pair a thread beyond the first (0 by default)
    ("backoff", "add"),  # a retry's back-off where the poll site sleeps (0 by default)
    # a poll's first try behind the CTA's own stores and loads in flight (0 by default)
    *((n, "add") for n in FIRST_TRY),
    # a put's pairs behind the CTA's own stores ahead of them (0 by default)
    *((n, "add") for n in PUT_BEHIND),
    # a put's wait behind stores, longer for its pollers (0 by default; a factor, not ns)
    ("put_crowd", "frac"),
)
# the retry interval is the poll loop's sleep, fixed by the code (s_sleep 1 on AMD, none
# in a Triton loop): searched only on request; the training shapes rarely pin it down.
# poll_lane and backoff are read from the traces' polls (lab.poll_covariates) and pinned;
# the first try's wait behind the CTA's own traffic, and a put's, are read from the probe
# (lab.poll_probe: the traces record neither loads nor put times) and pinned; the crowd of
# a put's pollers is searched on request (--search put_crowd), the bundled fit has none
DEFAULT_SEARCH: tuple[str, ...] = tuple(
    n
    for n, _ in PARAMS
    if n not in ("retry", "poll_lane", "backoff", *FIRST_TRY, *PUT_BEHIND, "put_crowd")
)
MIN_SHARE = 0.25  # a stage whose cost is less than this of its busy time is not corrected
LOG_BOUND = math.log(100.0)  # a factor of at most 100 either way
ADD_BOUND = 2000.0
# each kind of parameter's bound (the search clips there) and first step
BOUNDS = {"log": LOG_BOUND, "add": ADD_BOUND, "frac": MAX_CROWD, "growth": MAX_GROWTH}
STEPS = {"log": 0.3, "add": 300.0, "frac": 0.1, "growth": 0.01}


def searched(extra: Sequence[str], pins: dict[str, float]) -> tuple[str, ...]:
    """The default search and ``extra``: parameters it leaves alone (the retry interval,
    the poll figures the traces or the probes give) searched on request, where the user
    would rather fit one than pin it. A name is searched or pinned, not both."""
    _search_spec(extra)  # an unknown name is refused here, before any trace is read
    both = sorted(set(extra) & set(pins))
    if both:
        raise InvalidInput(f"{both}: pinned and searched; pin it or search it", what="search")
    return DEFAULT_SEARCH + tuple(n for n in dict.fromkeys(extra) if n not in DEFAULT_SEARCH)


def measured_build(base: GpuProfile, traces: Sequence[Any]) -> GpuProfile:
    """``base`` running the build the traces ran (its residency). A build is its threads,
    registers and shared memory (spill counts etc. may differ). Where the traces ran
    several (the Triton K1 compiles one an L, a few registers apart), the one with the
    fewest CTAs an SM, then the most shared memory and registers: the overlay is
    simulated without a trace too, and must not place more CTAs on an SM than any traced
    build ran (each trace's own launch runs its own build, :func:`_runs`)."""
    res = [tr.resources for tr in traces if tr.resources]
    if not res:
        return base
    key = ("threads", "regs_per_thread", "shared_bytes")
    builds = {tuple(r[k] for k in key) for r in res}
    tight = min(
        res,
        key=lambda r: (r.get("ctas_per_sm") or 1 << 30, *(-r[k] for k in reversed(key))),
    )
    prof = with_resources(base, tight)
    if len(builds) == 1:
        return prof
    ran = " / ".join(f"{t} threads, {g} registers, {b} B" for t, g, b in sorted(builds))
    note = f"the traces ran {len(builds)} builds ({ran}): this one places the fewest CTAs on an SM"
    said = prof.sources.get(MEASURED_BUILD)
    src = {**prof.sources, MEASURED_BUILD: f"{said}; {note}" if said else note}
    return replace(prof, sources=src)


@dataclass
class Trace:
    """One real trace, prepared once: aligned, from its origin, indexed."""

    name: str
    cfg: Any  # the trace's launch configuration (any kernel's)
    tl: Timeline
    makespan: float
    keys: list[tuple[int, str, int]]
    start: np.ndarray
    busy: dict[tuple[int, str, int], float]
    occupancy: int | None = None  # CTAs an SM the measured launch had, where recorded
    resources: dict | None = None  # the measured build's (threads, registers, shared)
    kind_dur: dict[str, float] = field(default_factory=dict)  # stage kind -> median span
    stage_weight: float = 0.0  # the stage-duration term's weight in this trace's loss
    # the seeds of the runs whose scores' mean is this trace's score (a profile with a
    # spread between CTAs, ``with_seeds``); (): one nominal run
    seeds: tuple[int, ...] = ()
    # each key's index in ``keys`` (and ``start``): a run's stages looked up once each
    pos: dict[tuple[int, str, int], int] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        self.pos = {k: i for i, k in enumerate(self.keys)}


def busy_times(tl: Timeline) -> dict[tuple[int, str, int], float]:
    """(cta, stage, task) -> span less its polls' waits."""
    out: dict[tuple[int, str, int], float] = {}
    for c in tl.ctas:
        waits: dict[tuple[str, int], float] = {}
        for p in c.polls:
            if p.satisfied is not None:
                k = (p.stage, p.task)
                waits[k] = waits.get(k, 0.0) + p.satisfied - p.first_issue
        for s in c.stages:
            out[(c.cta, s.name, s.task)] = s.dur - waits.get((s.name, s.task), 0.0)
    return out


def kind_durations(tl: Timeline) -> dict[str, float]:
    """Stage kind -> the median duration of its spans (``kda-sim compare``'s "dur")."""
    durs: dict[str, list[float]] = {}
    for c in tl.ctas:
        for s in c.stages:
            durs.setdefault(s.name, []).append(s.end - s.start)
    return {k: _median(v) for k, v in durs.items()}


def _median(v: list[float]) -> float:
    """``float(np.median(v))`` of a non-empty list of finite floats, the same value (the
    middle one, or the two middle ones' sum halved, as numpy's mean of two), without
    numpy's per-call cost on the few short lists of a score."""
    v = sorted(v)
    h = len(v) // 2
    return v[h] if len(v) % 2 else (v[h - 1] + v[h]) / 2


def prepare(
    tl: Timeline,
    name: str = "trace",
    align: bool = True,
    clock_mode: str | None = None,
    clock_group: str | None = None,
) -> Trace:
    if tl.makespan is None:
        raise InvalidInput("the trace did not finish (no makespan): cannot fit on it", where=name)
    if align:
        tl = aligned(tl, fit_clocks(tl, mode=clock_mode, group=clock_group))
    tl = shifted(tl, np.full(len(tl.ctas), tl.origin))
    spans = {(c.cta, s.name, s.task): s.start for c in tl.ctas for s in c.stages}
    keys = sorted(spans)
    return Trace(
        name,
        config_of(tl),
        tl,
        float(tl.makespan),  # type: ignore[arg-type]
        keys,
        np.array([spans[k] for k in keys]),
        busy_times(tl),
        occupancy_of(tl),
        resources(tl),
        kind_durations(tl),
    )


@dataclass
class Score:
    makespan_err: float  # (sim - real) / real
    start_err_median: float  # median |start error| / real makespan
    start_err_p90: float
    matched: int
    sim_makespan: float | None
    # the root mean square over the real trace's stage kinds of (simulated / real median
    # duration - 1), and its weight in the loss (the fit's ``stage_weight``)
    stage_err: float = 0.0
    stage_weight: float = 0.0

    @property
    def loss(self) -> float:
        return (
            self.makespan_err**2 + self.start_err_median**2 + self.stage_weight * self.stage_err**2
        )


def stage_error(real: dict[str, float], sim: dict[str, float]) -> float:
    """Root mean square over ``real``'s stage kinds of (sim / real median duration - 1);
    a kind the simulation lacks counts as 100 % off."""
    errs = [(sim[k] - d) / d if k in sim else 1.0 for k, d in real.items() if d > 0]
    return math.sqrt(sum(e * e for e in errs) / len(errs)) if errs else 0.0


def score(tr: Trace, sim: Timeline) -> Score:
    """``tr``'s score on a run: its makespan, start and stage-duration errors, read in one
    pass over the run's stages (a fit scores every launch it runs)."""
    w = tr.stage_weight
    span = sim.makespan
    if span is None:  # a deadlock is as wrong as it gets
        return Score(10.0, 10.0, 10.0, 0, None, 10.0, w)
    ctas, o = sim.ctas, sim.origin
    pos = tr.pos
    got: dict[int, float] = {}  # index in tr.keys -> the run's start of that stage
    durs: dict[str, list[float]] = {}
    for c in ctas:
        cta = c.cta
        at = ctas[cta]  # the stage keyed by a track's CTA is that CTA's track's
        for s in c.stages:
            name = s.name
            start = s.start
            d = durs.get(name)
            if d is None:
                durs[name] = [s.end - start]
            else:
                d.append(s.end - start)
            if at is c:
                i = pos.get((cta, name, s.task))
                if i is not None:
                    got[i] = start - o
        if at is not c:
            for s in at.stages:
                i = pos.get((cta, s.name, s.task))
                if i is not None:
                    got[i] = s.start - o
    if not got:
        return Score(10.0, 10.0, 10.0, 0, span, 10.0, w)
    # the median and percentile of the errors do not depend on their order
    f = np.abs(tr.start[list(got)] - np.fromiter(got.values(), float, len(got))) / tr.makespan
    return Score(
        (span - tr.makespan) / tr.makespan,
        float(np.median(f)),
        float(np.percentile(f, 90)),
        len(got),
        span,
        stage_error(tr.kind_dur, {k: _median(v) for k, v in durs.items()}),
        w,
    )


def _runs(tr: Trace, prof: GpuProfile) -> list[Timeline]:
    """The trace's launch on ``prof`` (its build, its residency, its CTAs on their units):
    one nominal run, or one run a seed of ``tr.seeds`` without per-op jitter, so that only
    the spread between CTAs draws."""
    built = with_resources(prof, tr.resources)
    place = placement_of(tr.tl, prof)
    return [
        simulate(
            tr.cfg, built, occupancy=tr.occupancy, placement=place, seed=s, jitter=0.0
        ).timeline
        for s in tr.seeds or (None,)
    ]


def score_runs(tr: Trace, runs: Sequence[Timeline]) -> Score:
    """``tr``'s score on its runs: one run's, or the mean of each figure over the seeds'."""
    scores = [score(tr, sim) for sim in runs]
    if len(scores) == 1:
        return scores[0]

    def mean(name: str) -> float:
        return float(np.mean([getattr(s, name) for s in scores]))

    ends = [s.sim_makespan for s in scores]
    return Score(
        mean("makespan_err"),
        mean("start_err_median"),
        mean("start_err_p90"),
        min(s.matched for s in scores),
        None if None in ends else mean("sim_makespan"),
        mean("stage_err"),
        tr.stage_weight,
    )


def _launches_a_pass(traces: Sequence[Trace]) -> int:
    """The launches one evaluation of every trace simulates: a run a seed, or one."""
    return sum(len(tr.seeds) or 1 for tr in traces)


def _all_runs(traces: Sequence[Trace], prof: GpuProfile) -> list[list[Timeline]]:
    return [_runs(tr, prof) for tr in traces]


def _flat(
    traces: Sequence[Trace], runs: Sequence[Sequence[Timeline]]
) -> tuple[list[Trace], list[Timeline]]:
    """Each trace beside each of its runs: what the cost corrections and starts take, a
    seed's run counting as a trace of its own."""
    pairs = [(tr, sim) for tr, rs in zip(traces, runs, strict=True) for sim in rs]
    return [tr for tr, _ in pairs], [sim for _, sim in pairs]


def _scores(traces: Sequence[Trace], runs: Sequence[Sequence[Timeline]]) -> dict[str, Score]:
    return {tr.name: score_runs(tr, rs) for tr, rs in zip(traces, runs, strict=True)}


def with_seeds(traces: Sequence[Trace], prof: GpuProfile, seeds: int) -> list[Trace]:
    """``traces`` each scored as the mean over ``seeds`` seeded runs (seeds 0 to
    ``seeds`` - 1, the same at every evaluation, so the loss is a deterministic function of
    the profile); 0: one nominal run, as before. Only a profile with a spread between CTAs
    (``cta_spread``) draws anything in a run without jitter, so only such a profile takes
    seeds."""
    check_seeds(seeds, prof)
    return [replace(tr, seeds=tuple(range(seeds))) for tr in traces]


def check_seeds(seeds: int, prof: GpuProfile | None = None, least: int = 0) -> None:
    """Refuse ``--seeds`` outside ``least`` to :data:`MAX_SEEDS`, or (``prof`` given) a
    count of seeded runs on a profile without a spread between CTAs: without per-op jitter
    its every seeded run is its nominal one."""
    if not least <= seeds <= MAX_SEEDS:
        raise InvalidInput(f"--seeds {seeds}: {least} to {MAX_SEEDS}", what="seeds")
    if prof is not None and seeds and not prof.cta_spread:
        raise InvalidInput(
            f"--seeds {seeds}: {prof.name} sets no cta_spread, so its seeded runs are its "
            'nominal one; give a profile that sets it (--profile FILE with "cta_spread": '
            "{stage kind: sd}, docs/calibration.md) or leave --seeds out",
            what="seeds",
        )


def correct_costs(
    prof: GpuProfile,
    traces: Sequence[Trace],
    sims: Sequence[Timeline],
    keys: Sequence[str] | None = None,
) -> GpuProfile:
    """One pass of step 1 (module docstring); ``keys``: only these stage costs move."""
    # (key, above the key's switch?) -> [(units, median delta)]
    per_key: dict[tuple[str, bool], list[tuple[float, float]]] = {}
    for tr, sim in zip(traces, sims, strict=True):
        sb = busy_times(sim)
        costs, grows = stage_costs(tr.cfg), launch_units_of(tr.cfg)
        deltas: dict[str, list[float]] = {}
        for k, real_busy in tr.busy.items():
            if k in sb and k[1] in costs:
                deltas.setdefault(k[1], []).append(real_busy - sb[k])
        sim_busy: dict[str, list[float]] = {}
        for k, v in sb.items():
            sim_busy.setdefault(k[1], []).append(v)
        for stage, ds in deltas.items():
            key, units = costs[stage]
            if keys is not None and key not in keys:
                continue
            # only the compute share of a stage's busy time is its cost; the rest is
            # loads (bandwidth) and barriers, which the search fits
            # a cost that grows with the launch (cost_growth): the line's step is the
            # compute's over the growth at this shape
            grown = prof.grown(key, grows.get(stage, 0.0))
            share = prof.cost(key, units) * grown / max(float(np.median(sim_busy[stage])), 1e-9)
            if share < MIN_SHARE:
                continue  # load-bound: the search's bandwidth / cost scale fits it
            step = float(np.median(ds)) * min(1.0, share) / grown
            sw = prof.cost_above.get(key)
            per_key.setdefault((key, sw is not None and units > sw[0]), []).append((units, step))
    new: dict[str, tuple[float, ...]] = {}
    for (key, above), pts in per_key.items():
        base, per = prof.cost_above[key][1:] if above else prof.costs[key]
        db, dp = fit_line(pts)
        nb, npu = base + db, per + dp
        if npu < 0:  # keep the cost monotone in work; move what is left to the base
            nb += float(np.mean([npu * p[0] for p in pts]))
            npu = 0.0
        new.update(cost_param(prof, key, above, nb, npu))
    return prof.with_params(**new) if new else prof  # type: ignore[arg-type]


def pinned(
    base: GpuProfile, pins: dict[str, float], search: Sequence[str] = DEFAULT_SEARCH
) -> tuple[GpuProfile, list[str]]:
    """``base`` with machine parameters set to measured values (``hbm_bytes_per_ns=3720``),
    and the search without them: a figure measured on the GPU is not left to the fit."""
    scalar = [n for n, _ in PARAMS if not n.startswith("cost_")]
    params: dict[str, float] = {}
    for name, v in pins.items():
        if name not in scalar:
            raise InvalidInput(f"cannot pin {name!r}; pinnable: {scalar}", what="pin")
        if not math.isfinite(v) or v < 0:
            raise InvalidInput(f"{name} = {v}: a finite value >= 0", what="pin")
        peak = base.hbm_peak_bytes_per_ns
        if name == "hbm_bytes_per_ns" and peak is not None and v > peak:
            raise InvalidInput(
                f"{name} = {v:g}: above the datasheet's {peak:g} ({base.name})", what="pin"
            )
        if name == "visibility":
            params["visibility_same_xcd"] = params["visibility_cross_xcd"] = v
        else:
            params[name] = v
    prof = validate_profile(base.with_params(**params), "--pin") if params else base
    # a stage cost is searched only where the kernel has it (K1's gemv; not pingpong's)
    return prof, [
        n for n in search if n not in pins and (not n.startswith("cost_") or n[5:] in prof.costs)
    ]


def _search_spec(names: Sequence[str]) -> list[tuple[str, str]]:
    known = dict(PARAMS)
    known.update({n: "log" for n in names if n.startswith("above_")})
    # a stage cost's growth with the launch (``--search growth_k.recur``): a factor added
    known.update({n: "growth" for n in names if n.startswith(GROWTH_PREFIX)})
    bad = [n for n in names if n not in known]
    if bad:
        raise InvalidInput(
            f"unknown search parameter(s) {bad}; known: {list(known)}", what="search"
        )
    return [(n, known[n]) for n in names]


def apply_search(
    base: GpuProfile, x: np.ndarray, names: Sequence[str] = DEFAULT_SEARCH
) -> GpuProfile:
    params: dict[str, float] = {}
    for (name, how), v in zip(_search_spec(names), x, strict=True):
        if name in ("hbm_bytes_per_ns", "unit_bytes_per_ns"):
            params[name] = getattr(base, name) * math.exp(v)
            if name == "hbm_bytes_per_ns" and base.hbm_peak_bytes_per_ns is not None:
                # never faster than the datasheet: the fit found 4.98 to 5.12 TB/s on the
                # 4.8 TB/s H200 without the bound, and its loss barely differs at 4.8
                params[name] = min(params[name], base.hbm_peak_bytes_per_ns)
        elif name == "visibility":
            for k in ("visibility_same_xcd", "visibility_cross_xcd"):
                params[k] = base.latency_ns[k] * math.exp(v)
        elif name.startswith("cost_"):
            b, u = base.costs[name[5:]]
            params[name] = (b * math.exp(v), u * math.exp(v))  # type: ignore[assignment]
        elif name.startswith("above_"):
            if name[6:] not in base.cost_above:
                raise InvalidInput(f"{name}: the profile has no switch for {name[6:]}")
            t, b, u = base.cost_above[name[6:]]
            params[name] = (t, b * math.exp(v), u * math.exp(v))  # type: ignore[assignment]
        elif how == "growth":
            g = base.cost_growth.get(name[len(GROWTH_PREFIX) :], 0.0)
            params[name] = min(MAX_GROWTH, max(0.0, g + v))
        elif how == "log":
            params[name] = base.latency_ns[name] * math.exp(v)
        elif how == "frac":  # a factor within the profile's bounds
            params[name] = min(MAX_CROWD, max(0.0, base.latency_ns[name] + v))
        else:
            params[name] = max(0.0, base.latency_ns[name] + v)
    return base.with_params(**params)


@dataclass
class FitResult:
    profile: GpuProfile
    train: dict[str, Score]
    launches: int
    seconds: float
    history: list[float] = field(default_factory=list)


def score_on(prof: GpuProfile, tr: Trace) -> Score:
    return score_runs(tr, _runs(tr, prof))


def evaluate(prof: GpuProfile, traces: Sequence[Trace], jobs: Jobs = 1) -> dict[str, Score]:
    """Every trace's score on ``prof``; ``jobs`` processes (or a cluster) share the traces."""
    with Scorer(traces, score_on, jobs) as scorer:
        return scorer(prof)


def fit_profile(
    base: GpuProfile,
    traces: Sequence[Trace],
    *,
    budget: int = 60,
    cost_passes: int = 3,
    progress: bool = True,
    log: Callable[[str], None] | None = None,
    search: Sequence[str] = DEFAULT_SEARCH,
    switches: dict[str, float] | None = None,
    unit_shared: Sequence[str] = (),
    unit_share_from: float = 0.0,
    unit_share_by_order: bool = False,
    stage_weight: float = 0.0,
    cost_growth: Sequence[str] = (),
    jobs: Jobs = 1,
    seeds: int = 0,
) -> FitResult:
    """Steps 1-3 of the module docstring; ``budget``: launches of each trace the search may
    use; ``unit_share_from``: the fewest units a shared compute must have to be slowed;
    ``unit_share_by_order``: the CTA first on a shared unit slowed less than a later one,
    by the skew the traces give (``share_start``); ``stage_weight``: the stage-duration
    term's weight in the loss (0: none); ``cost_growth``: stage costs that grow with the
    launch's work, their growth read from the traces (``growth_start``);
    ``jobs``: processes (or a cluster) the search's simulations are shared among;
    ``seeds``: with a spread between CTAs in ``base``, each trace's score is the mean over
    that many seeded runs (:func:`with_seeds`; 0: one nominal run)."""
    if not (stage_weight >= 0 and math.isfinite(stage_weight)):
        raise InvalidInput(f"stage weight {stage_weight}: a finite value >= 0", what="stage_weight")
    if stage_weight:
        traces = [replace(tr, stage_weight=stage_weight) for tr in traces]
    traces = with_seeds(traces, base, seeds)
    with Scorer(traces, score_on, jobs) as scorer:
        shared = (tuple(unit_shared), unit_share_from, unit_share_by_order)
        return _fit(
            base,
            traces,
            scorer,
            budget,
            cost_passes,
            progress,
            log,
            search,
            switches,
            shared,
            tuple(cost_growth),
        )


def _fit(
    base: GpuProfile,
    traces: Sequence[Trace],
    scorer: Scorer,
    budget: int,
    cost_passes: int,
    progress: bool,
    log: Callable[[str], None] | None,
    search: Sequence[str],
    switches: dict[str, float] | None,
    shared: tuple[tuple[str, ...], float, bool],
    growth: tuple[str, ...] = (),
) -> FitResult:
    unit_shared, share_from, by_order = shared
    if not traces:
        raise InvalidInput("no training traces", what="traces")
    t0 = time.perf_counter()
    launches = 0
    per_pass = _launches_a_pass(traces)
    say = log or (lambda _m: None)
    prof = measured_build(base, traces)  # the fit runs the measured build
    for key, units in (switches or {}).items():
        # a stage whose code changes above ``units``: its two forms are fitted apart,
        # both starting from the stock cost
        if key not in prof.costs:
            raise InvalidInput(f"--switch {key}: no such stage cost", what="switch")
        if key not in prof.cost_above:
            prof = prof.with_params(**{f"above_{key}": (float(units), *prof.costs[key])})
    search = [*search, *(f"above_{k}" for k in switches or {} if f"above_{k}" not in search)]
    if all(tr.resources for tr in traces) and not prof.streamed_weights:
        prof = replace(prof, streamed_weights=True)  # the measured (Triton) build streams
    if unit_shared:
        bad = [k for k in unit_shared if k not in prof.costs]
        if bad:
            raise InvalidInput(f"--unit-share {bad}: no such stage cost", what="unit_share")
        prof = replace(prof, unit_shared=tuple(unit_shared), unit_share_from=share_from)
        prof = share_start(prof, traces, by_order)
        at = f" from {share_from:g} units" if share_from else ""
        skew = f", skew {prof.unit_share_skew:.3f}" if by_order else ""
        say(f"unit_share {prof.unit_share:.3f}{skew} for {', '.join(unit_shared)}{at}")
    prof = cold_start(streamed_start(prof, traces), traces)
    if later_task_excess(traces) is None:  # no CTA runs a second task: nothing pins it
        search = [n for n in search if n != "cold_code"]
    runs = _all_runs(traces, prof)
    prof = gap_start(prof, *_flat(traces, runs))
    runs = _all_runs(traces, prof)
    launches += 2 * per_pass
    if growth:
        bad = [k for k in growth if k not in prof.costs]
        if bad:
            raise InvalidInput(f"--cost-growth {bad}: no such stage cost", what="cost_growth")
        prof = growth_start(prof, *_flat(traces, runs), growth)
        runs = _all_runs(traces, prof)
        launches += per_pass
        say("cost_growth " + ", ".join(f"{k} {prof.cost_growth.get(k, 0.0):.4f}" for k in growth))
    loss = _loss(_scores(traces, runs))
    say(f"start: loss {loss:.5f}")
    for i in range(cost_passes):
        cand = correct_costs(prof, *_flat(traces, runs))
        cand_runs = _all_runs(traces, cand)
        launches += per_pass
        new = _loss(_scores(traces, cand_runs))
        say(f"cost pass {i + 1}: loss {new:.5f}")
        if new >= loss:
            break  # the correction no longer helps (the rest is not the stages' cost)
        prof, runs, loss = cand, cand_runs, new
    history: list[float] = []
    spec = _search_spec(search)
    if budget > 0 and spec:
        start = prof
        bar = _bar(budget, progress)
        bound = np.array([BOUNDS[h] for _, h in spec])
        best = [math.inf]

        def f(x: np.ndarray) -> float:
            nonlocal launches
            x = np.clip(x, -bound, bound)
            loss = _loss(scorer(apply_search(start, x, search)))
            launches += per_pass
            history.append(loss)
            best[0] = min(best[0], loss)
            bar.update(1)
            bar.set_postfix(loss=f"{loss:.5f}", best=f"{best[0]:.5f}")
            return loss

        from scipy.optimize import minimize  # here: scipy's import is half a second

        x0 = np.zeros(len(spec))
        steps = [STEPS[h] for _, h in spec]
        simplex = np.vstack([x0] + [x0 + np.eye(len(spec))[i] * st for i, st in enumerate(steps)])
        res = minimize(
            f,
            x0,
            method="Nelder-Mead",
            options={"maxfev": budget, "initial_simplex": simplex, "xatol": 1e-3, "fatol": 1e-6},
        )
        bar.close()
        prof = apply_search(start, np.clip(res.x, -bound, bound), search)
        say(f"search: {res.nfev} evaluations, loss {res.fun:.5f}")
        runs = _all_runs(traces, prof)
        launches += per_pass
    train = _scores(traces, runs)
    if cost_passes and budget > 0 and spec:
        cand = correct_costs(prof, *_flat(traces, runs))
        cand_train = scorer(cand)
        launches += per_pass
        say(f"last cost pass: loss {_loss(cand_train):.5f}")
        if _loss(cand_train) < _loss(train):
            prof, train = cand, cand_train
    say(f"final training loss {_loss(train):.5f}")
    return FitResult(prof, train, launches, time.perf_counter() - t0, history)


def fit_costs(
    base: GpuProfile,
    traces: Sequence[Trace],
    keys: Sequence[str],
    *,
    passes: int = 4,
    switches: dict[str, float] | None = None,
    log: Callable[[str], None] | None = None,
) -> FitResult:
    """Step 1 alone, on the stage costs ``keys`` only, from ``base`` (its machine
    parameters kept): a build whose code differs from the one ``base`` was fitted to, on
    the same GPU and protocol, gets its own costs (K1's kda_tickets loop against the
    static K1). ``switches``: {key: units} a stage whose code changes above those units
    (a build that spills from some size on), its two forms fitted apart from the same
    start. A pass is kept only where it lowers the training loss."""
    if not traces:
        raise InvalidInput("no training traces", what="traces")
    bad = [k for k in keys if k not in base.costs]
    if bad:
        raise InvalidInput(f"no such stage cost(s) {bad}", what="keys")
    t0 = time.perf_counter()
    say = log or (lambda _m: None)
    prof = measured_build(base, traces)
    for key, units in (switches or {}).items():
        if key not in keys:
            raise InvalidInput(f"switch {key}: not one of the costs fitted", what="switch")
        if key not in prof.cost_above:
            prof = prof.with_params(**{f"above_{key}": (float(units), *prof.costs[key])})
    runs = _all_runs(traces, prof)
    per_pass = _launches_a_pass(traces)
    launches = per_pass
    train = _scores(traces, runs)
    say(f"start: loss {_loss(train):.5f}")
    history = [_loss(train)]
    for i in range(passes):
        cand = correct_costs(prof, *_flat(traces, runs), keys)
        cand_runs = _all_runs(traces, cand)
        launches += per_pass
        cand_train = _scores(traces, cand_runs)
        say(f"cost pass {i + 1}: loss {_loss(cand_train):.5f}")
        history.append(_loss(cand_train))
        if _loss(cand_train) >= _loss(train):
            break
        prof, runs, train = cand, cand_runs, cand_train
    return FitResult(prof, train, launches, time.perf_counter() - t0, history)


def _loss(scores: dict[str, Score]) -> float:
    return float(np.mean([s.loss for s in scores.values()]))


class _NoBar:
    def update(self, _n: int) -> None:
        pass

    def set_postfix(self, **_kw: str) -> None:
        pass

    def close(self) -> None:
        pass


def _bar(total: int, on: bool):
    if not on:
        return _NoBar()
    from tqdm import tqdm

    return tqdm(total=total, desc="calibrate", unit="eval", leave=False)


def fitted_overlay(
    res: FitResult,
    base: GpuProfile,
    train: Sequence[Trace],
    pins: dict[str, float] | None = None,
    out: str | Path | None = None,
) -> dict:
    """What ``kda-sim calibrate --out`` writes: the kernel's fitted costs, the GPU
    parameters the fit (or the measured build) set apart from the GPU profile the start
    ``base`` stands on (``overrides``), and the fit's provenance; never a copy of the
    profile. ``out``: where it goes, so that a GPU given as a file is named relative to it."""
    spec = spec_for(train[0].cfg) if train else get_kernel(DEFAULT_KERNEL)
    fit = res.profile
    gpu_name = base.gpu or base.name
    if gpu_name in gpu_names():
        gpu, named = load_gpu(gpu_name), gpu_name
    elif Path(gpu_name).is_file():
        gpu = load_gpu(gpu_name)
        folder = Path(out).resolve().parent if out is not None else Path.cwd()
        named = os.path.relpath(Path(gpu_name).resolve(), folder)
    else:
        raise InvalidInput(
            f"the profile the fit started from ({base.name}) stands on no bundled GPU or "
            f"profile file: an overlay cannot name its GPU",
            what="gpu",
        )
    fit_d, gpu_d = fit.to_dict(), gpu.to_dict()
    moved = [
        k
        for k in fit_d
        if k not in (*OVERRIDABLE, "name", "sources", *COST_FIELDS) and fit_d[k] != gpu_d.get(k)
    ]
    if moved:  # a fit moves only what OVERRIDABLE names; anything else is a bug here
        raise InvalidInput(f"the fit changed {moved}, which an overlay cannot hold", what="fit")
    overrides: dict = {}
    lat = {n: v for n, v in fit.latency_ns.items() if gpu.latency_ns.get(n, 0.0) != v}
    if lat:
        overrides["latency_ns"] = lat
    for k in OVERRIDABLE:
        if k != "latency_ns" and fit_d.get(k) != gpu_d.get(k):
            overrides[k] = fit_d[k]
    d: dict = {
        "kernel": spec.name,
        "gpu": named,
        "costs": {k: list(v) for k, v in fit.costs.items() if k in spec.cost_keys},
    }
    if fit.cost_above:
        d["cost_above"] = {k: list(v) for k, v in fit.cost_above.items()}
    if fit.cost_growth:
        d["cost_growth"] = dict(fit.cost_growth)
    if fit.cta_spread:  # the spread the fit ran with: its costs are fitted beside it
        d["cta_spread"] = dict(fit.cta_spread)
    if fit.compute_front:  # as the spread: the front the costs were fitted with
        d["compute_front"] = dict(fit.compute_front)
        if fit.compute_front_from:  # and where it opens
            d["compute_front_from"] = dict(fit.compute_front_from)
    if fit.unit_shared:
        d["unit_shared"], d["unit_share"] = list(fit.unit_shared), fit.unit_share
        if fit.unit_share_from:
            d["unit_share_from"] = fit.unit_share_from
        if fit.unit_share_skew:
            d["unit_share_skew"] = fit.unit_share_skew
            if fit.unit_share_skew_from:  # the start's: where the skew was read and applies
                d["unit_share_skew_from"] = fit.unit_share_skew_from
            if fit.unit_share_first_task:  # the start's, as the skew's least units
                d["unit_share_first_task"] = dict(fit.unit_share_first_task)
    if overrides:
        d["overrides"] = overrides
    date = f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    detail = (
        f"kda-sim calibrate, {date}, from {base.name}: fitted on "
        + ", ".join(f"{t.name} ({shape_text(t.cfg)})" for t in train)
        + f"; {res.launches} simulated launches, {res.seconds:.0f} s"
        + (
            "; pinned (measured, not fitted): " + ", ".join(f"{k} = {v:g}" for k, v in pins.items())
            if pins
            else ""
        )
    )
    d["provenance"] = {"by": "kda-sim calibrate", "date": date, "detail": detail}
    # not the start's build text: a fit's build is what its provenance says it ran; nor
    # its words on its costs (a stock file's "assumed"): the fit replaced them
    drop = ("calibration", BUILD_SOURCE, "costs")
    src = {k: v for k, v in fit.sources.items() if k not in drop and gpu.sources.get(k) != v}
    if src:
        d["sources"] = src
    return d


def shape_of(cfg: Any) -> dict[str, Any]:
    """A launch's shape as the reports name it: its kernel's two ``sweep_axes`` and their
    values (K1: R and L); a kernel without them, its whole configuration."""
    spec = spec_for(cfg)
    d = spec.config_to_dict(cfg)
    axes = hook(spec, "sweep_axes")
    return {a: d[a] for a in axes} if axes else d


def shape_text(cfg: Any) -> str:
    """:func:`shape_of` in words: ``R=1 L=1``."""
    return " ".join(f"{k}={v}" for k, v in shape_of(cfg).items())


def write_overlay(d: dict, path: str | Path) -> None:
    """Write a fitted overlay; one the loader would refuse (a NaN a trace gave the fit, a
    value out of range, a cost key not the kernel's) is refused here instead, naming the
    field."""
    where = f"the fitted overlay for {path}"
    validate_costs_dict(d, where, get_kernel(d["kernel"]))
    base = d["gpu"]
    if base not in gpu_names():
        base = str(Path(path).resolve().parent / base)
    apply_costs(load_gpu(base), d, where, "")
    Path(path).write_text(json.dumps(d, indent=2, allow_nan=False) + "\n")
