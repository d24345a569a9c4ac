"""The 16x16 bf16 MFMA the gemv stages use, for the target being compiled: gfx950's
16x16x32 takes a lane's 8 bf16 (4 words) at once; gfx942's 16x16x16 takes 4, so a
32-wide K block is two of them (words 0..1, then 2..3: A and B split alike, so the sum
over K is the same).

Lane l: A row l % 16 (its k slice: 8 elements of lane group l / 16), B column l % 16,
D rows 4 (l / 16) + i, column l % 16."""

from __future__ import annotations

import os

import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import vector
from flydsl._mlir.extras import types as T

from kda_kernel.flydsl.dsl import ir_of


def _f32x4() -> ir.Type:
    return ir.VectorType.get([4], T.f32())


def zero_acc() -> ir.Value:
    return ir_of(fx.Vector.filled(4, 0.0, fx.Float32))


def mfma_bf16(a_words: object, b_words: object, acc: ir.Value) -> ir.Value:
    """acc + A B over one 32-wide K block; a_words / b_words: vector<4xi32> (8 bf16)."""
    a, b = ir_of(a_words), ir_of(b_words)
    arch = os.environ.get("FLYDSL_GPU_ARCH", "gfx942")
    if arch == "gfx950":
        bf8 = ir.VectorType.get([8], ir.BF16Type.get())
        return fx.rocdl.mfma_f32_16x16x32_bf16(
            _f32x4(), [vector.bitcast(bf8, a), vector.bitcast(bf8, b), acc, 0, 0, 0]
        )
    i16x4 = ir.VectorType.get([4], T.i16())
    i32x2 = ir.VectorType.get([2], T.i32())
    for half in (0, 1):
        ah = vector.bitcast(i16x4, vector.extract_strided_slice(i32x2, a, [2 * half], [2], [1]))
        bh = vector.bitcast(i16x4, vector.extract_strided_slice(i32x2, b, [2 * half], [2], [1]))
        acc = fx.rocdl.mfma_f32_16x16x16bf16_1k(_f32x4(), [ah, bh, acc, 0, 0, 0])
    return acc
