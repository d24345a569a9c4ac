"""Where the gemv role's time goes: the role alone against a plain stream of the same bytes.

In the fused K1 the 197 gemv CTAs stream the 90 MB in_proj weight at about 2.7 TB/s
(docs/kernel-h200.md). This probe times, on the GPU, one launch of

* ``gemv``: the K1's own gemv role (``kda_kernel.triton.gemv.gemv``, same code, same 256
  threads and 128-register cap) on 197 programs with XRDY already published, so nothing
  waits: the loop's own rate, without the attn and kda roles beside it;
* ``stream``: 197 programs that only load the same 458 KB each and sum them: what the
  machine gives to this many CTAs with this many bytes in flight.

Each is timed as the bench times the kernel: the median of ``triton.testing.do_bench`` over
a CUDA graph of 8 launches cycling over 4 weight sets (so L2 does not hold the weights).
``--whole`` adds the whole 90 MB weight streamed by 197 to 4224 programs and by torch's
own reduction: how fast the GPU reads it at all. ``--tma`` adds a lead for the gemv at
S = 1: 197 programs of the K1's 256 threads, each its two groups as the K1's gemv, the
weights brought on chip by the copy engine through a tensor descriptor (Triton pipelines
descriptor loads into shared memory, ``num_stages`` deep; it does not pipeline the plain
loads of the FMA form), one token's FMAs (``lab/hbm_ceiling.py`` found the copy engine
reading the K1's split about 3 us faster a launch than 256-thread loads).
Usage: ``python -m lab.kernel_gemv_probe [--out FILE] [--S 1,4] [--whole]``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

from bench.kernel_bench import bench_graph
from kda_kernel.triton.constexprs import EPOCH_MOD, TAG_SLOTS
from kda_kernel.triton.constexprs import HIDDEN as _HIDDEN  # the constexpr forms a kernel can read
from kda_kernel.triton.constexprs import NPROJ as NPROJ_C
from kda_kernel.triton.constexprs import ROWS as _ROWS
from kda_kernel.triton.gemv import gemv as _gemv
from kda_kernel.triton.launch import (
    NUM_WARPS,
    Build,
    Workspace,
    descriptor_scratch_from_torch,
    step_tag,
)
from kda_kernel.triton.trace import environment
from kda_sim.kernels.k1.constants import HIDDEN, N_GEMV, NPROJ, ROWS

SETS = 4
LAYERS = 8
GROUP_BYTES = ROWS * HIDDEN * 2  # one 16-row group of bf16 weights


@triton.jit
def tma_gemv_probe(w, xbuf, out, BK: tl.constexpr, NS: tl.constexpr, DEV: tl.constexpr):
    """Two 16-row groups a program, as a gemv CTA at S = 1, through the copy engine. ``w``
    is a descriptor made on the host, or with DEV the weight itself, described here (as
    the K1 does: a descriptor written to global memory and fenced at run time)."""
    if DEV:
        w_desc = tl.make_tensor_descriptor(
            w, shape=[NPROJ_C, _HIDDEN], strides=[_HIDDEN, 1], block_shape=[_ROWS, BK]
        )
    else:
        w_desc = w
    kk = tl.arange(0, BK)
    r = tl.arange(0, _ROWS)
    for grp in tl.static_range(2):
        row0 = (2 * tl.program_id(0) + grp) * _ROWS
        acc = tl.zeros([_ROWS, BK], tl.float32)
        for k in tl.range(0, _HIDDEN, BK, num_stages=NS):
            wt = w_desc.load([row0, k]).to(tl.float32)
            acc += wt * tl.load(xbuf + k + kk).to(tl.float32)[None, :]
        tl.store(out + row0 + r, tl.sum(acc, 1))


@triton.jit
def gemv_probe(
    w_in,
    xbuf,
    scratch,
    alarm,
    epoch,
    slot,
    S,
    OFF_XRDY,
    OFF_PROJ,
    BK: tl.constexpr,
    NSTAGE: tl.constexpr,
    FMA: tl.constexpr,
    PREFETCH: tl.constexpr,
    EARLY: tl.constexpr,
    TC_BK: tl.constexpr,
    TC_SPLIT: tl.constexpr,
    MAXS: tl.constexpr,
    FMA_MAX_S: tl.constexpr,
    FMA_BY_S: tl.constexpr,
    PF_DELAY: tl.constexpr,
    QUIET: tl.constexpr,
):
    g = tl.program_id(0)
    tag = (tl.load(epoch) % EPOCH_MOD) * TAG_SLOTS + slot + 1
    tr = tl.zeros([64], tl.int64)
    _gemv(
        g,
        tag,
        g * 0,
        tr,
        w_in,
        xbuf,
        scratch,
        alarm,
        1 << 40,
        1 << 20,
        0,
        -1,
        S,
        OFF_XRDY,
        OFF_PROJ,
        BK,
        NSTAGE,
        FMA,
        PREFETCH,
        EARLY,
        TC_BK,
        TC_SPLIT,
        MAXS,
        FMA_MAX_S,
        FMA_BY_S,
        PF_DELAY,
        False,
        False,
        False,
        0,
        QUIET,
    )


@triton.jit
def stream_probe(w, out, PER: tl.constexpr, BLOCK: tl.constexpr):
    """Each program sums its PER contiguous bf16 weights, BLOCK at a time."""
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], tl.float32)
    base = w + pid.to(tl.int64) * PER
    for i in range(0, PER, BLOCK):
        acc += tl.load(base + i + tl.arange(0, BLOCK), eviction_policy="evict_first").to(tl.float32)
    tl.store(out + pid, tl.sum(acc))


def probe_whole(programs: int, block: int, weights: list[torch.Tensor]) -> tuple[float, int]:
    """The whole in_proj weight (90 MB) streamed by ``programs`` programs: how fast this
    GPU reads it at all, whatever the roles (us a launch, bytes read)."""
    per = (NPROJ * HIDDEN // programs) // block * block
    out = torch.empty(programs, device="cuda")

    def step() -> None:
        for i in range(LAYERS):
            stream_probe[(programs,)](
                weights[i % SETS], out, PER=per, BLOCK=block, num_warps=NUM_WARPS, maxnreg=128
            )

    return bench_graph(step) * 1e3 / LAYERS, programs * per * 2


def probe_torch_sum(weights: list[torch.Tensor]) -> float:
    """torch's own reduction over the same 90 MB: a tuned library kernel as the yardstick."""
    w = [x[:NPROJ] for x in weights]

    def step() -> None:
        for i in range(LAYERS):
            w[i % SETS].sum(dtype=torch.float32)

    return bench_graph(step) * 1e3 / LAYERS


def probe_gemv(S: int, kw: dict[str, Any], weights: list[torch.Tensor]) -> float:
    b = Build.default(1, S, 8, **kw).validate()
    ws = Workspace.create([b], "cuda")
    ws.epoch.fill_(1)
    off = b.offsets()
    tag = step_tag(1, 0)
    ws.scratch[off["XRDY"] : off["XRDY"] + 56] = (tag << 32) | 1
    ws.xbuf.normal_()

    # the build's own constexprs, those the probe takes (a new switch needs no edit here)
    cx = {k: v for k, v in b.constexprs().items() if k in gemv_probe.arg_names}

    def step() -> None:
        for i in range(LAYERS):
            gemv_probe[(N_GEMV,)](
                weights[i % SETS],
                ws.xbuf,
                ws.scratch,
                ws.alarm,
                ws.epoch,
                0,
                S,
                off["XRDY"],
                off["PROJ"],
                **cx,
                num_warps=NUM_WARPS,
                maxnreg=b.maxnreg,
            )

    return bench_graph(step) * 1e3 / LAYERS


def probe_tma(bk: int, ns: int, weights: list[torch.Tensor], dev: bool = False) -> float:
    from triton.tools.tensor_descriptor import TensorDescriptor

    if dev:
        descriptor_scratch_from_torch()
        descs: list[Any] = [w[:NPROJ] for w in weights]
    else:
        descs = [TensorDescriptor.from_tensor(w, block_shape=[ROWS, bk]) for w in weights]
    x = torch.randn(HIDDEN, device="cuda").to(torch.bfloat16)
    out = torch.empty(NPROJ + ROWS, device="cuda")

    def step() -> None:
        for i in range(LAYERS):
            tma_gemv_probe[(N_GEMV,)](
                descs[i % SETS], x, out, BK=bk, NS=ns, DEV=dev, num_warps=NUM_WARPS, maxnreg=128
            )

    return bench_graph(step) * 1e3 / LAYERS


def probe_stream(block: int, weights: list[torch.Tensor]) -> float:
    per = 2 * GROUP_BYTES // 2  # elements: two groups a program, as a gemv CTA
    out = torch.empty(N_GEMV, device="cuda")

    def step() -> None:
        for i in range(LAYERS):
            stream_probe[(N_GEMV,)](
                weights[i % SETS], out, PER=per, BLOCK=block, num_warps=NUM_WARPS, maxnreg=128
            )

    return bench_graph(step) * 1e3 / LAYERS


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--S", default="1,4", help="tokens (the gemv form changes above 4)")
    ap.add_argument(
        "--whole", action="store_true", help="also the whole weight by 197 to 4224 programs"
    )
    ap.add_argument("--tma", action="store_true", help="also the copy engine's gemv at S = 1")
    ap.add_argument("--no-gemv", action="store_true", help="leave out the K1's own gemv")
    a = ap.parse_args()
    if not torch.cuda.is_available():
        print("kernel_gemv_probe: needs a CUDA GPU", file=sys.stderr)
        return 2
    # 16 spare rows: the stream's last program reads a whole second group, as the gemv's
    # last CTA would if its second group were not clamped
    weights = [
        torch.randn(NPROJ + ROWS, HIDDEN, device="cuda").to(torch.bfloat16) for _ in range(SETS)
    ]
    nbytes = N_GEMV * 2 * GROUP_BYTES
    rows: list[dict[str, Any]] = []

    def add(kind: str, form: Any, us: float, read: int = nbytes, programs: int = N_GEMV) -> None:
        row = {
            "kind": kind,
            "form": form,
            "us": us,
            "MB": read / 1e6,
            "TB_s": read / us / 1e6,
            "GB_s_a_cta": read / programs / us / 1e3,
        }
        rows.append(row)
        print(json.dumps(row), flush=True)

    for block in (2048, 8192):
        add("stream", {"block": block}, probe_stream(block, weights))
    if a.whole:
        for programs in (197, 264, 528, 1056, 4224):
            for block in (2048, 8192):
                us, read = probe_whole(programs, block, weights)
                add("whole", {"programs": programs, "block": block}, us, read, programs)
        add("torch_sum", {}, probe_torch_sum(weights), NPROJ * HIDDEN * 2, 1)
    if a.tma:
        for bk, ns in ((128, 4), (128, 8), (256, 3), (256, 4), (256, 6), (512, 3), (512, 4)):
            add("tma_gemv", {"S": 1, "BK": bk, "NS": ns}, probe_tma(bk, ns, weights))
        for bk, ns in ((512, 3), (512, 4)):  # the descriptor made on the device, as the K1
            add(
                "tma_gemv",
                {"S": 1, "BK": bk, "NS": ns, "dev": True},
                probe_tma(bk, ns, weights, dev=True),
            )
    for s in (int(v) for v in a.S.split(",") if not a.no_gemv):
        for kw in ({}, {"prefetch": True}, {"fma": False, "tc_bk": 256, "nstage": 5}):
            add("gemv", {"S": s} | kw, probe_gemv(s, kw, weights))
    if a.out:
        a.out.parent.mkdir(parents=True, exist_ok=True)
        a.out.write_text(
            json.dumps({"env": environment(), "bytes": nbytes, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
