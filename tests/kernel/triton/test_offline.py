"""Reading a ``cuobjdump -sass`` listing: one instruction a line that holds its offset,
not the line under it that holds the rest of its encoding."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

from kda_kernel.triton.offline import sass_instructions

LISTING = """
        code for sm_90
                Function : kda_pre_k1
        .headerflags    @"EF_CUDA_SM90 EF_CUDA_VIRTUAL_SM(EF_CUDA_SM90)"
        /*0000*/                   LDC R1, c[0x0][0x28] ;          /* 0x00000a00ff017b82 */
          /* 0x000fe40000000800 */
        /*0010*/              @!P2 STL [R1+0x8], R57 ;          /* 0x000008390100a387 */
          /* 0x000fc00000000000 */
        /*28ff0*/                   NOP;          /* 0x0000000000007918 */
          /* 0x000fc00000000000 */
"""


def test_counts_instructions_not_encoding_lines() -> None:
    assert sass_instructions(LISTING) == 3


def test_an_empty_listing_has_none() -> None:
    assert sass_instructions("") == 0
