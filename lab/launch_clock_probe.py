"""The SM clock a launch runs at, launch after launch, after the GPU has sat idle.

In run 94 the first of a shape's eight traced launches takes k.recur (arithmetic) 1.6 to
1.7 times the later ones at 1 x 1 and 2 x 2, and each bundled trace, a shape's first
launch after its kernel was compiled, takes it as that first one does
(docs/calibration.md, "The earlier of two gemv CTAs on an SM"). Whether the GPU's clock
is what differs: every CTA (two an SM) stamps ``%clock64`` and ``%globaltimer`` around a
register-only loop (``fma``), or around a stream of 1 MiB a CTA from HBM (``stream``: the
memory's clock, which the SM's does not show, as the launch's bytes a ns); a launch's SM
clock is the CTAs' median cycles per ns. Each round sits idle for 0, 2 or 10 s (the
first also compiles the kernel), then launches ``--launches`` times back to back.

Usage, on the GPU: ``python -m lab.launch_clock_probe --out FILE [--launches 8]``; read back
here with ``python -m lab.launch_clock_probe --report FILE``.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import numpy as np
import triton
import triton.language as tl

from kda_kernel.triton.machine import _now
from lab.gpu_jobs import probe_main

NUM_WARPS = 8
ITERS = 4000  # a launch of about 0.1 ms at full clock
IDLE_S = (0.0, 2.0, 10.0)  # rounds: the first compiles; then idle this long first
CHUNK = 4096  # stream: fp32 elements a load (16 KiB a CTA)
CHUNKS = 64  # stream: 1 MiB a CTA
_CHUNK = tl.constexpr(CHUNK)  # the kernel's own copy (a global must be a constexpr there)


@triton.jit
def launch_clock_probe(stamps, weights, ITERS: tl.constexpr, CHUNKS: tl.constexpr):
    pid = tl.program_id(0)
    c0 = tl.inline_asm_elementwise(
        "mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )
    t0 = _now(False)
    acc = tl.zeros([_CHUNK], tl.float32) + pid.to(tl.float32)
    if CHUNKS == 0:
        for _ in range(ITERS):
            acc = acc * 0.9999 + 0.5
    else:
        base = weights + pid.to(tl.int64) * (CHUNKS * _CHUNK)
        offs = tl.arange(0, _CHUNK)
        for c in range(CHUNKS):
            acc += tl.load(base + c * _CHUNK + offs)
    t1 = _now(False)
    c1 = tl.inline_asm_elementwise(
        "mov.u64 $0, %clock64;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )
    k = tl.arange(0, 8)
    keep = tl.sum(acc, 0).to(tl.int64)  # stored, so the loop is not dropped
    rec = tl.where(k == 0, c0, tl.where(k == 1, c1, tl.where(k == 2, t0, t1)))
    rec = tl.where(k == 4, keep, rec)
    tl.store(stamps + pid * 8 + k, rec)


def _run(a: argparse.Namespace) -> dict[str, Any]:
    import torch

    units = torch.cuda.get_device_properties(0).multi_processor_count
    grid = 2 * units
    stamps = torch.zeros(grid * 8, dtype=torch.int64, device="cuda")
    weights = torch.rand(grid * CHUNKS * CHUNK, device="cuda")
    rounds = []
    for loop, idle in [(lp, i) for lp in ("fma", "stream") for i in IDLE_S]:
        time.sleep(idle)
        launches = []
        chunks = CHUNKS if loop == "stream" else 0
        for _ in range(a.launches):
            t = time.perf_counter()
            launch_clock_probe[(grid,)](
                stamps, weights, ITERS=ITERS, CHUNKS=chunks, num_warps=NUM_WARPS
            )
            torch.cuda.synchronize()
            host = time.perf_counter() - t
            s = stamps.view(grid, 8)[:, :4].cpu().numpy().astype(float)
            mhz = (s[:, 1] - s[:, 0]) / (s[:, 3] - s[:, 2]) * 1e3
            launches.append(
                {
                    "mhz_median": float(np.median(mhz)),
                    "mhz_p10": float(np.percentile(mhz, 10)),
                    "mhz_p90": float(np.percentile(mhz, 90)),
                    "span_ns": float(s[:, 3].max() - s[:, 2].min()),
                    "host_s": host,
                }
            )
        rounds.append({"loop": loop, "idle_s": idle, "launches": launches})
        print(f"{loop}, idle {idle} s: done", flush=True)
    return {
        "units": units,
        "iters": ITERS,
        "stream_bytes": grid * CHUNKS * CHUNK * 4,
        "rounds": rounds,
    }


def report(doc: dict[str, Any]) -> str:
    head = (
        "| loop | idle before (s) | launch | SM clock, MHz: median (p10..p90) | span (us) | GB/s |"
    )
    lines = [head, "|---|---|---|---|---|---|"]
    for r in doc["rounds"]:
        loop = r.get("loop", "fma")
        idle = f"{r['idle_s']:g}" if r["idle_s"] or loop != "fma" else "0 (compiles first)"
        for i, la in enumerate(r["launches"]):
            clock = f"{la['mhz_median']:.0f} ({la['mhz_p10']:.0f}..{la['mhz_p90']:.0f})"
            span = la["span_ns"] / 1e3
            rate = f"{doc['stream_bytes'] / la['span_ns']:.0f}" if loop == "stream" else "-"
            first = f"{loop} | {idle}" if not i else " | "
            lines.append(f"| {first} | {i} | {clock} | {span:.1f} | {rate} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return probe_main(argv, name="launch_clock_probe", doc=__doc__, run=_run, report=report)


if __name__ == "__main__":
    sys.exit(main())
