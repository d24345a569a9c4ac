"""Compile the Triton K1 for sm_90 without a GPU and read its resources (registers,
shared memory, local memory) with the cuobjdump that Triton's wheel carries.

Lets the two-CTAs-an-SM budget be checked on a CPU machine before any device time is
spent; the GPU run measures the same numbers again from the loaded kernel.
Usage: ``python -m kda_kernel.triton.offline L [R=N] [watchdog=1] [trace=1] ... [dump=PREFIX]``
(``dump``: PREFIX.ttgir, .ptx and .sass beside the resources).
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

from kda_kernel.inputs import make_inputs
from kda_kernel.triton.launch import NUM_WARPS, Build, Workspace, kernel_args


def jit_signature(
    fn: Any, args: list[Any], cx: dict[str, Any]
) -> tuple[dict[str, str], dict[str, Any], dict[tuple[int, ...], Any]]:
    """Signature, constants and attributes as ``@triton.jit`` specialises them at a launch
    (16-byte aligned pointers and multiples of 16 marked divisible, ints equal to 1 made
    constants), so the offline PTX is the PTX the GPU runs: without the divisibility marks
    every load compiles to scalar accesses."""
    from triton._C.libtriton import native_specialize_impl
    from triton.backends.compiler import BaseBackend

    pos = [n for n in fn.arg_names if n not in cx]
    fixed = set(fn.do_not_specialize) | {
        fn.arg_names[i] for i in fn.do_not_specialize if isinstance(i, int)
    }
    sig: dict[str, str] = {}
    consts = dict(cx)
    attrs: dict[tuple[int, ...], Any] = {}
    for n, a in zip(pos, args, strict=True):
        ty, spec = native_specialize_impl(BaseBackend, a, False, n not in fixed, True)
        if ty == "constexpr":
            consts[n] = spec
        elif spec == "D":
            attrs[(fn.arg_names.index(n),)] = [["tt.divisibility", 16]]
        sig[n] = ty
    for n in consts:
        sig[n] = "constexpr"
    return sig, consts, attrs


def compile_k1(b: Build) -> Any:
    """The compiled kernel object (its ``asm`` holds ttgir, ptx and cubin)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kda_kernel.triton.k1 import kda_pre_k1

    sh = b.cfg
    inp = make_inputs(sh, seed=0)
    ws = Workspace.create([b], "cpu")
    core = torch.zeros(sh.S, 1536, dtype=torch.bfloat16)
    args, cx = kernel_args(b, inp, core, ws, 0)
    sig, consts, attrs = jit_signature(kda_pre_k1, args, cx)
    opts: dict[str, Any] = {"num_warps": NUM_WARPS}
    if b.maxnreg:
        opts["maxnreg"] = b.maxnreg
    return triton.compile(
        ASTSource(kda_pre_k1, sig, consts, attrs), target=GPUTarget("cuda", 90, 32), options=opts
    )


def sass_instructions(sass: str) -> int:
    """Instructions in a ``cuobjdump -sass`` listing (each line holds its /*offset*/)."""
    return len(re.findall(r"^\s+/\*[0-9a-f]{4,}\*/\s+\S", sass, re.M))


def cuobjdump(cubin: bytes, flag: str) -> str:
    """``cuobjdump FLAG`` (``-sass``, ``-res-usage``) of a cubin, by the wheel's tool."""
    import triton

    with tempfile.NamedTemporaryFile(suffix=".cubin", delete=False) as f:
        f.write(cubin)
        path = f.name
    tool = os.path.join(os.path.dirname(triton.__file__), "backends/nvidia/bin/cuobjdump")
    try:
        return subprocess.run([tool, flag, path], capture_output=True, text=True, check=True).stdout
    finally:
        os.unlink(path)


def compile_sm90(b: Build, dump: str | None = None) -> dict[str, Any]:
    """Compile and read the resources; with ``dump``, the compiler's stages beside them
    (``dump``.ttgir, .ptx, and .sass: what the SMs run, its loops' schedule), to read
    what a change did to the loads and fences."""
    t = time.perf_counter()
    c = compile_k1(b)
    secs = time.perf_counter() - t
    out = cuobjdump(c.asm["cubin"], "-res-usage")
    sass = cuobjdump(c.asm["cubin"], "-sass")
    if dump:
        for ext, text in (("ttgir", c.asm["ttgir"]), ("ptx", c.asm["ptx"]), ("sass", sass)):
            with open(f"{dump}.{ext}", "w") as f:
                f.write(text)
    m = re.search(r"REG:(\d+) STACK:(\d+) SHARED:(\d+) LOCAL:(\d+)", out)
    assert m, out
    return {
        "regs": int(m.group(1)),
        "stack": int(m.group(2)),
        "static_shared": int(m.group(3)),
        "local": int(m.group(4)),
        "dynamic_shared": int(c.metadata.shared),
        "num_warps": int(c.metadata.num_warps),
        # the code's length: the kernel runs once a CTA, so every instruction is a fetch
        "sass_instructions": sass_instructions(sass),
        "compile_s": round(secs, 1),
    }


if __name__ == "__main__":
    L = int(sys.argv[1])
    kw = {k: int(v) for k, v in (a.split("=") for a in sys.argv[2:]) if k != "dump"}
    dump = dict(a.split("=") for a in sys.argv[2:]).get("dump")
    R = kw.pop("R", 1)
    print(compile_sm90(Build.default(R, L, 8, **kw), dump))
