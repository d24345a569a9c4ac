"""Scalar helpers K1's stages share: bit casts, bf16 packing, butterflies, hardware
transcendental instructions (v_exp_f32 / v_rsq_f32 need no device library)."""

from __future__ import annotations

from collections.abc import Sequence

import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl._mlir.extras import types as T

from kda_kernel.flydsl.dsl import ir_of

LOG2E = 1.4426950408889634


def f32_of(bits: object) -> fx.Float32:
    """The f32 whose bits a mailbox value dword holds."""
    return fx.Float32(arith.bitcast(T.f32(), ir_of(bits)))


def bits_of(x: fx.Float32) -> fx.Int32:
    return fx.Int32(arith.bitcast(T.i32(), ir_of(x)))


def bf16_bits(x: fx.Float32) -> fx.Int32:
    """x rounded to bf16, nearest even (``arith.truncf``: the seed's ``.to(fx.BFloat16)``
    and the reference's ``bf16r``), in the low 16 bits of a dword (high bits zero)."""
    h = arith.bitcast(T.i16(), arith.truncf(T.bf16(), ir_of(x)))
    return fx.Int32(arith.extui(T.i32(), h))


def bf16r(x: fx.Float32) -> fx.Float32:
    """x rounded to bf16, nearest even, kept in f32: every hand-off between the original
    kernels is bf16 (the seed's rounding points, kernel/reference.py's)."""
    return f32_of(bf16_bits(x) << 16)


def bf_lo(word: object) -> fx.Float32:
    return f32_of(fx.Int32(ir_of(word)) << 16)


def bf_hi(word: object) -> fx.Float32:
    return f32_of(fx.Int32(ir_of(word)) & fx.Int32(-65536))


def bf_pack(a: fx.Float32, b: fx.Float32) -> fx.Int32:
    """Two f32 -> one word of two bf16 (nearest even, as ``bf16r``), a in the low half."""
    return bf16_bits(a) | (bf16_bits(b) << 16)


def exp2(x: fx.Float32) -> fx.Float32:
    return fx.Float32(fx.rocdl.exp2(T.f32(), ir_of(x)))


def rsq(x: fx.Float32) -> fx.Float32:
    return fx.Float32(fx.rocdl.rsq(T.f32(), ir_of(x)))


def sigmoid(x: fx.Float32) -> fx.Float32:
    return fx.Float32(1.0) / (fx.Float32(1.0) + exp2(x * fx.Float32(-LOG2E)))


def butterfly(x: fx.Float32, offsets: Sequence[int] = (16, 8, 4, 2, 1)) -> fx.Float32:
    """Sum over the lanes an xor of ``offsets`` reaches (32 lanes by default)."""
    for o in offsets:
        x = x + fx.Float32(fx.gpu.shuffle_xor(x, o, 64))
    return x


def butterfly_max(x: fx.Float32, offsets: Sequence[int] = (32, 16, 8, 4, 2, 1)) -> fx.Float32:
    for o in offsets:
        y = fx.Float32(fx.gpu.shuffle_xor(x, o, 64))
        x = (y > x).select(y, x)
    return x


def imin(a: object, b: object) -> fx.Int32:
    a, b = fx.Int32(ir_of(a)), fx.Int32(ir_of(b))
    return (a < b).select(a, b)


def imax(a: object, b: object) -> fx.Int32:
    a, b = fx.Int32(ir_of(a)), fx.Int32(ir_of(b))
    return (a > b).select(a, b)
