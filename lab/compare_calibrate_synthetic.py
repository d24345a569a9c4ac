"""Calibration on synthetic "real" traces: does the fit recover a perturbed machine?

Traces are simulated on a *truth* profile (h200 with stage costs and machine
parameters scaled by known factors, latencies jittered +-15 % by a seed) and put on
per-SM clocks off by up to +-5 us; the fit starts from the stock h200 profile, sees
three shapes and predicts the others.

    python lab/compare_calibrate_synthetic.py [--budget N] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from kda_sim.compare.calibrate import evaluate, fit_profile, prepare
from kda_sim.compare.clocks import unit_keys
from kda_sim.compare.model import shifted
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig, parse_shapes
from kda_sim.machine.profile import load_profile

TRAIN = ((1, 1), (2, 2), (1, 8))
HOLDOUT = ((1, 2), (2, 1), (4, 1), (1, 4), (1, 14))
COST_SCALE = {
    "slice": 1.4,
    "gate": 0.7,
    "mix": 1.3,
    "norm": 1.0,
    "gemv": 0.6,
    "k.stage": 2.0,
    "k.conv": 1.5,
    "k.gates": 0.8,
    "k.recur": 1.25,
    "k.norm": 0.7,
}
MACHINE = {"poll": 1.3, "visibility_same_xcd": 0.8, "visibility_cross_xcd": 0.8}


def truth_profile():
    base = load_profile("h200-stock")
    params: dict = {
        f"cost_{k}": tuple(v * COST_SCALE[k] for v in base.costs[k]) for k in COST_SCALE
    }
    params.update({k: base.latency_ns[k] * f for k, f in MACHINE.items()})
    params["hbm_bytes_per_ns"] = base.hbm_bytes_per_ns * 0.8
    return base.with_params(**params)


def kernel_like(tl):
    """What ``kernel/trace.py`` records of a launch: stages and polls (first issue,
    satisfied, retries) on the H200's globaltimer (32 ns steps, one clock for every SM),
    no puts, no loads, no producers."""
    q = 32.0
    for c in tl.ctas:
        c.puts, c.loads = [], []
        c.start = None if c.start is None else q * round(c.start / q)
        c.end = None if c.end is None else q * round(c.end / q)
        for st in c.stages:
            st.start, st.end = q * round(st.start / q), q * round(st.end / q)
        for p in c.polls:
            p.producer = p.put_time = p.put_ref = None
            p.first_issue = q * round(p.first_issue / q)
            p.satisfied = None if p.satisfied is None else q * round(p.satisfied / q)
    tl.meta.clock = "globaltimer ns (H200: 32 ns steps), origin the earliest CTA start"
    tl.meta.extra = {}
    tl.meta.source = "measured"
    return tl


def fake_real(cfg: LaunchConfig, seed: int, like_kernel: bool = False):
    tl = simulate(cfg, truth_profile(), seed=seed).timeline
    if like_kernel:
        return kernel_like(tl)
    keys = unit_keys(tl)
    rng = np.random.default_rng(seed)
    off = {u: rng.uniform(-5000.0, 5000.0) for u in set(keys)}
    tl = shifted(tl, -np.array([off[k] for k in keys]))
    tl.meta.source = "measured"
    return tl


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--json", default=None)
    ap.add_argument("--train", default=None, help="shapes to fit on, e.g. 1x1,2x2,1x8")
    ap.add_argument("--holdout", default=None, help="shapes to predict, e.g. 1x2,2x1")
    ap.add_argument(
        "--like-kernel",
        action="store_true",
        help="record only what kernel/trace.py records (global clock, no puts)",
    )
    a = ap.parse_args(argv)

    def shapes(text: str | None, default: tuple) -> tuple:
        if not text:
            return default
        return parse_shapes(text)

    fit_shapes, held_shapes = shapes(a.train, TRAIN), shapes(a.holdout, HOLDOUT)
    t0 = time.perf_counter()
    train = [
        prepare(fake_real(LaunchConfig(*s), 10 + i, a.like_kernel), f"R{s[0]}L{s[1]}")
        for i, s in enumerate(fit_shapes)
    ]
    hold = [
        prepare(fake_real(LaunchConfig(*s), 20 + i, a.like_kernel), f"R{s[0]}L{s[1]}")
        for i, s in enumerate(held_shapes)
    ]
    base = load_profile("h200-stock")
    before = evaluate(base, train + hold)
    res = fit_profile(base, train, budget=a.budget, log=lambda m: print(m, file=sys.stderr))
    after = evaluate(res.profile, train + hold)
    rows = []
    for tr in train + hold:
        b, f = before[tr.name], after[tr.name]
        rows.append(
            {
                "shape": tr.name,
                "set": "fit" if tr in train else "held out",
                "real_makespan_ns": tr.makespan,
                "before_makespan_err": b.makespan_err,
                "before_start_err_median": b.start_err_median,
                "after_makespan_err": f.makespan_err,
                "after_start_err_median": f.start_err_median,
                "after_start_err_p90": f.start_err_p90,
            }
        )
    head = ("shape", "set", "makespan", "ms err stock", "ms err fit", "start stock", "start fit")
    print("{:8} {:9} {:>10} {:>13} {:>11} {:>12} {:>10}".format(*head))
    for r in rows:
        print(
            f"{r['shape']:8} {r['set']:9} {r['real_makespan_ns'] / 1e3:8.2f}us "
            f"{100 * r['before_makespan_err']:12.1f}% {100 * r['after_makespan_err']:10.1f}% "
            f"{100 * r['before_start_err_median']:11.2f}% "
            f"{100 * r['after_start_err_median']:9.2f}%"
        )
    print(
        f"{res.launches} launches, fit {res.seconds:.0f} s, total {time.perf_counter() - t0:.0f} s"
    )
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(
                {"rows": rows, "launches": res.launches, "fit_seconds": res.seconds}, fh, indent=1
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
