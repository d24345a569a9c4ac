"""The gemv probe's kernel calls the K1's own gemv role: it must compile against the
role's current signature (sm_90, here without a GPU). A change of ``_gemv``'s arguments
broke it once without any CPU test noticing."""

from __future__ import annotations

import pytest

pytest.importorskip("triton")


def test_probe_kernel_compiles_for_sm90() -> None:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kda_kernel.triton.launch import NUM_WARPS, Build
    from lab.kernel_gemv_probe import gemv_probe

    b = Build.default(1, 1, 8)
    cx = {k: v for k, v in b.constexprs().items() if k in gemv_probe.arg_names}
    ptrs = {"w_in": "*bf16", "xbuf": "*bf16", "scratch": "*i64", "alarm": "*i64", "epoch": "*i32"}
    ints = {n: "i32" for n in ("slot", "S", "OFF_XRDY", "OFF_PROJ")}
    sig = ptrs | ints | {k: "constexpr" for k in cx}
    assert set(sig) == set(gemv_probe.arg_names)
    c = triton.compile(
        ASTSource(gemv_probe, sig, cx),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": NUM_WARPS, "maxnreg": b.maxnreg},
    )
    assert "ld.relaxed.gpu.global.b64" in c.asm["ptx"]  # the XRDY poll is in it


def test_the_copy_engine_probe_pipelines_its_descriptor_loads() -> None:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from kda_kernel.triton.launch import NUM_WARPS
    from lab.kernel_gemv_probe import tma_gemv_probe

    sig = {"w": "tensordesc<bf16[16, 256]>", "xbuf": "*bf16", "out": "*fp32"}
    cx = {"BK": 256, "NS": 4, "DEV": False}
    c = triton.compile(
        ASTSource(tma_gemv_probe, sig | {k: "constexpr" for k in cx}, cx),
        target=GPUTarget("cuda", 90, 32),
        options={"num_warps": NUM_WARPS, "maxnreg": 128},
    )
    # one bulk tensor copy a stage in flight: the weights go through the copy engine
    assert c.asm["ptx"].count("cp.async.bulk.tensor") >= 4
