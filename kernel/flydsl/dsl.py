"""Small FlyDSL building blocks for mailbox kernels: buffer loads / stores with explicit
cache bits, a do-while poll, a one-thread ``when``, ISA markers, ``s_memrealtime``.

FlyDSL 0.5.0 ships no ``buffer_ops`` module (the seed imports one from elsewhere), and
its AST rewriter only turns ``if`` / ``while`` into ``scf`` ops inside the decorated
kernel itself: helpers called from it build their control flow here, on the ``scf``
dialect directly. Offsets are in dwords (as the seed's ``buffer_load``); the hardware
takes bytes.

Cache bits (gfx942 / gfx950 buffer ``aux``): bit 0 sc0, bit 1 nt, bit 4 sc1.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import flydsl.expr as fx
from flydsl._mlir import ir
from flydsl._mlir.dialects import arith, llvm, scf
from flydsl._mlir.extras import types as T

AUX_SC0 = 1
AUX_NT = 2
AUX_SC1 = 16
CM_NT = AUX_NT  # weights: streamed once, keep them out of the caches' way
# mailbox pairs and flagged rows: device (agent) scope, the seed's. LLVM's AMDGPU memory
# model for gfx942 / gfx950 (AMDGPUUsage, "GFX942" tables): a load or store with sc1 is
# agent scope (coherent across the XCDs' L2s), sc0 sc1 is system scope (coherent with
# the host and other devices too: more traffic than a one-GPU mailbox needs); sc0 alone
# is workgroup scope. kda_sim.isa.memops.scope reads the bits the same way.
CM_DEV = AUX_SC1
MARKER_PREFIX = "kda-sim:"  # what `kda-sim isa` looks for in the ISA's comments


def ir_of(v: object) -> ir.Value:
    """The MLIR value under a DSL value or a Python int."""
    if isinstance(v, int):
        return fx.Int32(v).ir_value()
    if isinstance(v, ir.Value):
        return v
    return v.ir_value()  # type: ignore[attr-defined]


def i32(v: object) -> fx.Int32:
    return fx.Int32(ir_of(v))


def rsrc(ptr: fx.Pointer) -> ir.Value:
    """A buffer resource over the whole of ``ptr``'s buffer (no bounds check)."""
    return fx.rocdl.get_buffer_rsrc(fx.rocdl.make_buffer_ptr(ptr))


def vec_type(width: int) -> ir.Type:
    return T.i32() if width == 1 else ir.VectorType.get([width], T.i32())


def load(rs: ir.Value, dword: object, width: int = 1, aux: int = 0) -> ir.Value:
    """``width`` dwords from dword offset ``dword`` (one buffer_load instruction)."""
    byte = ir_of(i32(dword) * 4)
    return fx.rocdl.raw_ptr_buffer_load(vec_type(width), rs, byte, ir_of(0), aux=aux)


def store(value: object, rs: ir.Value, dword: object, aux: int = 0) -> None:
    byte = ir_of(i32(dword) * 4)
    aux_attr = ir.IntegerAttr.get(T.i32(), aux)
    fx.rocdl.raw_ptr_buffer_store(ir_of(value), rs, byte, ir_of(0), aux=aux_attr)


def load_u16(rs: ir.Value, element: object) -> fx.Int32:
    """The 16-bit element ``element`` (a bf16's bits), zero-extended: one buffer_load_ushort."""
    byte = ir_of(i32(element) * 2)
    h = fx.rocdl.raw_ptr_buffer_load(T.i16(), rs, byte, ir_of(0), aux=0)
    return fx.Int32(arith.extui(T.i32(), h))


def store_u16(bits: object, rs: ir.Value, element: object) -> None:
    """The low 16 bits of ``bits`` to element ``element``: one buffer_store_short."""
    byte = ir_of(i32(element) * 2)
    h = arith.trunci(T.i16(), ir_of(bits))
    fx.rocdl.raw_ptr_buffer_store(h, rs, byte, ir_of(0), aux=ir.IntegerAttr.get(T.i32(), 0))


def uniform(v: object) -> fx.Int32:
    """A wave-uniform copy (``v_readfirstlane``): buffer resources and branches on it stay
    scalar."""
    return fx.Int32(fx.rocdl.readfirstlane(T.i32(), ir_of(v)))


def pair(value: object, tag: object) -> ir.Value:
    """A (value, tag) pair as one vector<2xi32>, stored by one dwordx2."""
    v = fx.Vector.from_elements([i32(value), i32(tag)], fx.Int32)
    return ir_of(v)


def element(vec: ir.Value, i: int) -> fx.Int32:
    return fx.Int32(llvm.extractelement(vec, ir_of(i)))


def marker(text: str) -> None:
    """An asm comment the analyzer reads back: side-effecting, so it stays in place
    (and, like any inline asm, orders the memory ops on either side of it)."""
    llvm.inline_asm(None, [], f"; {MARKER_PREFIX} {text}", "", has_side_effects=True)


def sleep(n: int = 1) -> None:
    fx.rocdl.s_sleep(n)


def realtime() -> fx.Int64:
    """``s_memrealtime``: the 100 MHz constant clock shared by every CU."""
    return fx.Int64(llvm.call_intrinsic(T.i64(), "llvm.amdgcn.s.memrealtime", [], [], []))


def wave_max(v: object) -> fx.Int32:
    """The largest (unsigned) of ``v`` over the wave's active lanes, the same in each:
    LLVM's ``wave.reduce.umax`` (a wave-uniform value, as a ktrace payload must be)."""
    strategy = ir_of(0)  # the default lowering: LLVM picks it
    return fx.Int32(
        llvm.call_intrinsic(T.i32(), "llvm.amdgcn.wave.reduce.umax", [ir_of(v), strategy], [], [])
    )


def barrier() -> None:
    fx.gpu.barrier()


def drain_stores() -> None:
    """Wait for every vector-memory op of this wave (stores count in vmcnt on gfx9)."""
    fx.rocdl.s_waitcnt(vmcnt=0)


def when(cond: object, body: Callable[[], None]) -> None:
    """``if cond: body()`` for helpers (the rewriter only sees kernel bodies)."""
    c = ir_of(cond) if not isinstance(cond, fx.Boolean) else cond.ir_value()
    op = scf.IfOp(c)
    with ir.InsertionPoint(op.then_block):
        body()
        scf.YieldOp([])


def poll_pairs(
    rs: ir.Value, cells: Sequence[object], tag: object, *, sleep_between: bool = True
) -> list[fx.Int32]:
    """Re-load every pair of ``cells`` together until every tag equals ``tag``; their
    values. The loads are issued as one batch a try (so one vmcnt wait covers them),
    with ``s_sleep 1`` between tries; the loads are agent scope (sc1), which also
    keeps the loop from being deleted when ``sleep_between`` is off."""
    return _poll_loop(rs, cells, tag, None, sleep_between).values


def counted_poll(rs: ir.Value, cells: Sequence[object], tag: object) -> Polled:
    """:func:`poll_pairs` that also counts the thread's retries (``Polled.retries``: a
    loop-carried counter, so only the builds that want it carry one)."""
    return _poll_loop(rs, cells, tag, None, True, count=True)


@dataclass(frozen=True)
class Bound:
    """What makes a poll give up (the bounded-wait build): after ``alarm`` ticks of
    ``s_memrealtime`` since its first try, or as soon as word ``abort`` of ``health``
    holds ``tag`` (another CTA of this launch gave up first)."""

    health: ir.Value  # buffer resource
    abort: int  # dword of the abort word
    alarm: object  # Int32 ticks


@dataclass(frozen=True)
class Polled:
    values: list[fx.Int32]
    tags: list[fx.Int32]  # as last loaded: a pair whose tag is not this launch's is stale
    released: fx.Boolean | None  # the abort word held the tag (bounded polls only)
    retries: fx.Int32 | None = None  # this thread's tries after the first (counted polls)


def bounded_poll(
    rs: ir.Value, cells: Sequence[object], tag: object, bound: Bound, *, count: bool = False
) -> Polled:
    """:func:`poll_pairs` that gives up after ``bound``: the values and tags as last
    loaded (a stale tag says it gave up) and whether it was released."""
    return _poll_loop(rs, cells, tag, bound, True, count)


def _poll_loop(
    rs: ir.Value,
    cells: Sequence[object],
    tag: object,
    bound: Bound | None,
    sleep_between: bool,
    count: bool = False,
) -> Polled:
    n = len(cells)
    extra = (1 if bound is not None else 0) + (1 if count else 0)
    types = [T.i32()] * (2 * n + extra)  # values, tags (, released) (, retries)
    t0 = realtime() if bound is not None else None
    inits = [ir_of(0)] if count else []  # the retry counter, carried through both regions
    while_op = scf.WhileOp(types, inits)
    before = while_op.regions[0].blocks.append(*([T.i32()] if count else []))
    after = while_op.regions[1].blocks.append(*types)
    with ir.InsertionPoint(before):
        got = [load(rs, i32(c) * 2, width=2, aux=CM_DEV) for c in cells]
        ok = fx.Boolean(True)
        for g in got:
            ok = ok & (element(g, 1) == i32(tag))
        carried = [ir_of(element(g, 0)) for g in got] + [ir_of(element(g, 1)) for g in got]
        go_on = ~ok
        if bound is not None:
            # the bound: the clock read and compared on every try (the ISA check looks
            # for it in each poll loop), and the abort word, agent scope as the pairs
            released = i32(load(bound.health, bound.abort, aux=CM_DEV)) == i32(tag)
            waited = realtime() - t0  # type: ignore[operator]
            late = waited > fx.Int64(arith.extsi(T.i64(), ir_of(bound.alarm)))
            go_on = go_on & ~released & ~late
            carried.append(ir_of(released.select(fx.Int32(1), fx.Int32(0))))
        if count:
            carried.append(before.arguments[0])
        scf.ConditionOp(ir_of(go_on), carried)
    with ir.InsertionPoint(after):
        if sleep_between:
            sleep(1)
        scf.YieldOp([ir_of(fx.Int32(after.arguments[len(types) - 1]) + 1)] if count else [])
    res = [fx.Int32(r) for r in while_op.results]
    rel = (res[2 * n] != 0) if bound is not None else None
    return Polled(res[:n], res[n : 2 * n], rel, res[-1] if count else None)


def atomic_cmpswap(rs: ir.Value, dword: object, cmp: object, new: object) -> fx.Int32:
    """Device-scope compare-and-swap of one dword; the value it held before."""
    byte = ir_of(i32(dword) * 4)
    aux = ir.IntegerAttr.get(T.i32(), CM_DEV)
    old = fx.rocdl.raw_ptr_buffer_atomic_cmpswap(
        T.i32(), ir_of(i32(new)), ir_of(i32(cmp)), rs, byte, ir_of(0), aux=aux
    )
    return fx.Int32(old)


def put(rs: ir.Value, cell: object, value: object, tag: object) -> None:
    """One device-scope 64-bit store of (value, tag)."""
    store(pair(value, tag), rs, i32(cell) * 2, aux=CM_DEV)


def lds_block(alloc: fx.gpu.SharedAllocator, nbytes: int) -> object:
    """One 16-byte aligned LDS block of ``nbytes``: arrays are views into it
    (:func:`lds_view`), so arrays of roles a CTA runs one after another can alias."""
    return alloc.allocate(max(nbytes, 16), alignment=16)._ptr  # FlyDSL 0.5 keeps it private


def lds_view(block: object, dtype: type, offset: int) -> fx.Pointer:
    """``dtype`` elements from byte ``offset`` (a multiple of 4) of ``block``, as a typed
    shared pointer."""
    assert offset % 4 == 0, offset
    words = fx.recast_iter(fx.Pointer[fx.Int32, fx.AddressSpace.Shared].ir_type, block)
    if offset:
        words = words + offset // 4
    return fx.recast_iter(fx.Pointer[dtype, fx.AddressSpace.Shared].ir_type, words)
