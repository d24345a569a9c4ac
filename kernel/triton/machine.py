"""Machine bits of the Triton K1: clocks, SM id, back-off and sleeps, L2 prefetch, the
stress build's warp jitter, bf16 rounding and the dot the interpreter can run.
"""

from __future__ import annotations

import triton
import triton.language as tl

from kda_kernel.triton.constexprs import BULK_ASM, BULK_ELEMS, HIDDEN, LINES_A_GROUP, ROWS


@triton.jit
def _now(INTERP: tl.constexpr, LO: tl.constexpr = False):
    """globaltimer in ns (32 ns steps on the H200), or with LO its low 32 bits alone (the
    trace record's stamps, kda_kernel.triton.trace.widen); 0 in the interpreter."""
    if INTERP:
        t = tl.full([], 0, tl.int32 if LO else tl.int64)
    elif LO:
        t = tl.inline_asm_elementwise(
            "mov.u32 $0, %globaltimer_lo;", "=r", [], dtype=tl.int32, is_pure=False, pack=1
        )
    else:
        t = tl.inline_asm_elementwise(
            "mov.u64 $0, %globaltimer;", "=l", [], dtype=tl.int64, is_pure=False, pack=1
        )
    return t


@triton.jit
def _stamp_now(WATCHDOG: tl.constexpr, INTERP: tl.constexpr):
    """A stamp for the trace record: the low half of globaltimer, one register live where
    the whole time took two; the whole time where the watchdog measures waits with it.

    The record keeps 32-bit words (the host widens them, ``trace.widen``): with 64-bit
    words the traced build runs +3.6 to +3.8 % over the untraced one at 4x4 on the H200,
    with 32-bit words +2.2 to +3.3 %, a median +2.7 % of ten paired launches (352
    instructions over the untraced build, not 488)."""
    return _now(INTERP, not WATCHDOG)


@triton.jit
def _smid(INTERP: tl.constexpr):
    if INTERP:
        s = tl.full([], -1, tl.int32)
    else:
        s = tl.inline_asm_elementwise(
            "mov.u32 $0, %smid;", "=r", [], dtype=tl.int32, is_pure=True, pack=1
        )
    return s


@triton.jit
def _backoff(SLEEP_NS: tl.constexpr, INTERP: tl.constexpr):
    # between tries, as the seed's s_sleep 1: keeps ~200 polling CTAs off the L2 a little
    if not INTERP:  # noqa: SIM102 (constexpr branches: Triton folds each on its own)
        if SLEEP_NS > 0:
            tl.inline_asm_elementwise(
                f"nanosleep.u32 {SLEEP_NS}; mov.u32 $0, 0;",
                "=r",
                [],
                dtype=tl.int32,
                is_pure=False,
                pack=1,
            )


@triton.jit
def _ask_l2(p, ASM: tl.constexpr):
    """One asm request a lane of p (no result): ASM names the address $1."""
    tl.inline_asm_elementwise(
        ASM + " mov.u32 $0, 0;", "=r,l", [p], dtype=tl.int32, is_pure=False, pack=1
    )


@triton.jit
def _prefetch_group(w_in, rg, INTERP: tl.constexpr):
    """Ask L2 for in_proj rows 16 rg .. (one 229 KB run), a ``prefetch.global.L2`` a line."""
    if not INTERP:
        ln = tl.minimum(tl.arange(0, 2048), LINES_A_GROUP - 1)
        _ask_l2(w_in + rg.to(tl.int64) * (ROWS * HIDDEN) + ln * 64, "prefetch.global.L2 [$1];")


@triton.jit
def _bulk_prefetch_group(w_in, rg, INTERP: tl.constexpr):
    """The same run handed to the copy engine: one ``cp.async.bulk.prefetch.L2`` of 896 B
    a thread (256 threads, one lane each), so the SM issues 256 requests, not 1792."""
    if not INTERP:
        ln = tl.arange(0, 256)
        _ask_l2(w_in + rg.to(tl.int64) * (ROWS * HIDDEN) + ln * BULK_ELEMS, BULK_ASM)


@triton.jit
def _warp_jitter(JITTER_NS: tl.constexpr, INTERP: tl.constexpr):
    """Warp w of the CTA sleeps about w * JITTER_NS ns (a stress build, Build.jitter_ns):
    warps that run in step hide a missing barrier between one warp's load and another's
    store; staggered, the later warps load after the earlier ones stored."""
    if not INTERP:  # noqa: SIM102 (constexpr branches: Triton folds each on its own)
        if JITTER_NS > 0:
            tl.inline_asm_elementwise(
                "{ .reg .u32 w; mov.u32 w, %tid.x; shr.u32 w, w, 5; "
                f"mul.lo.u32 w, w, {JITTER_NS}; nanosleep.u32 w; mov.u32 $0, 0; }}",
                "=r",
                [],
                dtype=tl.int32,
                is_pure=False,
                pack=1,
            )


@triton.jit
def _sleep_until(t_end, SLEEP_NS: tl.constexpr, INTERP: tl.constexpr):
    while _now(INTERP) < t_end:
        _backoff(SLEEP_NS, INTERP)


@triton.jit
def _bf16r(x):
    """Round fp32 to the nearest bf16 (ties to even), staying fp32. Integer arithmetic:
    the GPU's cast rounds, the interpreter's truncates; this is the same on both."""
    b = x.to(tl.int32, bitcast=True)
    b = (b + 0x7FFF + ((b >> 16) & 1)) & -65536
    return b.to(tl.float32, bitcast=True)


@triton.jit
def _dot(a, b, acc, INTERP: tl.constexpr):
    """bf16 x bf16 -> fp32 on the tensor cores; the interpreter's bf16 dot is wrong (numpy has
    no bf16), so there the exact bf16 values go through an fp32 dot instead."""
    if INTERP:
        acc = tl.dot(a.to(tl.float32), b.to(tl.float32), acc, input_precision="ieee")
    else:
        acc = tl.dot(a, b, acc)
    return acc


@triton.jit
def _to_bf16(x):
    return _bf16r(x).to(tl.bfloat16)


@triton.jit
def _value(w):
    """The fp32 value of a (value, tag) pair."""
    return (w & 0xFFFFFFFF).to(tl.int32).to(tl.float32, bitcast=True)


# public names for probes (bench/): the same jit functions
now = _now
smid = _smid
