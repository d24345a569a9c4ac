"""How well per-XCD clock offsets come back from a simulated MI355X launch, and how well
its hand-offs could pin them at all (the table in docs/calibration.md, "Clock alignment").

For each shape and jitter seed ("none": the profile's latencies exactly): the launch is
simulated on true time, every XCD's clock is shifted by a known offset (``OFFSETS``),
every time is floored to s_memrealtime's 10 ns steps (``TICK_NS``) as the K1's stamps
record it, ``fit_clocks`` recovers the offsets from the hand-offs alone, and the largest
error (offsets compared up to a constant) is printed beside the *bracket*: per XCD, how
far its tightest incoming plus its tightest outgoing cross-XCD hand-off lie above the
tightest cross-XCD hand-off of the launch, on true time. Even knowing the latency floor
and every other XCD's offset exactly, causality leaves an XCD's offset free within its
bracket: an estimator's error there is set by the trace, not the method.

Usage: ``python scripts/xcd_clock_recovery.py [--shapes 1x2,2x2] [--seeds 4,0,1,none]``.
"""

from __future__ import annotations

import argparse
import copy

import numpy as np

from kda_sim.compare.clocks import fit_clocks, unit_keys
from kda_sim.compare.model import model_view, shifted
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.model import Timeline

GPU = "mi355x"
OFFSETS = np.array([3000.0 * (x - 3.5) for x in range(8)])  # XCD x: -10.5 .. 10.5 us
TICK_NS = 10.0  # s_memrealtime: 100 MHz (kda_sim.compare.clocks.clock_resolution)


def in_ticks(tl: Timeline, tick: float = TICK_NS) -> Timeline:
    """``tl`` as a clock of ``tick`` ns steps records it (every time floored to a step)."""
    out = copy.deepcopy(tl)

    def f(x: float | None) -> float | None:
        return None if x is None else float(np.floor(x / tick) * tick)

    for c in out.ctas:
        c.start, c.end = f(c.start), f(c.end)
        for s in c.stages:
            s.start, s.end = f(s.start), f(s.end)
        for p in c.polls:
            p.first_issue, p.satisfied, p.put_time = (
                f(p.first_issue),
                f(p.satisfied),
                f(p.put_time),
            )
        for u in c.puts:
            u.time = f(u.time)
        for ld in c.loads:
            ld.issue, ld.done = f(ld.issue), f(ld.done)
    return out


def brackets(tl: Timeline) -> np.ndarray:
    """[xcds] ns: per XCD, the excess of its tightest incoming plus its tightest outgoing
    cross-XCD hand-off (put -> poll satisfied) over the launch's tightest one; ``tl`` on
    true time (inf where an XCD has no hand-off one way)."""
    keys = np.array(unit_keys(tl, "xcd"))
    e = model_view(tl).edges
    p, q = keys[e.prod], keys[e.cons]
    gap = e.sat_ub - e.put_lb
    cross = p != q
    p, q, gap = p[cross], q[cross], gap[cross]
    floor = gap.min()
    out = np.full(int(keys.max()) + 1, np.inf)
    for u in range(out.size):
        inc, outg = gap[q == u], gap[p == u]
        if inc.size and outg.size:
            out[u] = (inc.min() - floor) + (outg.min() - floor)
    return out


def launch(r: int, lay: int, seed: int | None) -> tuple[Timeline, Timeline]:
    """(true time, per-XCD clocks off by ``OFFSETS``, in ticks) of a simulated launch."""
    tl = simulate(LaunchConfig(r, lay), load_profile(GPU), seed=seed).timeline
    return tl, in_ticks(shifted(tl, -OFFSETS[unit_keys(tl, "xcd")]))


def error(skewed: Timeline) -> float:
    """The fit's largest per-XCD offset error in ns (offsets compared up to a constant)."""
    fit = fit_clocks(skewed)
    est = np.array([fit.offset_of(x) for x in range(OFFSETS.size)])
    return float(np.abs((est - est.mean()) - (OFFSETS - OFFSETS.mean())).max())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shapes", default="1x1,1x2,2x2,1x4,3x3")
    ap.add_argument("--seeds", default="4,0,1,2,none")
    a = ap.parse_args()
    print("| R | L | jitter seed | largest error (ns) | bracket min / median / max (ns) |")
    print("|---|---|---|---|---|")
    for shape in a.shapes.split(","):
        r, lay = (int(v) for v in shape.split("x"))
        for s in a.seeds.split(","):
            seed = None if s == "none" else int(s)
            true_time, skewed = launch(r, lay, seed)
            err, br = error(skewed), brackets(true_time)
            print(
                f"| {r} | {lay} | {s} | {err:.0f} "
                f"| {br.min():.0f} / {np.median(br):.0f} / {br.max():.0f} |"
            )


if __name__ == "__main__":
    main()
