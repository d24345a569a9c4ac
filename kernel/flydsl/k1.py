"""Our FlyDSL K1 ``kda_pre``: one launch of 256 CTAs x 512 threads, written from the
seed's documentation (shared/seed/kda_pre.txt), compiled compile-only for gfx942 and
gfx950.

Roles, regions, indices, tags, batched polls and publish follow the protocol model
(:mod:`kda_sim.protocol`): attn CTAs 0..55 (slice, gate, mix), gemv CTAs 56..252 (two
16-row groups, rg0's weights issued before the XRDY poll), kda tasks i = (req 12 + h)
8 + ch on CTA (i + kda0) mod 256. Mailbox pairs live in ``scratch`` at the model's
:class:`~kda_sim.protocol.space.CellSpace` offsets (pair = two dwords). The tag is
``step_tag(epoch, slot) = (epoch % 2**22) * 256 + slot + 1`` in int32, epoch read from
device memory. The gemv is MFMA as the seed's; the numerics are the seed's and the
reference's (``k1_kda``); what differs from the seed is listed with its reason in
kernel/flydsl/README.md. Nothing here has run on AMD hardware.

``build_k1`` traces and compiles one shape; the (stage, region, kind) of every put /
poll / publish traced is returned with the build.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import flydsl.compiler as flyc
import flydsl.expr as fx
from flydsl._mlir.dialects import arith
from flydsl._mlir.extras import types as T
from flydsl.compiler.kernel_function import CompilationContext

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl import health as health_layout
from kda_kernel.flydsl.build import Built, compile_isa
from kda_kernel.flydsl.k1_attn import stage_gate, stage_mix, stage_slice
from kda_kernel.flydsl.k1_ctx import Ctx, Record, Recorder
from kda_kernel.flydsl.k1_gemv import gemv_role
from kda_kernel.flydsl.k1_kda import kda_task
from kda_kernel.flydsl.k1_lds import STAMPS, lds_layout, refusal, x_window
from kda_kernel.flydsl.stamps import (
    CTA_ID,
    END,
    RECORD,
    TASKS_RUN,
    StampLayout,
    launch_record,
    tasks_per_cta,
)
from kda_sim.isa.analyze import KTRACE_NAMES_SUFFIX
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BLOCKS,
    EPOCH_BITS,
    GEMV0,
    N_GEMV,
    NA,
    TAG_SLOTS,
    THREADS,
    WAVE_LANES,
)
from kda_sim.protocol.space import CellSpace

NO_STREAM = fx.Stream(None)  # compile-only: no stream is ever used
POINTERS = tuple(name for name, cls in K1_ARGS if cls != "scalar")
LDS_TYPES = {"x": fx.Int32, STAMPS: fx.Int64}  # the other arrays hold f32


@dataclass(frozen=True)
class K1Build:
    cfg: LaunchConfig
    built: Built
    records: tuple[Record, ...]
    layout: StampLayout
    # FlyDSL's @jit launcher: (K1_ARGS' pointers and scalars in order) on a ROCm GPU
    launcher: Callable[..., None]
    bounded: bool = False  # the bounded-wait (health / alarm) debug build
    delta: bool = False  # the prefix + delta build
    ktrace: bool = False  # the ktrace build: FlyDSL ktrace events at each stage, poll, put
    # the ktrace build's name table (event name -> id), also written beside the ISA
    # (``<isa>.ktrace.json``, where ``kda-sim isa`` reads it); empty without ktrace
    ktrace_names: dict[str, int] = field(default_factory=dict)


def step_tag(epoch: fx.Int32, slot: fx.Int32) -> fx.Int32:
    """(epoch % 2**22) * 256 + slot + 1: ``%`` on a signed Int32 is arith.remsi."""
    return (epoch % (1 << EPOCH_BITS)) * TAG_SLOTS + slot + 1


def _flush(c: Ctx, layout: StampLayout) -> None:
    """Every stamp to row ``bid`` of the global [BLOCKS, width] int64 tensor, once."""
    ptr = c.lds["stamps"]
    for lo in fx.range_constexpr(0, layout.width, THREADS):
        col = c.tid + lo

        def one(col: fx.Int32 = col) -> None:
            v = fx.ptr_load(ptr + col)
            lo32 = fx.Int32(arith.trunci(T.i32(), dsl.ir_of(v)))
            hi32 = fx.Int32(arith.trunci(T.i32(), dsl.ir_of(v >> 32)))
            words = fx.Vector.from_elements([lo32, hi32], fx.Int32)
            dsl.store(words, c.rs["stamps"], (c.bid * layout.width + col) * 2)

        dsl.when(col < layout.width, one)


def make_kernel(
    cfg: LaunchConfig,
    *,
    timeline: bool,
    markers: bool,
    recorder: Recorder,
    bounded: bool = False,
    has_delta: bool = False,
    x_rows: int | None = None,
    ktrace: bool = False,
):
    """``x_rows``: token rows of x the gemv holds in LDS at once (``k1_lds.x_window``;
    all S when None)."""
    space = CellSpace.of(cfg)
    layout = StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks))
    lds_at = lds_layout(cfg, layout.width if timeline else 0, x_rows)
    name = f"k1_kda_pre_R{cfg.R}_L{cfg.L}_nb{cfg.nb}_k{cfg.kda0}" + "".join(
        tail for on, tail in ((timeline, "_tl"), (bounded, "_bw"), (has_delta, "_d"),
                              (cfg.gate_local, "_gl"), (ktrace, "_kt")) if on
    )  # fmt: skip

    @flyc.kernel(name=name)
    def k1(
        prefix: fx.Pointer,
        blocks: fx.Pointer,
        ares_nw: fx.Pointer,
        ares_qk: fx.Pointer,
        in_nw: fx.Pointer,
        w_in: fx.Pointer,
        w_fb: fx.Pointer,
        conv_w: fx.Pointer,
        conv_state: fx.Pointer,
        a_log: fx.Pointer,
        dt_bias: fx.Pointer,
        on_w: fx.Pointer,
        rstate: fx.Pointer,
        core_out: fx.Pointer,
        xbuf: fx.Pointer,
        scratch: fx.Pointer,
        epoch: fx.Pointer,
        stamps: fx.Pointer,
        slot: fx.Int32,
        st_idx: fx.Pointer,
        num_acc: fx.Pointer,
        delta: fx.Pointer,
        health: fx.Pointer,
        alarm: fx.Int32,
    ):
        args = dict(zip(POINTERS, (prefix, blocks, ares_nw, ares_qk, in_nw, w_in, w_fb, conv_w,
                                   conv_state, a_log, dt_bias, on_w, rstate, core_out, xbuf,
                                   scratch, epoch, stamps, st_idx, num_acc, delta, health),
                        strict=True))  # fmt: skip
        tid = fx.Int32(fx.thread_idx.x)
        bid = fx.Int32(fx.block_idx.x)
        # one block, the roles' arrays aliased (k1_lds: the seed's per-role union)
        block = dsl.lds_block(fx.gpu.SharedAllocator(), lds_at.total)
        lds = {k: dsl.lds_view(block, LDS_TYPES.get(k, fx.Float32), at)
               for k, at in lds_at.offsets.items()}  # fmt: skip
        rs = {k: dsl.rsrc(p) for k, p in args.items()}
        tag = step_tag(dsl.uniform(dsl.load(rs["epoch"], 0)), slot)
        c = Ctx(cfg, space, layout, tid, tid % WAVE_LANES, tid // WAVE_LANES, bid, rs, lds, tag,
                recorder, timeline, markers, has_delta, ktrace=ktrace)  # fmt: skip
        if fx.const_expr(bounded):
            c.bound = dsl.Bound(rs["health"], health_layout.ABORT, alarm)
        if fx.const_expr(timeline):
            for lo in fx.range_constexpr(0, layout.width, THREADS):
                dsl.when(
                    tid + lo < layout.width,
                    lambda lo=lo: fx.ptr_store(fx.Int64(0), lds["stamps"] + (tid + lo)),
                )
            dsl.barrier()
            c.stamp(layout.role("start"))
        dsl.when(bid < NA, lambda: _attn(c, bid))
        dsl.when((bid >= GEMV0) & (bid < GEMV0 + N_GEMV), lambda: gemv_role(c, bid, x_rows))
        # the kda arrays alias the attn / gemv ones: every wave past the role's last access
        dsl.barrier()
        first = (bid - cfg.kda0 + cfg.blocks) % cfg.blocks
        mine = (cfg.n_tasks - first + cfg.blocks - 1) // cfg.blocks
        for n in range(mine):
            kda_task(c, first + n * cfg.blocks, n)
        if fx.const_expr(timeline):
            c.stamp(END)

            def ids() -> None:
                fx.ptr_store(fx.Int64(arith.extsi(T.i64(), dsl.ir_of(bid))), lds["stamps"] + CTA_ID)
                fx.ptr_store(
                    fx.Int64(arith.extsi(T.i64(), dsl.ir_of(mine))), lds["stamps"] + TASKS_RUN
                )
                # constants of the build, in every CTA's own row: a row of another launch
                # (another L or nb, whose stamps are the same times) is refused row by row
                for col, value in zip(RECORD, launch_record(cfg), strict=True):
                    fx.ptr_store(fx.Int64(value), lds["stamps"] + col)

            dsl.when(tid == 0, ids)
            dsl.barrier()
            _flush(c, layout)

    return k1, layout


def _attn(c: Ctx, a: fx.Int32) -> None:
    with c.stage("slice", c.layout.role("slice")):
        wn = stage_slice(c, a)

    def gate() -> None:
        with c.stage("gate"):
            stage_gate(c, a)

    if not c.cfg.gate_local:  # gate_local: the mix computes every token's weights
        dsl.when(a < c.cfg.S, gate)
    # every attn CTA stamps the gate point, as the twin (right after slice's without gate work)
    c.stamp(c.layout.role("gate"))
    with c.stage("mix", c.layout.role("mix")):
        stage_mix(c, a, wn)


def build_k1(
    cfg: LaunchConfig,
    arch: str,
    dump_dir: Path,
    *,
    timeline: bool = True,
    markers: bool = True,
    bounded: bool = False,
    delta: bool = False,
    ktrace: bool = False,
) -> K1Build:
    """Trace and compile K1 for ``cfg`` on ``arch`` (compile-only); its ISA and record.
    ``bounded``: the debug build whose every poll gives up after ``alarm`` ticks and
    writes a give-up record to ``health`` (:mod:`kda_kernel.flydsl.health`); ``delta``:
    the prefix + delta build (the slice adds ``delta`` to the prefix, rounds to bf16 and
    writes the prefix back); without, ``delta`` is never read; ``ktrace``: FlyDSL's ktrace
    events at every stage, poll and put site (:class:`~kda_kernel.flydsl.k1_ctx.Ctx`
    says which), with FlyDSL's trace buffer as the kernel's last argument. The ``ktrace``
    compile hint is given either way, so ``FLYDSL_KTRACE_ENABLE`` does not change a build."""
    if cfg.blocks != BLOCKS:
        raise ValueError(f"K1 is one CTA a CU: blocks must be {BLOCKS}")
    if cfg.kda_tickets or cfg.gemv_tickets:  # never a static kernel for a ticket launch
        raise ValueError("the FlyDSL K1 builds the static placement only (no ticket counter)")
    cfg.validate()
    layout = StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks))
    stamp_width = layout.width if timeline else 0
    why = refusal(cfg, arch, stamp_width)
    if why is not None:
        raise ValueError(why)
    recorder = Recorder()
    kernel, layout = make_kernel(
        cfg, timeline=timeline, markers=markers, recorder=recorder, bounded=bounded,
        has_delta=delta, x_rows=x_window(cfg, arch, stamp_width), ktrace=ktrace,
    )  # fmt: skip

    @flyc.jit
    def launch(
        prefix: fx.Pointer, blocks: fx.Pointer, ares_nw: fx.Pointer, ares_qk: fx.Pointer,
        in_nw: fx.Pointer, w_in: fx.Pointer, w_fb: fx.Pointer, conv_w: fx.Pointer,
        conv_state: fx.Pointer, a_log: fx.Pointer, dt_bias: fx.Pointer, on_w: fx.Pointer,
        rstate: fx.Pointer, core_out: fx.Pointer, xbuf: fx.Pointer, scratch: fx.Pointer,
        epoch: fx.Pointer, stamps: fx.Pointer, slot: fx.Int32, st_idx: fx.Pointer,
        num_acc: fx.Pointer, delta: fx.Pointer, health: fx.Pointer, alarm: fx.Int32,
        stream: fx.Stream = NO_STREAM,
    ):  # fmt: skip
        kernel(prefix, blocks, ares_nw, ares_qk, in_nw, w_in, w_fb, conv_w, conv_state, a_log,
               dt_bias, on_w, rstate, core_out, xbuf, scratch, epoch, stamps,
               slot, st_idx, num_acc, delta, health, alarm).launch(
                   grid=(BLOCKS, 1, 1), block=(THREADS, 1, 1), stream=stream)  # fmt: skip

    def run() -> None:
        # null pointers and zero scalars are compile placeholders: nothing runs
        ptrs = iter([flyc.from_c_void_p(fx.Int32, 0) for _ in POINTERS])
        launch(*[0 if cls == "scalar" else next(ptrs) for _, cls in K1_ARGS])

    with CompilationContext.compile_hints({"ktrace": ktrace}):
        built = compile_isa(run, arch, dump_dir)
    names: dict[str, int] = {}
    if ktrace:
        names = _ktrace_names(launch)
        table = built.isa.with_name(built.isa.name + KTRACE_NAMES_SUFFIX)
        table.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
    return K1Build(
        cfg, built, tuple(recorder.records), layout, launch, bounded, delta, ktrace, names
    )


def _ktrace_names(launch: object) -> dict[str, int]:
    """The event name table FlyDSL compiled into the launcher's last build (the
    ``fly_ktrace.event_names`` module attribute it keeps on the artifact)."""
    last = getattr(launch, "_last_compiled", None)
    names = getattr(last[1], "_ktrace_names", None) if last else None
    if not names:
        raise RuntimeError("FlyDSL kept no ktrace name table for the ktrace build")
    return dict(names)
