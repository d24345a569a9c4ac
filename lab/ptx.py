"""A lab kernel's PTX for sm_90, compiled here without a GPU: what the probes' tests read
to check that a kernel issues the loads, stores, polls and back-off it claims to time."""

from __future__ import annotations

from typing import Any


def sm90_ptx(kernel: Any, sig: dict[str, str], constexprs: dict[str, Any]) -> str:
    """``kernel`` (a ``triton.jit`` function) compiled for sm_90 with 8 warps and the
    probes' 128-register cap; ``sig`` its runtime arguments' types, ``constexprs`` its
    compile-time ones (every argument named once: a missing or stray one is an error)."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    full = sig | {k: "constexpr" for k in constexprs}
    if set(full) != set(kernel.arg_names):
        raise ValueError(f"{kernel.fn.__name__}: arguments {sorted(full)} != {kernel.arg_names}")
    return triton.compile(
        ASTSource(kernel, full, constexprs),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": 8, "maxnreg": 128},
    ).asm["ptx"]
