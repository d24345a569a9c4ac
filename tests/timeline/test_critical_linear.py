"""critical_path against the plain quadratic walk it replaced (kept below as the
definition): the same steps and the same times by stage on the bundled traces, on
simulated launches and on random timelines made to have ties, equal times and CTAs
sharing units."""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from kda_sim.engine import simulate
from kda_sim.importers import read_kernel_trace, trace_files
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.critical import EPS_NS, CriticalPath, PathStep, _has_put, critical_path
from kda_sim.timeline.model import CtaTrack, Meta, PollRecord, PutRecord, StageSpan, Timeline

TRACES = Path(__file__).resolve().parents[2] / "traces"


# -- the definition: a scan of every poll / CTA at each step (quadratic) -------------
def _binding_poll(track: CtaTrack, t: float) -> PollRecord | None:
    best: PollRecord | None = None
    for p in track.polls:
        if p.satisfied is None or p.producer is None or p.put_time is None:
            continue
        if p.satisfied > t + EPS_NS or p.put_time >= t:
            continue
        if p.put_time <= p.first_issue + EPS_NS:
            continue
        if best is None or p.satisfied > best.satisfied:  # type: ignore[operator]
            best = p
    return best


def _slot_freer(tl: Timeline, track: CtaTrack) -> CtaTrack | None:
    if track.unit is None or track.start is None:
        return None
    best: CtaTrack | None = None
    for c in tl.ctas:
        if c.cta == track.cta or c.unit != track.unit or c.end is None:
            continue
        if c.end <= track.start + EPS_NS and (best is None or c.end > best.end):  # type: ignore[operator]
            best = c
    return best


def _stage_time(track: CtaTrack, start: float, end: float, acc: dict[str, float]) -> None:
    covered = 0.0
    for s in track.stages:
        lo, hi = max(s.start, start), min(s.end, end)
        if hi > lo:
            acc[s.name] = acc.get(s.name, 0.0) + hi - lo
            covered += hi - lo
    rest = (end - start) - covered
    if rest > EPS_NS:
        acc["(between stages)"] = acc.get("(between stages)", 0.0) + rest


def reference(tl: Timeline) -> CriticalPath | None:
    done = [c for c in tl.ctas if c.end is not None and c.start is not None]
    if not done:
        return None
    track = max(done, key=lambda c: c.end)  # type: ignore[arg-type, return-value]
    t: float = track.end  # type: ignore[assignment]
    steps: list[PathStep] = []
    for _ in range(sum(len(c.polls) for c in tl.ctas) + len(tl.ctas) + 1):
        p = _binding_poll(track, t)
        if p is not None:
            steps.append(PathStep("run", track.cta, p.satisfied, t))  # type: ignore[arg-type]
            label = tl.ctas[p.producer].puts[p.put_ref].region if _has_put(tl, p) else p.label  # type: ignore[index]
            steps.append(
                PathStep("handoff", track.cta, p.put_time, p.satisfied, p.producer, label, p.label)
            )  # type: ignore[arg-type]
            track, t = tl.ctas[p.producer], p.put_time  # type: ignore[index, assignment]
            continue
        start: float = track.start  # type: ignore[assignment]
        steps.append(PathStep("run", track.cta, start, t))
        freer = _slot_freer(tl, track)
        if freer is None or start <= tl.origin + EPS_NS:
            break
        steps.append(PathStep("slot", track.cta, freer.end, start, freer.cta, "slot"))  # type: ignore[arg-type]
        track, t = freer, freer.end  # type: ignore[assignment]
    steps.reverse()
    acc: dict[str, float] = {}
    for s in steps:
        if s.kind == "run":
            _stage_time(tl.ctas[s.cta], s.start, s.end, acc)
        else:
            key = "(hand-off latency)" if s.kind == "handoff" else "(waiting for a slot)"
            acc[key] = acc.get(key, 0.0) + s.dur
    return CriticalPath(tuple(steps), acc)


# -- timelines ------------------------------------------------------------------------
def _same(tl: Timeline) -> CriticalPath | None:
    new, old = critical_path(tl), reference(tl)
    assert new == old  # steps and by_stage, floats bit for bit
    return new


@pytest.mark.parametrize("name", [p.name for p in trace_files(TRACES)])
def test_same_path_on_bundled_traces(name: str) -> None:
    cp = _same(read_kernel_trace(TRACES / name))
    assert cp is not None and cp.steps


@pytest.mark.parametrize(
    "cfg", [LaunchConfig(1, 1), LaunchConfig(2, 2), LaunchConfig(4, 4, onw_first=True)]
)
def test_same_path_on_simulated_launches(cfg: LaunchConfig) -> None:
    tl = simulate(cfg, load_profile("h200-k1"), seed=3).timeline
    assert _same(tl) is not None


def _random_timeline(rng: random.Random, n: int, units: int) -> Timeline:
    """CTAs on few units, times on a coarse grid (so ties and equal ends are common),
    polls naming random producers with puts before or after they began."""
    grid = lambda: float(rng.randrange(0, 40) * 4)  # noqa: E731
    ctas = []
    for k in range(n):
        a, b = sorted((grid(), grid()))
        c = CtaTrack(k, "x", unit=rng.randrange(units), start=a, end=b + 1.0)
        edges = sorted(grid() for _ in range(rng.randrange(0, 4) * 2))
        c.stages = [
            StageSpan(f"s{i % 3}", -1, edges[i], edges[i + 1]) for i in range(0, len(edges), 2)
        ]
        if rng.random() < 0.2:
            c.stages.reverse()  # out of order: the index must fall back to a scan
        c.puts = [PutRecord("s0", -1, "R", 1, 0, grid())]
        for _ in range(rng.randrange(0, 6)):
            issue, sat = sorted((grid(), grid()))
            put = rng.choice([issue - 4, issue + 0.5, sat, (issue + sat) / 2, grid()])
            c.polls.append(PollRecord("s0", -1, "R", 1, 1, issue, sat, 1, rng.randrange(n), put, 0))
        ctas.append(c)
    return Timeline(Meta("measured", "h200", 1, 1), ctas)


def test_same_path_on_random_timelines() -> None:
    rng = random.Random(36)
    walked = 0
    for _ in range(400):
        cp = _same(_random_timeline(rng, rng.randrange(1, 30), rng.randrange(1, 4)))
        walked += len(cp.steps) if cp else 0
    assert walked > 400  # the paths are not all one step


def test_linear_on_a_long_chain() -> None:
    """A launch of 20,000 CTAs on one unit, each starting as the previous ends, with a
    slot hand-over each: the walk crosses them all."""
    n = 20_000
    ctas = []
    for k in range(n):
        c = CtaTrack(k, "x", unit=0, start=10.0 * k, end=10.0 * k + 9.0)
        c.stages = [StageSpan("s", -1, 10.0 * k, 10.0 * k + 9.0)]
        ctas.append(c)
    tl = Timeline(Meta("measured", "h200", 1, 1), ctas)
    t0 = time.process_time()  # CPU time: the machine may be shared
    cp = critical_path(tl)
    took = time.process_time() - t0
    assert cp is not None and len(cp.ctas) == n
    assert took < 5.0, f"{took:.2f} s of CPU for {n} CTAs (the scan: about 40 s)"
