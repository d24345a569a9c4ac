"""The atomic probe compiles for sm_90 without a GPU, and each pattern's chain is the
instruction it claims to time (a relaxed GPU-scope add, or a relaxed GPU-scope load)."""

from __future__ import annotations

import pytest

triton = pytest.importorskip("triton")


def _ptx(own: bool, load: bool) -> str:
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from lab.atomic_probe import atomic_probe

    sig = {"words": "*i32", "stamps": "*i64", "active": "i32"}
    sig |= {"K": "constexpr", "OWN": "constexpr", "LOAD": "constexpr"}
    consts = {"K": 16, "OWN": own, "LOAD": load}
    src = ASTSource(atomic_probe, sig, consts)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": 8}).asm[
        "ptx"
    ]


def test_the_add_chain_is_relaxed_gpu_scope() -> None:
    ptx = _ptx(own=False, load=False)
    assert "atom.global.gpu.relaxed.add" in ptx
    assert ptx.count("%globaltimer") == 2


def test_the_load_chain_is_a_relaxed_gpu_load_and_no_atomic() -> None:
    ptx = _ptx(own=False, load=True)
    assert "ld.relaxed.gpu.global.b32" in ptx and "atom." not in ptx
