"""The traced Triton K1 (sm_90, compiled here without a GPU) computes nothing of its trace
record before the role branch.

A record word set in the entry block had the compiler read the thread index there once
and derive every role's layout terms from it, live through the whole kernel: the traced
build ran several % slower with no stamp in it (the H200 lab log's benchmarks of the
trace record, indexed in docs/measurements.md). This reads the compiler's LLVM IR, so an
edit that brings it back fails.
"""

from __future__ import annotations

from functools import cache

import pytest

pytest.importorskip("triton")

from kda_kernel.triton.launch import Build

TID = "llvm.nvvm.read.ptx.sreg.tid.x"


@cache
def _llir(trace: bool) -> str:
    from kda_kernel.triton.offline import compile_k1

    return compile_k1(Build.default(1, 1, 8, trace=trace)).asm["llir"]


def _entry_block(ir: str) -> str:
    """The kernel's first basic block: from its definition to the first branch."""
    body = ir[ir.index("define ") :]
    return body[: body.index("\n  br ")]


@pytest.mark.parametrize("trace", [False, True])
def test_no_thread_index_before_the_role_branch(trace: bool) -> None:
    entry = _entry_block(_llir(trace))
    assert "icmp" in entry, "the entry block should end in the role test"
    assert TID not in entry, "the thread index is read before the role branch"


def test_traced_build_stamps_the_clock() -> None:
    # the control: the traced build does read the clock (it is not the untraced one)
    assert "globaltimer" in _llir(True)
    assert "globaltimer" in _entry_block(_llir(True))  # the start time, a scalar
