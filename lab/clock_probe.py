"""What a trace stamp's clock read costs on the GPU: a chain of N dependent reads of
%globaltimer, and of %clock64, timed by globaltimer over the chain, with 1 CTA and with
264 (two an SM, as K1 runs). A read whose value the next instruction needs stalls the warp
for the read's latency: that, not the instruction count, is what a stamp adds to a path.
Usage: ``python -m lab.clock_probe --out FILE``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import torch
import triton
import triton.language as tl

from kda_kernel.triton.trace import environment

N = 4096
READS = {
    # each read waits for the previous one's value ($1), so the chain is serial
    "globaltimer": "{ .reg .u64 t; mov.u64 t, %globaltimer; add.u64 $0, t, $1; }",
    "clock64": "{ .reg .u64 t; mov.u64 t, %clock64; add.u64 $0, t, $1; }",
    "none": "{ .reg .u64 t; mov.u64 t, 7; add.u64 $0, t, $1; }",
}


@triton.jit
def _chain(out, N: tl.constexpr, ASM: tl.constexpr):
    t0 = tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )
    acc = t0 * 0
    for _ in range(N):
        acc = tl.inline_asm_elementwise(ASM, "=l,l", [acc], dtype=tl.int64, is_pure=False, pack=1)
    t1 = tl.inline_asm_elementwise(
        "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
    )
    pid = tl.program_id(0)
    tl.store(out + 2 * pid, t1 - t0)
    tl.store(out + 2 * pid + 1, acc)


def ns_per_read(kind: str, ctas: int) -> float:
    out = torch.zeros(2 * ctas, dtype=torch.int64, device="cuda")
    for _ in range(3):  # the first launch compiles; keep the last
        _chain[(ctas,)](out, N=N, ASM=READS[kind], num_warps=8)
    torch.cuda.synchronize()
    return float(out[0::2].double().median()) / N


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True, help="the result JSON")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("clock_probe: needs a CUDA GPU", file=sys.stderr)
        return 2
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    rows = []
    for kind in READS:
        for ctas in (1, 2 * sms):
            rows.append({"clock": kind, "ctas": ctas, "ns_per_read": ns_per_read(kind, ctas)})
            print(json.dumps(rows[-1]), flush=True)
    a.out.parent.mkdir(parents=True, exist_ok=True)
    a.out.write_text(json.dumps({"env": environment(), "n": N, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
