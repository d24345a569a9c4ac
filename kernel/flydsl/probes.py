"""Small FlyDSL kernels written to test ``kda-sim isa``: each puts one protocol pattern
(a poll behind weight loads, a clear poll, a publish with / without its drain, a poll
loop the compiler deletes) in front of the analyzer, compiled for a real target.

Every probe takes the same four buffers: ``w`` (weights, loaded ``nt``), ``mb``
(mailbox pairs, coherent), ``out`` (plain results), ``flag`` (the published flag
pairs), and the launch's tag.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import flydsl.compiler as flyc
import flydsl.expr as fx

from kda_kernel.flydsl import dsl
from kda_kernel.flydsl.build import Built, compile_isa
from kda_sim.isa import presets

NO_STREAM = fx.Stream(None)  # compile-only: no stream is ever used
THREADS = 128  # two waves: a one-wave workgroup loses its s_barrier (LLVM drops it)
WEIGHT_LOADS = 3  # dwordx4 weight loads issued before the poll in poll_after_weights

PROBE_ARGS = presets.PROBE_ARGS  # the kernarg layout of every probe, for load classes


@flyc.kernel
def probe_poll_after_weights(
    w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, flag: fx.Pointer, tag: fx.Int32
):
    tid = fx.thread_idx.x
    rw, rm, ro = dsl.rsrc(w), dsl.rsrc(mb), dsl.rsrc(out)
    # issued first, used last: the gemv CTA's rg0 pattern
    ws = [dsl.load(rw, tid * 4 + 256 * i, width=4, aux=dsl.CM_NT) for i in range(WEIGHT_LOADS)]
    dsl.marker("poll probe MB")
    got = dsl.poll_pairs(rm, [tid], tag)
    for i in fx.range_constexpr(WEIGHT_LOADS):
        dsl.store(ws[i], ro, tid * 4 + 256 * i)
    dsl.store(got[0], ro, 1024 + tid)


@flyc.kernel
def probe_poll_clear(
    w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, flag: fx.Pointer, tag: fx.Int32
):
    tid = fx.thread_idx.x
    rw, rm, ro = dsl.rsrc(w), dsl.rsrc(mb), dsl.rsrc(out)
    dsl.marker("poll probe MB")
    got = dsl.poll_pairs(rm, [tid, tid + THREADS], tag)
    # weights only after the poll: nothing is in flight while it waits
    v = dsl.load(rw, tid * 4, width=4, aux=dsl.CM_NT)
    dsl.store(v, ro, tid * 4)
    dsl.store(got[0] + got[1], ro, 1024 + tid)


def _x_rows_then_flag(
    rw: object, ro: object, rf: object, tid: object, tag: object, drain: bool
) -> None:
    v = dsl.load(rw, tid * 4, width=4, aux=dsl.CM_NT)
    dsl.store(v, ro, tid * 4, aux=dsl.CM_DEV)  # the flagged data (x rows)
    if drain:
        dsl.drain_stores()
    dsl.barrier()
    dsl.marker("publish probe FLAG")
    dsl.when(tid == 0, lambda: dsl.put(rf, 0, 1, tag))


@flyc.kernel
def probe_publish_drained(
    w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, flag: fx.Pointer, tag: fx.Int32
):
    tid = fx.thread_idx.x
    _x_rows_then_flag(dsl.rsrc(w), dsl.rsrc(out), dsl.rsrc(flag), tid, tag, drain=True)


@flyc.kernel
def probe_publish_undrained(
    w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, flag: fx.Pointer, tag: fx.Int32
):
    tid = fx.thread_idx.x
    _x_rows_then_flag(dsl.rsrc(w), dsl.rsrc(out), dsl.rsrc(flag), tid, tag, drain=False)


@flyc.kernel
def probe_poll_deleted(
    w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, flag: fx.Pointer, tag: fx.Int32
):
    tid = fx.thread_idx.x
    ro = dsl.rsrc(out)
    dsl.marker("poll probe MB")
    # a plain pointer load, no s_sleep, no atomic: the loop has no side effect, and
    # FlyDSL's canonicalize pass deletes it (the marker stays)
    seen = fx.Int32(0)
    while seen != tag:
        seen = fx.ptr_load(mb + (tid * 2 + 1))
    dsl.store(seen, ro, tid)


@dataclass(frozen=True)
class Probe:
    name: str
    kernel: Callable[..., object]
    expect: str  # what the analyzer must say about it


PROBES: tuple[Probe, ...] = (
    Probe(
        "poll_after_weights",
        probe_poll_after_weights,
        f"one poll behind {WEIGHT_LOADS} weight loads",
    ),
    Probe("poll_clear", probe_poll_clear, "one poll, nothing outstanding"),
    Probe("publish_drained", probe_publish_drained, "a publish preceded by vmcnt(0) + s_barrier"),
    Probe(
        "publish_undrained", probe_publish_undrained, "a publish whose x store is still in flight"
    ),
    Probe("poll_deleted", probe_poll_deleted, "a poll marker with no poll loop after it"),
)


def _launcher(kernel: Callable[..., object]) -> Callable[..., None]:
    @flyc.jit
    def launch(
        w: fx.Pointer,
        mb: fx.Pointer,
        out: fx.Pointer,
        flag: fx.Pointer,
        tag: fx.Int32,
        stream: fx.Stream = NO_STREAM,
    ):
        kernel(w, mb, out, flag, tag).launch(grid=(1, 1, 1), block=(THREADS, 1, 1), stream=stream)

    return launch


def build_probe(name: str, arch: str, dump_dir: Path) -> Built:
    """Compile probe ``name`` for ``arch``; its final ISA lands under ``dump_dir``."""
    probe = next((p for p in PROBES if p.name == name), None)
    if probe is None:
        raise KeyError(f"no probe {name!r}; known: {', '.join(p.name for p in PROBES)}")
    launch = _launcher(probe.kernel)

    def run() -> None:
        # null pointers are compile placeholders: nothing is launched
        ptrs = [flyc.from_c_void_p(fx.Int32, 0) for _ in range(4)]
        launch(*ptrs, 1)

    return compile_isa(run, arch, dump_dir)
