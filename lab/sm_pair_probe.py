"""Two CTAs on one SM running the same loop: does the one dispatched first end first?

In the H200 traces of the Triton K1 the later of two gemv CTAs on an SM (the higher CTA
number) ends gemv1 1.8 to 2.3 us after the earlier at S >= 4, on 99 to 100 % of the SMs
(``lab.gemv_order``; docs/calibration.md, "The earlier of two gemv CTAs on an SM"). This
probe runs one loop on every CTA of a grid of two an SM, and of one an SM as the lone
baseline, and stamps each CTA's start and end (globaltimer) and its SM:

* ``fma``: registers only, ``ITERS`` rounds of 16 dependent-free FMAs a thread: is the
  order in the SM's issue of two CTAs' warps alone enough?
* ``stream``: the gemv's shape of work: each CTA streams its own ``KIB`` KiB of weights
  from HBM in 16 KiB chunks and does ``S`` FMAs on each element (S tokens).

256 threads a CTA (8 warps), as the K1's. Per SM of two CTAs, the later (higher program
id) less the earlier: end, duration and start; and each one's duration against the lone
CTAs' median.

Usage, on the GPU: ``python -m lab.sm_pair_probe --out FILE [--launches 4]``; read back
here with ``python -m lab.sm_pair_probe --report FILE``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import numpy as np
import triton
import triton.language as tl

from kda_kernel.triton.machine import _now, _smid
from lab.gpu_jobs import probe_main

NUM_WARPS = 8
CHUNK = 4096  # fp32 elements a chunk: 16 KiB
_CHUNK = tl.constexpr(CHUNK)  # the kernel's own copy (a global must be a constexpr there)
ITERS = 1500  # fma: rounds of the loop
KIB = 512  # stream: KiB a CTA
TOKENS = (1, 4, 16)  # stream: FMAs an element


@triton.jit
def pair_probe(stamps, weights, ITERS: tl.constexpr, CHUNKS: tl.constexpr, S: tl.constexpr):
    pid = tl.program_id(0)
    t0 = _now(False)
    sm = _smid(False)
    offs = tl.arange(0, _CHUNK)
    acc = tl.zeros([_CHUNK], tl.float32) + pid.to(tl.float32)
    if CHUNKS == 0:  # fma: registers only
        for _ in range(ITERS):
            acc = acc * 0.9999 + 0.5
    else:  # stream: this CTA's slice of weights, S FMAs an element
        base = weights + pid.to(tl.int64) * (CHUNKS * _CHUNK)
        for c in range(CHUNKS):
            w = tl.load(base + c * _CHUNK + offs)
            for s in tl.static_range(S):
                acc = acc * w + (s + 1)
    t1 = _now(False)
    k = tl.arange(0, 4)
    keep = tl.sum(acc, 0).to(tl.int64)  # stored, so the loop is not dropped
    rec = tl.where(k == 0, t0, tl.where(k == 1, t1, tl.where(k == 2, sm.to(tl.int64), keep)))
    tl.store(stamps + pid * 4 + k, rec)


def _experiments() -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"mode": "fma", "iters": ITERS, "S": 1}]
    out += [{"mode": "stream", "kib": KIB, "S": s} for s in TOKENS]
    return out


def _run(a: argparse.Namespace) -> dict[str, Any]:
    import torch

    units = torch.cuda.get_device_properties(0).multi_processor_count
    chunks = KIB * 1024 // (4 * CHUNK)
    weights = torch.rand(2 * units * chunks * CHUNK, device="cuda") * 0.01 + 0.995
    rows = []
    for e in _experiments():
        for per_sm in (1, 2):
            grid = per_sm * units
            stamps = torch.zeros(grid * 4, dtype=torch.int64, device="cuda")
            kch = chunks if e["mode"] == "stream" else 0
            launches = []
            for i in range(a.launches + 1):  # the first compiles and warms
                stamps.zero_()
                pair_probe[(grid,)](
                    stamps, weights, ITERS=e.get("iters", 1), CHUNKS=kch, S=e["S"],
                    num_warps=NUM_WARPS,
                )  # fmt: skip
                torch.cuda.synchronize()
                if i:
                    launches.append(stamps.view(grid, 4)[:, :3].cpu().tolist())
            rows.append({**e, "per_sm": per_sm, "grid": grid, "launches": launches})
            print(f"{e} x{per_sm}: done", flush=True)
    return {"units": units, "rows": rows}


def summarize(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per experiment: the lone CTAs' median duration; per SM of two, later less earlier
    (end, duration, start) and each one's duration over the lone median."""
    lone: dict[tuple, float] = {}
    out = []
    for r in doc["rows"]:
        key = (r["mode"], r["S"])
        durs, later, first, d_end, d_start = [], [], [], [], []
        for st in r["launches"]:
            s = np.asarray(st, dtype=float)  # [grid, (t0, t1, sm)]
            if r["per_sm"] == 1:
                durs += (s[:, 1] - s[:, 0]).tolist()
                continue
            by_sm: dict[int, list[int]] = {}
            for pid, sm in enumerate(s[:, 2].astype(int)):
                by_sm.setdefault(sm, []).append(pid)
            for pids in by_sm.values():
                if len(pids) != 2:
                    continue
                a, b = sorted(pids)
                first.append(s[a, 1] - s[a, 0])
                later.append(s[b, 1] - s[b, 0])
                d_end.append(s[b, 1] - s[a, 1])
                d_start.append(s[b, 0] - s[a, 0])
        if r["per_sm"] == 1:
            lone[key] = float(np.median(durs))
            continue
        base = lone.get(key, float("nan"))
        p10, p90 = np.percentile(d_end, [10, 90])
        out.append(
            {
                "mode": r["mode"],
                "S": r["S"],
                "lone_ns": round(base),
                "first_x": round(float(np.median(first)) / base, 3),
                "later_x": round(float(np.median(later)) / base, 3),
                "end_diff_ns": [round(p10), round(float(np.median(d_end))), round(p90)],
                "start_diff_ns": round(float(np.median(d_start))),
                "later_ends_later": round(float(np.mean(np.asarray(d_end) > 0)), 3),
                "pairs": len(d_end),
            }
        )
    return out


def report(doc: dict[str, Any]) -> str:
    head = (
        "| loop | S | lone CTA (us) | earlier of two / lone | later of two / lone | "
        "later's end less earlier's, ns: median (p10..p90) | start, ns | later ends later "
        "| pairs |\n|---|---|---|---|---|---|---|---|---|"
    )
    lines = [head]
    for r in summarize(doc):
        p10, med, p90 = r["end_diff_ns"]
        lines.append(
            f"| {r['mode']} | {r['S']} | {r['lone_ns'] / 1e3:.1f} | {r['first_x']:.3f} | "
            f"{r['later_x']:.3f} | {med:+d} ({p10:+d}..{p90:+d}) | {r['start_diff_ns']:+d} | "
            f"{r['later_ends_later']:.0%} | {r['pairs']} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, name="sm_pair_probe", doc=__doc__, run=_run, report=report)


if __name__ == "__main__":
    sys.exit(main())
