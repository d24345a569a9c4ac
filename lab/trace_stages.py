"""Where a traced build's extra time goes: the trace records of builds that record less
(``trace_level`` 1 all, 2 no poll records, 3 the header only, 4 polls without retries),
taken from the last launch
of a CUDA-graph step replayed as ``bench.kernel_bench`` replays it, and compared stage by
stage. A diagnostic for the tracing overhead (docs/kernel-h200.md).

Usage: ``python -m lab.trace_stages --shape 4x4 [--levels 1,2,3] [--samples 30]
[--out FILE]``. Level 3 records no stamps: only its launch span and CTA ends compare.
The records are read word by word here, not through kda_kernel.triton.trace.decode: the lighter
levels leave poll words unset, which the decoder (rightly) would take for times.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import torch

from bench.kernel_bench import fused_step, make_layers, make_sets
from kda_kernel.triton import trace_layout as T
from kda_kernel.triton.launch import Build, Workspace, compile_only
from kda_kernel.triton.trace import environment, role_of, widen
from kda_sim.kernels.k1.config import LaunchConfig as Shape


def _med(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def summarise(rec: np.ndarray, R: int, level: int) -> dict[str, float]:
    """Times (ns from the launch's first start) a launch's records say, one number each."""
    t0 = int(rec[:, T.EV_START].min())
    out: dict[str, float] = {"span": float(rec[:, T.EV_END].max() - t0)}
    roles = [role_of(c) for c in range(rec.shape[0])]
    for role in ("attn", "gemv"):
        ends = [float(rec[c, T.EV_END] - t0) for c in range(rec.shape[0]) if roles[c] == role]
        out[f"{role} cta end, median"] = _med(ends)
    if level == 3:
        return out
    names = {"attn": T.ATTN_STAGES, "gemv": T.GEMV_STAGES}
    for role, stages in names.items():
        ctas = [c for c in range(rec.shape[0]) if roles[c] == role]
        for k, name in enumerate(stages):
            ends = [float(rec[c, T.EV_ROLE + k] - t0) for c in ctas]
            out[f"{role} {name} end, median"] = _med(ends)
            out[f"{role} {name} end, last"] = max(ends)
    for n in range(T.max_tasks(R)):
        base = T.EV_TASK0 + n * T.TASK_STRIDE
        ctas = [c for c in range(rec.shape[0]) if rec[c, T.EV_NTASK] > n]
        for k, name in enumerate(T.KDA_STAGES):
            d = [float(rec[c, base + T.TASK_T + k + 1] - rec[c, base + T.TASK_T + k]) for c in ctas]
            out[f"task {n} {name} duration, median"] = _med(d)
        ends = [float(rec[c, base + T.TASK_T + T.N_TASK_T - 1] - t0) for c in ctas]
        out[f"task {n} end, median"] = _med(ends)
        out[f"task {n} end, last"] = max(ends)
    return out


def records(R: int, L: int, levels: list[int], samples: int) -> dict[int, list[np.ndarray]]:
    """``samples`` records a level, the levels alternating, each from a warm graph."""
    shape = Shape(R, L, 8)
    layers, cores = make_layers(shape, make_sets(shape))
    builds = {lv: Build.default(R, L, 8, trace=True, trace_level=lv).validate() for lv in levels}
    ws = Workspace.create(list(builds.values()), "cuda")
    graphs = {}
    for lv, b in builds.items():
        compile_only(b, layers[0], cores[0], ws)
        step = fused_step(b, ws, layers, cores)
        step()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            step()
        graphs[lv] = g
    out: dict[int, list[np.ndarray]] = {lv: [] for lv in levels}
    for _ in range(samples):
        for lv, g in graphs.items():
            for _ in range(5):  # steady state: the L2 as the benchmark's replays leave it
                g.replay()
            torch.cuda.synchronize()
            out[lv].append(widen(ws.trace.cpu().numpy(), R=R))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shape", default="4x4")
    ap.add_argument("--levels", default="1,2,3")
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    R, L = (int(v) for v in a.shape.split("x"))
    levels = [int(v) for v in a.levels.split(",")]
    recs = records(R, L, levels, a.samples)
    table: dict[str, dict[int, float]] = {}
    for lv in levels:
        sums = [summarise(r, R, lv) for r in recs[lv]]
        for key in sums[0]:
            table.setdefault(key, {})[lv] = _med([s[key] for s in sums])
    head = "".join(f"{'level ' + str(lv):>12}" for lv in levels)
    print(f"{R}x{L}, median of {a.samples} launches, ns from the launch's first start")
    print(f"{'':44}{head}")
    for key, row in table.items():
        print(f"{key:44}" + "".join(f"{row.get(lv, float('nan')):12.0f}" for lv in levels))
    if a.out:
        doc: dict[str, Any] = {
            "env": environment(),
            "R": R,
            "L": L,
            "samples": a.samples,
            "table": {k: {str(lv): v for lv, v in row.items()} for k, row in table.items()},
        }
        a.out.write_text(json.dumps(doc, indent=1))


if __name__ == "__main__":
    main()
