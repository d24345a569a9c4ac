"""Benchmark: how the engine's cost grows with the size of what it simulates (issue 40).

    PYTHONPATH=. python bench/growth_bench.py [--gpu h200] [--examples-gpu mi355x]
        [--repeat 3] [--quick] [--axes R,L,ctas,launches] [--R 1,2,...] [--L ...]
        [--ctas 2,4,...] [--launches 1,2,...] [--budget-s 30]
        [--markdown] [--json PATH] [--plot PATH]

Four axes, each its own table:

- **R**: K1 at R = 1..8 requests, L = 2, on ``--gpu``;
- **L**: K1 at L = 1..4 tokens, R = 4, on ``--gpu``. The default is h200, not mi355x
  (``sim_bench.py``'s): mi355x's LDS budget for K1's x rows holds S = R L <= 9, so half of
  these shapes do not fit there (a shape that does not fit is listed as not run, with the
  reason);
- **CTAs**: each example kernel whose configuration takes a CTA count, from 2 to 4096 CTAs
  on ``--examples-gpu`` (mi355x: 256 units, the most slots for these kernels of the
  bundled GPUs that also hold schedworker's CTAs): gridbarrier (``ctas``), ticketqueue
  (``ctas``, one item a CTA), splitk (``tiles`` of 2 splits) and schedworker (1
  scheduler CTA and the rest workers, the two grids launched together). pingpong has no
  CTA count (two CTAs, its producer and its consumer). A kernel whose protocol needs
  every CTA resident at once (gridbarrier, schedworker) stops at the GPU's slots for it;
  ticketqueue and splitk finish at any residency and run past it. Every run is checked
  to finish: a hang stops the benchmark, never a wait;
- **launches**: host sequences (``kda_sim.host.run_sequence``) of 1, 2, 4, 8, 16
  launches: K1 (R = 4, L = 2, ``launch*N``: a fresh epoch each) and splitk (64 tiles of
  4 splits, ``launch zero=SEM; replay*(N-1)``: a captured graph replayed, its counters
  zeroed inside it).

A row is one configuration: the events (``sim_bench.events_of``: unfolded, as issue 40
counts speed, and the folded engine's scheduled events and calls), the wall and CPU time
of one run (a launch, or the whole sequence), best of ``--repeat`` after a first run that
builds and caches the protocol (as sim_bench's warm launch), and the run's peak memory:
``tracemalloc``'s peak over the run, counted from the moment it starts, in a pass of its
own (tracemalloc slows Python, so it never runs while time is measured). tracemalloc,
not resident growth: it counts every byte the run's Python objects and numpy arrays
hold at the run's high point, exactly and whatever ran before; resident growth counts
pages, which the allocator keeps and reuses from earlier runs (a run smaller than an
earlier one shows none), and the process's high-water mark (``ru_maxrss``) only rises.

The growth, for each series (an axis's kernel): time and bytes per event across its
ladder, and the log-log slopes (``numpy.polyfit``) of wall time and of peak memory
against unfolded events, over every rung and over the largest three (fixed costs a run
pays whatever its size flatten the small end of a ladder, which would hide growth at the
large one). The verdict is "no worse than linear" where both slopes are at most
``LINEAR`` = 1.1: a slope of 1 is linear, and the 0.1 above it is the noise of best-of-N
times on a shared machine (a 10 % error at each end of a ladder spanning one decade of
events moves a slope by up to 0.09, over two decades 0.04, but over K1's R ladder, 2.9x
of events, by up to 0.19: there a verdict wants reruns); over it the table says "WORSE
than linear" and by how much. No slope is fitted over less than ``MIN_SPREAD`` (2x) of
events: K1's L changes its events by 1 %. The slope of events against the axis's own value
(R, L, CTAs, launches) is printed beside it: what grows with the size asked for.

``--budget-s``: a rung is not run where the series' last two rungs' growth predicts
its run would take longer than this (a run's time times the last ratio of times); the
table says so and why, rather than running for minutes. Progress goes to stderr; the
tables to stdout (Markdown with ``--markdown``), ``--json`` writes them with every
measure, and ``--plot`` draws wall time and peak memory against events (default
bench/growth.png, which bench/README.md shows).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import sys
import time
import tracemalloc
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from bench.sim_bench import Events, events_of
from kda_sim.engine import SimResult, simulate
from kda_sim.errors import InvalidInput, KdaSimError
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import MAX_REPEAT, parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile, residency
from kda_sim.machine.profile import GpuProfile
from kda_sim.machine.residency import check_fits

LINEAR = 1.1  # the largest slope called "no worse than linear" (the docstring says why)
TOP = 3  # the rungs at the large end of a ladder whose slope is checked on its own
# the least spread of events (largest over smallest) a slope is fitted over: over less,
# a few per cent of noise in the times makes any slope (K1's L moves the events by 1 %)
MIN_SPREAD = 2.0
PLOT = Path(__file__).resolve().parent / "growth.png"
AXES = ("R", "L", "ctas", "launches")
# the ladders' bounds: issue 40's ranges (R and L as the safety sweep's), and the CTAs
# from a pair up; a sequence's launches as many as one step of it may ask for
BOUNDS = {"R": (1, 8), "L": (1, 4), "ctas": (2, 4096), "launches": (1, MAX_REPEAT)}
FULL = {
    "R": (1, 2, 3, 4, 5, 6, 7, 8),
    "L": (1, 2, 3, 4),
    "ctas": tuple(2**i for i in range(1, 13)),
    "launches": (1, 2, 4, 8, 16),
}
QUICK = {"R": (1, 4, 8), "L": (1, 4), "ctas": (2, 32, 512), "launches": (1, 2, 4)}
K1_R, K1_L = 4, 2  # the fixed R of the L axis, L of the R axis, and the launches' shape
SPLITK_SEQ = {"tiles": 64, "splits": 4}  # the launches axis's example: 256 CTAs
NO_CTA_COUNT = {
    "pingpong": "two CTAs, its producer and its consumer: its configuration has no CTA count"
}


@dataclass(frozen=True)
class Example:
    """An example kernel on the CTA axis: its configuration for ``n`` CTAs (None: no
    configuration has that many), whether its protocol needs every CTA resident at
    once, and the host sequence it runs as (None: one launch)."""

    name: str
    fields: Callable[[int], dict[str, Any] | None]
    all_resident: bool
    sequence: str | None = None
    note: str = ""


EXAMPLES = (
    Example("gridbarrier", lambda n: {"ctas": n}, True, note="ctas = CTAs, 2 rounds"),
    Example(
        "ticketqueue",
        lambda n: {"ctas": n, "items": n},
        False,
        note="ctas = items = CTAs (one item a CTA)",
    ),
    Example(
        "splitk",
        lambda n: {"tiles": n // 2, "splits": 2} if n % 2 == 0 else None,
        False,
        note="tiles = CTAs / 2, 2 splits a tile",
    ),
    Example(
        "schedworker",
        lambda n: {"schedulers": 1, "workers": n - 1},
        True,
        "launch grid=scheduler & launch grid=worker",
        note="1 scheduler CTA, CTAs - 1 workers, the two grids together",
    ),
)


@dataclass(frozen=True)
class Case:
    """One configuration to measure: a launch, or a host sequence of launches."""

    axis: str
    series: str  # the plot's series and the slope's: an axis's kernel
    config: str  # the configuration, as its row says it
    x: int  # the axis's value
    launches: int
    spec: Any
    cfg: Any
    prof: GpuProfile
    sequence: str | None = None  # host sequence text (None: one launch)

    def run(self, fold: bool = True) -> list[SimResult]:
        """Its launches' results; a hang or a launch left unrun stops the benchmark."""
        if self.sequence is None:
            out = [simulate(self.cfg, self.prof, fold_events=fold)]
        else:
            seq = parse(self.sequence)
            ran = run_sequence(self.spec, self.cfg, self.prof, seq, fold_events=fold)
            if ran.not_run:
                raise RuntimeError(f"{self.series} {self.config}: {ran.not_run} launches not run")
            out = [r.result for r in ran.runs]
        if any(r.deadlock for r in out):
            raise RuntimeError(f"{self.series} {self.config}: the launch hangs")
        return out


@dataclass
class Row:
    axis: str
    series: str
    config: str
    x: int
    ctas: int
    launches: int
    events: Events
    wall_s: float  # best of the repeats
    cpu_s: float  # best of the repeats
    peak_bytes: int  # tracemalloc's peak over one run
    first_s: float  # the first run (protocol built)

    @property
    def us_per_event(self) -> float:
        return self.wall_s * 1e6 / self.events.unfolded

    @property
    def bytes_per_event(self) -> float:
        return self.peak_bytes / self.events.unfolded


@dataclass
class Skipped:
    axis: str
    series: str
    x: int
    why: str


@dataclass
class Growth:
    """A series' growth over its ladder (slopes None with fewer than two rows)."""

    axis: str
    series: str
    rows: int
    spread: float  # the largest events over the smallest
    us_per_event: tuple[float, float]
    bytes_per_event: tuple[float, float]
    wall_slope: float | None
    wall_slope_top: float | None
    memory_slope: float | None
    memory_slope_top: float | None
    events_slope: float | None  # events against the axis's own value

    @property
    def no_slope(self) -> str:
        if self.rows < 2:
            return "no slope: one row"
        return f"no slope: the events spread {self.spread:.2f}x, under {MIN_SPREAD:g}x"

    def _judged(self, what: str, slopes: tuple[float | None, ...], linear: str) -> str:
        known = [s for s in slopes if s is not None]
        if not known:
            return self.no_slope
        if max(known) <= LINEAR:
            return linear
        return f"WORSE than linear: {what} grows as events^{max(known):.2f}"

    @property
    def verdict(self) -> str:
        slopes = (self.wall_slope, self.wall_slope_top)
        return self._judged("wall time", slopes, f"no worse than linear (slope <= {LINEAR})")

    @property
    def memory_verdict(self) -> str:
        slopes = (self.memory_slope, self.memory_slope_top)
        return self._judged("memory", slopes, "no worse than linear")


def _ladder(axis: str) -> Callable[[str], tuple[int, ...]]:
    lo, hi = BOUNDS[axis]

    def parse_ladder(text: str) -> tuple[int, ...]:
        try:
            values = tuple(int(v) for v in text.split(","))
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{text!r}: comma-separated integers in {lo}..{hi}"
            ) from None
        bad = [v for v in values if not lo <= v <= hi]
        if bad:
            raise argparse.ArgumentTypeError(f"{bad} out of range: {axis} is in {lo}..{hi}")
        return tuple(sorted(set(values)))

    return parse_ladder


def _positive(kind: type) -> Callable[[str], Any]:
    def parse_positive(text: str) -> Any:
        try:
            v = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r}: not a {kind.__name__}") from None
        if not v > 0 or (isinstance(v, float) and not math.isfinite(v)):
            raise argparse.ArgumentTypeError(f"{text!r}: more than 0")
        return v

    return parse_positive


def _axes(text: str) -> tuple[str, ...]:
    names = tuple(a for a in text.split(",") if a)
    bad = [a for a in names if a not in AXES]
    if bad or not names:
        raise argparse.ArgumentTypeError(f"{text!r}: some of {','.join(AXES)}")
    return names


def writable(path: Path, flag: str) -> None:
    """Refuse, before any simulation, a path the results could not be written to."""
    if path.is_dir():
        raise InvalidInput("is a folder, not a file", what="path", where=f"{flag} {path}")
    parent = path.parent
    if not parent.is_dir():
        raise InvalidInput(f"no folder {parent}", what="path", where=f"{flag} {path}")
    if not os.access(parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise InvalidInput("not writable", what="path", where=f"{flag} {path}")


def _k1_case(axis: str, x: int, prof: GpuProfile, R: int, L: int) -> Case | Skipped:
    spec = get("k1")
    cfg = spec.config_type(R, L)
    try:
        spec.validate(cfg)
        check_fits(cfg, prof)  # K1's x rows in the GPU's LDS budget
    except InvalidInput as e:
        return Skipped(axis, f"K1 {axis}", x, f"does not fit on {prof.name}: {e}")
    return Case(axis, f"K1 {axis}", f"R={R} L={L}", x, 1, spec, cfg, prof)


def _example_case(ex: Example, n: int, gpu: str) -> Case | Skipped:
    spec = get(ex.name)
    prof = load_profile(gpu, ex.name)
    fields = ex.fields(n)
    if fields is None:
        return Skipped("ctas", ex.name, n, f"no configuration of {n} CTAs ({ex.note})")
    try:
        cfg = spec.validate(spec.config_type(**fields))
        check_fits(cfg, prof)
        res = residency(cfg, prof, None)
    except InvalidInput as e:
        return Skipped("ctas", ex.name, n, f"refused: {e}")
    if ex.all_resident and n > res.slots:
        return Skipped(
            "ctas",
            ex.name,
            n,
            f"needs every CTA resident at once: {res.slots} slots on {prof.name} "
            f"({res.per_unit} a unit x {prof.units} units, limited by {res.limited_by})",
        )
    config = ", ".join(f"{k}={v}" for k, v in fields.items())
    return Case("ctas", ex.name, config, n, 1, spec, cfg, prof, ex.sequence)


def _launch_cases(n: int, k1: GpuProfile, gpu: str) -> list[Case]:
    k1_spec, sk_spec = get("k1"), get("splitk")
    replay = f"; replay*{n - 1}" if n > 1 else ""
    sk = ", ".join(f"{k}={v}" for k, v in SPLITK_SEQ.items())
    return [
        Case(
            "launches",
            "K1 launches",
            f"R={K1_R} L={K1_L}, launch*{n}",
            n,
            n,
            k1_spec,
            k1_spec.config_type(K1_R, K1_L),
            k1,
            f"launch*{n}",
        ),
        Case(
            "launches",
            "splitk launches",
            f"{sk}, launch zero=SEM{replay}",
            n,
            n,
            sk_spec,
            sk_spec.config_type(**SPLITK_SEQ),
            load_profile(gpu, "splitk"),
            f"launch zero=SEM{replay}",
        ),
    ]


def _profile(gpu: str, kernel: str, flag: str) -> GpuProfile:
    try:
        return load_profile(gpu, kernel)
    except InvalidInput as e:
        raise InvalidInput(str(e), what="gpu", where=flag) from None


def plan(a: argparse.Namespace) -> list[Case | Skipped]:
    """Every configuration to run, in order, or why it is not run; profiles loaded and
    caps worked out here, before any simulation (an unknown GPU is refused now)."""
    k1 = _profile(a.gpu, "k1", "--gpu")
    for ex in EXAMPLES:
        _profile(a.examples_gpu, ex.name, "--examples-gpu")
    out: list[Case | Skipped] = []
    if "R" in a.axes:
        out += [_k1_case("R", r, k1, r, K1_L) for r in a.R]
    if "L" in a.axes:
        out += [_k1_case("L", x, k1, K1_R, x) for x in a.L]
    if "ctas" in a.axes:
        for ex in EXAMPLES:
            out += [_example_case(ex, n, a.examples_gpu) for n in a.ctas]
    if "launches" in a.axes:
        for n in a.launches:
            out += _launch_cases(n, k1, a.examples_gpu)
    return out


def _timed(case: Case) -> tuple[float, float, list[SimResult]]:
    gc.collect()  # no earlier run's garbage collected inside this one
    t, c = time.perf_counter(), time.process_time()
    out = case.run()
    return time.perf_counter() - t, time.process_time() - c, out


def peak_bytes(run: Callable[[], object]) -> int:
    """tracemalloc's peak over ``run``: the bytes it allocated and held at its high
    point, counted from its start."""
    gc.collect()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def measure(case: Case, repeat: int) -> Row:
    first, _, results = _timed(case)
    walls, cpus = [], []
    for _ in range(repeat):
        wall, cpu, results = _timed(case)
        walls.append(wall)
        cpus.append(cpu)
    events = events_of(results, case.run(fold=False))
    ctas = len(results[0].timeline.ctas)
    peak = peak_bytes(case.run)
    return Row(
        case.axis,
        case.series,
        case.config,
        case.x,
        ctas,
        case.launches,
        events,
        min(walls),
        min(cpus),
        peak,
        first,
    )


def _predicted_s(done: Sequence[Row]) -> float | None:
    """A series' next run's time at the growth between its last two rows' runs (best of
    their repeats: the first runs also build protocols)."""
    if len(done) < 2:
        return None
    prev, last = done[-2].wall_s, done[-1].wall_s
    return last * max(1.0, last / prev) if prev > 0 else None


def run_all(items: list[Case | Skipped], repeat: int, budget_s: float) -> tuple[list, list]:
    rows: list[Row] = []
    skipped: list[Skipped] = []
    by_series: dict[str, list[Row]] = {}
    bar = tqdm(items, file=sys.stderr, desc="growth", unit="config", dynamic_ncols=True)
    for item in bar:
        if isinstance(item, Skipped):
            skipped.append(item)
            continue
        bar.set_postfix_str(f"{item.series} {item.x}")
        done = by_series.setdefault(item.series, [])
        guess = _predicted_s(done)
        if guess is not None and guess > budget_s:
            a, b = done[-2], done[-1]
            skipped.append(
                Skipped(
                    item.axis,
                    item.series,
                    item.x,
                    f"over --budget-s {budget_s:g}: at the growth from {a.x} to {b.x} "
                    f"({a.wall_s:.2f} -> {b.wall_s:.2f} s a run) it would take about "
                    f"{guess:.0f} s",
                )
            )
            continue
        row = measure(item, repeat)
        rows.append(row)
        done.append(row)
    return rows, skipped


def _slope(x: Sequence[float], y: Sequence[float]) -> float | None:
    """The log-log slope of ``y`` against ``x``; None where ``x`` spreads too little."""
    if len(x) < 2 or max(x) < MIN_SPREAD * min(x):
        return None
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def growth(rows: list[Row]) -> list[Growth]:
    out = []
    for series in dict.fromkeys(r.series for r in rows):
        rs = sorted((r for r in rows if r.series == series), key=lambda r: r.events.unfolded)
        ev = [r.events.unfolded for r in rs]
        top = rs[-TOP:] if len(rs) > TOP else []
        tev = [r.events.unfolded for r in top]
        by_x = sorted(rs, key=lambda r: r.x)
        out.append(
            Growth(
                rs[0].axis,
                series,
                len(rs),
                ev[-1] / ev[0],
                (min(r.us_per_event for r in rs), max(r.us_per_event for r in rs)),
                (min(r.bytes_per_event for r in rs), max(r.bytes_per_event for r in rs)),
                _slope(ev, [r.wall_s for r in rs]),
                _slope(tev, [r.wall_s for r in top]),
                _slope(ev, [r.peak_bytes for r in rs]),
                _slope(tev, [r.peak_bytes for r in top]),
                _slope([r.x for r in by_x], [r.events.unfolded for r in by_x]),
            )
        )
    return out


AXIS_TITLE = {
    "R": f"K1, R requests (L = {K1_L})",
    "L": f"K1, L tokens (R = {K1_R})",
    "ctas": "example kernels, CTAs",
    "launches": "host sequences, launches",
}
HEAD = (
    "kernel",
    "configuration",
    "CTAs",
    "launches",
    "events unfolded",
    "scheduled",
    "calls",
    "wall ms",
    "CPU ms",
    "peak MiB",
    "us / event",
    "B / event",
)


def _f(s: float | None) -> str:
    return "n/a" if s is None else f"{s:.2f}"


def _cells(r: Row) -> tuple[str, ...]:
    e = r.events
    return (
        r.series,
        r.config,
        str(r.ctas),
        str(r.launches),
        f"{e.unfolded:,}",
        f"{e.scheduled:,}",
        f"{e.calls:,}",
        f"{r.wall_s * 1e3:.1f}",
        f"{r.cpu_s * 1e3:.1f}",
        f"{r.peak_bytes / 2**20:.2f}",
        f"{r.us_per_event:.2f}",
        f"{r.bytes_per_event:.0f}",
    )


def table(rows: Sequence[tuple[str, ...]], markdown: bool) -> list[str]:
    """``HEAD`` and ``rows`` as a Markdown table, or as columns aligned for a terminal."""
    if markdown:
        out = ["| " + " | ".join(HEAD) + " |", "|---" * len(HEAD) + "|"]
        return out + ["| " + " | ".join(r) + " |" for r in rows]
    widths = [max(len(c) for c in col) for col in zip(HEAD, *rows, strict=True)]
    return [
        "  ".join(
            c.ljust(w) if i < 2 else c.rjust(w)
            for i, (c, w) in enumerate(zip(r, widths, strict=True))
        )
        for r in (HEAD, *rows)
    ]


def growth_line(g: Growth) -> str:
    return (
        f"{g.series} ({g.rows} rows): {g.us_per_event[0]:.2f} to {g.us_per_event[1]:.2f} us "
        f"and {g.bytes_per_event[0]:.0f} to {g.bytes_per_event[1]:.0f} B an event; wall time "
        f"against events, slope {_f(g.wall_slope)} (the largest {TOP}: "
        f"{_f(g.wall_slope_top)}): {g.verdict}; peak memory, slope {_f(g.memory_slope)} "
        f"(the largest {TOP}: {_f(g.memory_slope_top)}): {g.memory_verdict}; events "
        f"against {g.axis}, slope {_f(g.events_slope)}"
    )


def report(
    rows: list[Row],
    skipped: list[Skipped],
    grown: list[Growth],
    meta: dict[str, Any],
    markdown: bool,
) -> str:
    """An axis a table, then what was not run and why, then each series' growth."""
    lines = [
        f"K1 on {meta['gpu']}, the examples on {meta['examples_gpu']}; wall and CPU time "
        f"best of {meta['repeat']}; peak: tracemalloc's over one run; load average "
        f"{meta['load_before']:.2f} before, {meta['load_after']:.2f} after.",
    ]
    bullet = "- " if markdown else "  "
    for axis in AXES:
        mine = [_cells(r) for r in rows if r.axis == axis]
        left = [s for s in skipped if s.axis == axis]
        if not mine and not left:
            continue
        title = AXIS_TITLE[axis]
        lines += ["", f"### {title}" if markdown else f"{title}:", ""]
        lines += table(mine, markdown) if mine else []
        if left:
            lines += ["", "Not run:", ""]
            lines += [f"{bullet}{s.series} at {s.x}: {s.why}" for s in left]
        gs = [growth_line(g) for g in grown if g.axis == axis]
        lines += ["", *(bullet + g for g in gs)] if gs else []
    return "\n".join(lines)


def to_json(
    rows: list[Row], skipped: list[Skipped], grown: list[Growth], meta: dict[str, Any]
) -> dict[str, Any]:
    def row(r: Row) -> dict[str, Any]:
        d = asdict(r)
        d["events"] = r.events._asdict()
        d["us_per_event"] = r.us_per_event
        d["bytes_per_event"] = r.bytes_per_event
        return d

    def grew(g: Growth) -> dict[str, Any]:
        return {**asdict(g), "verdict": g.verdict, "memory_verdict": g.memory_verdict}

    return {
        **meta,
        "linear": LINEAR,
        "rows": [row(r) for r in rows],
        "not_run": [asdict(s) for s in skipped],
        "growth": [grew(g) for g in grown],
    }


def plot(rows: list[Row], path: Path) -> None:
    """Wall time and peak memory against unfolded events, log-log, a series each, with a
    line of slope 1 through each panel's points' middle for reference."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.2), dpi=80)
    panels = (("wall time (s)", lambda r: r.wall_s), ("peak memory (MiB)", _mib))
    markers = "osD^v<>ph*"
    for ax, (label, value) in zip(axes, panels, strict=True):
        xs: list[float] = []
        ys: list[float] = []
        for i, series in enumerate(dict.fromkeys(r.series for r in rows)):
            rs = sorted((r for r in rows if r.series == series), key=lambda r: r.events.unfolded)
            x = [r.events.unfolded for r in rs]
            y = [value(r) for r in rs]
            ax.loglog(x, y, marker=markers[i % len(markers)], ms=4, lw=1, label=series)
            xs += x
            ys += y
        if xs:
            lo, hi = min(xs), max(xs)
            mx, my = math.exp(np.mean(np.log(xs))), math.exp(np.mean(np.log(ys)))
            ax.loglog([lo, hi], [my * lo / mx, my * hi / mx], "k--", lw=0.8, label="slope 1")
        ax.set_xlabel("events (unfolded)")
        ax.set_ylabel(label)
        ax.grid(True, which="major", lw=0.3)
    axes[0].legend(fontsize=7, loc="upper left")
    fig.suptitle("How the engine's cost grows (bench/growth_bench.py)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def _mib(r: Row) -> float:
    return r.peak_bytes / 2**20


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--gpu", default="h200", help="K1's GPU profile (default h200)")
    ap.add_argument("--examples-gpu", default="mi355x", help="the examples' (default mi355x)")
    ap.add_argument("--repeat", type=_positive(int), help="runs a row, best kept (default 3)")
    ap.add_argument("--quick", action="store_true", help="short ladders, 1 repeat")
    ap.add_argument("--axes", type=_axes, default=AXES, help=f"some of {','.join(AXES)}")
    for axis in AXES:
        lo, hi = BOUNDS[axis]
        ap.add_argument(
            f"--{axis}", type=_ladder(axis), help=f"the ladder, in {lo}..{hi} (comma-separated)"
        )
    ap.add_argument(
        "--budget-s",
        type=_positive(float),
        default=30.0,
        help="skip a rung predicted to run longer (default 30)",
    )
    ap.add_argument("--markdown", action="store_true", help="the tables as Markdown")
    ap.add_argument("--json", type=Path, help="write the tables and growth here")
    ap.add_argument("--plot", type=Path, default=PLOT, help=f"the figure (default {PLOT})")
    a = ap.parse_args(argv)
    ladders = QUICK if a.quick else FULL
    for axis in AXES:
        if getattr(a, axis) is None:
            setattr(a, axis, ladders[axis])
    if a.repeat is None:
        a.repeat = 1 if a.quick else 3
    return a


def main(argv: Sequence[str] | None = None) -> None:
    a = parse_args(argv)
    try:
        if a.plot.suffix != ".png":
            raise InvalidInput("a .png file", what="path", where=f"--plot {a.plot}")
        writable(a.plot, "--plot")
        if a.json is not None:
            writable(a.json, "--json")
        items = plan(a)
    except KdaSimError as e:
        print(f"growth_bench: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    load_before = os.getloadavg()[0]
    rows, skipped = run_all(items, a.repeat, a.budget_s)
    meta = {
        "gpu": a.gpu,
        "examples_gpu": a.examples_gpu,
        "repeat": a.repeat,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
    }
    grown = growth(rows)
    print(report(rows, skipped, grown, meta, a.markdown))
    if a.json is not None:
        a.json.write_text(json.dumps(to_json(rows, skipped, grown, meta), indent=1) + "\n")
    plot(rows, a.plot)


if __name__ == "__main__":
    main()
