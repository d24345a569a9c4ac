"""Compile the Triton K1 for sm_90 without a GPU and read its resources (registers,
shared memory, local memory) with the cuobjdump that Triton's wheel carries.

Lets the two-CTAs-an-SM budget be checked on a CPU machine before any device time is
spent; the GPU run measures the same numbers again from the loaded kernel.
Usage: ``python -m kernel.offline L [watchdog=1] [trace=1] ...``
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

import torch

from kernel.inputs import Shape, make_inputs
from kernel.launch import NUM_WARPS, Build, Workspace, kernel_args

_T = {torch.bfloat16: "*bf16", torch.float32: "*fp32", torch.int64: "*i64",
      torch.int32: "*i32"}


def compile_sm90(b: Build) -> dict[str, Any]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kernel.triton_k1 import kda_pre_k1

    sh = Shape(b.R, b.L, b.nb)
    inp = make_inputs(sh, seed=0)
    ws = Workspace.create([b], "cpu")
    core = torch.zeros(sh.S, 1536, dtype=torch.bfloat16)
    args, cx = kernel_args(b, inp, core, ws, 0)
    pos = [n for n in kda_pre_k1.arg_names if n not in cx]
    sig: dict[str, str] = {}
    for n, a in zip(pos, args, strict=True):
        if isinstance(a, torch.Tensor):
            sig[n] = _T[a.dtype]
        elif isinstance(a, float):
            sig[n] = "fp32"
        else:
            sig[n] = "i64" if abs(a) >= 2**31 else "i32"
    for n in cx:
        sig[n] = "constexpr"
    opts: dict[str, Any] = {"num_warps": NUM_WARPS}
    if b.maxnreg:
        opts["maxnreg"] = b.maxnreg
    t = time.perf_counter()
    c = triton.compile(ASTSource(kda_pre_k1, sig, cx), target=GPUTarget("cuda", 90, 32),
                       options=opts)
    secs = time.perf_counter() - t
    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(c.asm["cubin"])
        path = f.name
    tool = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump")
    out = subprocess.run([tool, "-res-usage", path], capture_output=True, text=True,
                         check=True).stdout
    os.unlink(path)
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", out)
    assert m, out
    return {
        "regs": int(m.group(1)), "stack": int(m.group(2)), "static_shared": int(m.group(3)),
        "local": int(m.group(4)), "dynamic_shared": int(c.metadata.shared),
        "num_warps": int(c.metadata.num_warps), "compile_s": round(secs, 1),
    }


if __name__ == "__main__":
    L = int(sys.argv[1])
    kw = {k: int(v) for k, v in (a.split("=") for a in sys.argv[2:])}
    print(compile_sm90(Build(1, L, 8, **kw)))
