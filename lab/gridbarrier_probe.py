"""The example kernel ``gridbarrier`` as a real Triton kernel, stamped: traces of a second
kernel for ``kda-sim compare`` and ``kda-sim calibrate`` (issue 38).

The protocol is ``kda_sim/kernels/examples/gridbarrier.py``'s default (unbroken) form:
each of ``ctas`` programs (one CTA a program, at most one an SM so that every CTA is
resident: more than the GPU's SMs is refused before any launch) works, adds 1 to the
arrival counter (``tl.atomic_add``, acq_rel, GPU scope) and waits until the counter
reaches ``(r + 1) * ctas`` for ``rounds`` rounds, then works once more. The counter is
never reset within a launch (zeroed by the host before each).

* a work: a load of the CTA's own ``--nbytes`` of a buffer (a slice of its own for each
  work, so it comes from memory, not the registers) added into a register tile of 1024
  fp32 (4 a thread), then ``--work-iters`` rounds of an FMA on each of the tile's
  elements, then the tile's sum across the CTA (so the work's end stamp comes after its
  loads and FMAs, not while they are in flight); the sums are stored once at the end so
  no work is dropped;
* the wait: ``tl.atomic_add(counter, 0, sem="acquire")`` re-issued as soon as it returns
  until it reads the target (MEASURED.md's poll), its tries counted; bounded: after
  ``--max-tries`` tries it gives up, counts that in its record and goes on (never a hang;
  the launch's traces are refused then).

Every CTA keeps its stamps (``%globaltimer``: each stage's begin and end, the add's
return value, the wait's first issue, satisfied time and tries, its ``%smid``) in
registers and stores them once at the end, in ``lab.gridbarrier_trace``'s layout.

Each configuration (``--ctas`` x ``--rounds``) compiles, launches once (the first after
the compile, reported apart) and then ``--launches`` times; all launches' stamps go to
``--out``. ``python -m lab.gridbarrier_trace RUN.json --dir DIR`` writes them as traces.

Usage, on the GPU: ``python -m lab.gridbarrier_probe --out FILE [--ctas 8,66,132]
[--rounds 2,4] [--launches 4] [--work-iters 512] [--nbytes 32768]``; read back here
with ``python -m lab.gridbarrier_probe --report FILE``.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

import triton
import triton.language as tl

from kda_kernel.triton.machine import _now, _smid
from lab import gridbarrier_trace as gt
from lab.gpu_jobs import probe_main

NUM_WARPS = 8  # 256 threads a CTA, the example kernel's
TILE = 1024  # fp32 a work's tile and a load's chunk (4 KiB)
DEFAULT_CTAS = (8, 66, 132)  # the configurations a run launches
DEFAULT_ROUNDS = (2, 4)
WORK_ITERS = 512
NBYTES = 32768
MAX_TRIES = 1 << 22  # about 1.5 s of 335 ns tries: far past any wait of a resident grid
# the record's layout (lab.gridbarrier_trace), as the kernel's constants
_TILE = tl.constexpr(TILE)
_SMID, _GAVE_UP = tl.constexpr(gt.SMID), tl.constexpr(gt.GAVE_UP)
_HEAD, _WORK, _BAR = tl.constexpr(gt.HEAD), tl.constexpr(gt.WORK), tl.constexpr(gt.BAR)
_B_OLD, _B_FIRST = tl.constexpr(gt.B_OLD), tl.constexpr(gt.B_FIRST)
_B_SAT, _B_TRIES, _B_END = tl.constexpr(gt.B_SAT), tl.constexpr(gt.B_TRIES), tl.constexpr(gt.B_END)


@triton.jit
def _put(rec, k, slot, v):
    return tl.where(k == slot, v.to(tl.int64), rec)


@triton.jit
def _stamp(clock, INTERP: tl.constexpr):
    """globaltimer on the GPU; under the interpreter (no clock to read) a ticket of one
    counter every program's stamps share, which orders them as they happened."""
    if INTERP:
        t = tl.atomic_add(clock, 1, sem="relaxed", scope="gpu").to(tl.int64) + 1
    else:
        t = _now(False)
    return t


@triton.jit
def _work(acc, buf, ITERS: tl.constexpr, CHUNKS: tl.constexpr):
    """CHUNKS tiles of ``buf`` added to the tile, then ITERS FMAs on each of its elements
    (each on the loaded values), then the tile's sum across the CTA: its shared-memory
    barrier waits for every warp's FMAs, so the stamp after it is the work's end (a load
    whose value is used only later would still be in flight at a stamp)."""
    offs = tl.arange(0, _TILE)
    for c in range(CHUNKS):
        acc += tl.load(buf + c * _TILE + offs)
    for _ in range(ITERS):
        acc = acc * 0.9999 + 0.5
    return acc, tl.sum(acc, 0)


@triton.jit(do_not_specialize=["max_tries"])
def gridbarrier_kernel(
    counter,
    buf,
    stamps,
    sink,
    clock,
    max_tries,
    CTAS: tl.constexpr,
    ROUNDS: tl.constexpr,
    ITERS: tl.constexpr,
    CHUNKS: tl.constexpr,
    SLOTS: tl.constexpr,
    INTERP: tl.constexpr,
):
    pid = tl.program_id(0)
    n = CTAS  # the grid, a constant: each configuration compiles, its first launch after
    k = tl.arange(0, SLOTS)
    rec = tl.zeros([SLOTS], tl.int64)
    rec = _put(rec, k, _SMID, _smid(INTERP))
    acc = tl.zeros([_TILE], tl.float32) + pid.to(tl.float32)
    gave_up = pid * 0
    kept = tl.zeros([], tl.float32)  # the works' sums, stored: no work is dropped
    # a loop, not unrolled: every round runs the same code (unrolled over 5 rounds, the
    # H100's rounds 2.. ran 2.3x the first two's work)
    for r in range(ROUNDS + 1):
        # work r reads its own slice: (CTA, work) -> CHUNKS tiles
        mine = buf + (pid.to(tl.int64) * (ROUNDS + 1) + r) * (CHUNKS * _TILE)
        w = _HEAD + _WORK * r
        rec = _put(rec, k, w, _stamp(clock, INTERP))
        acc, total = _work(acc, mine, ITERS, CHUNKS)
        kept += total
        rec = _put(rec, k, w + 1, _stamp(clock, INTERP))
        if r < ROUNDS:
            b = _HEAD + _WORK * (ROUNDS + 1) + _BAR * r
            target = (r + 1) * n
            rec = _put(rec, k, b, _stamp(clock, INTERP))
            old = tl.atomic_add(counter, 1, sem="acq_rel", scope="gpu")
            rec = _put(rec, k, b + _B_OLD, old)
            rec = _put(rec, k, b + _B_FIRST, _stamp(clock, INTERP))
            seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
            tries = 1
            while (seen < target) & (tries < max_tries):
                seen = tl.atomic_add(counter, 0, sem="acquire", scope="gpu")
                tries += 1
            rec = _put(rec, k, b + _B_SAT, _stamp(clock, INTERP))
            gave_up += (seen < target).to(tl.int32)
            rec = _put(rec, k, b + _B_TRIES, tries)
            rec = _put(rec, k, b + _B_END, _stamp(clock, INTERP))
    rec = _put(rec, k, _GAVE_UP, gave_up)
    tl.store(stamps + pid * SLOTS + k, rec)
    tl.store(sink + pid, kept)


def _bad_args(a: argparse.Namespace) -> str | None:
    if not a.ctas or not a.rounds or min(a.ctas) < 1 or min(a.rounds) < 1:
        return "--ctas and --rounds: lists of counts of at least 1"
    if a.work_iters < 0 or a.nbytes < 0 or a.nbytes % (4 * TILE):
        return f"--work-iters >= 0; --nbytes >= 0, a multiple of {4 * TILE} (a tile of fp32)"
    if a.max_tries < 1:
        return "--max-tries at least 1"
    return None


def _counts(text: str) -> list[int]:
    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated counts") from None


def _add_args(ap: argparse.ArgumentParser) -> None:
    ap.add_argument("--ctas", type=_counts, default=list(DEFAULT_CTAS), help="CTAs a launch")
    ap.add_argument("--rounds", type=_counts, default=list(DEFAULT_ROUNDS), help="barriers")
    ap.add_argument("--work-iters", type=int, default=WORK_ITERS, help="FMA rounds a work")
    ap.add_argument("--nbytes", type=int, default=NBYTES, help="bytes a CTA loads a work")
    ap.add_argument("--max-tries", type=int, default=MAX_TRIES, help="a wait gives up after")


def launch(
    counter: Any,
    buf: Any,
    stamps: Any,
    sink: Any,
    clock: Any,
    ctas: int,
    rounds: int,
    iters: int,
    chunks: int,
    max_tries: int,
    interp: bool = False,
) -> Any:
    """One launch of ``ctas`` programs (the counter zeroed first); the compiled kernel
    (its registers and spills), None under the interpreter."""
    counter.zero_()
    stamps.zero_()
    args = (counter, buf, stamps, sink, clock, max_tries)
    cx = {
        "CTAS": ctas,
        "ROUNDS": rounds,
        "ITERS": iters,
        "CHUNKS": chunks,
        "SLOTS": gt.record_slots(rounds),
        "INTERP": interp,
    }
    if interp:  # one thread a program, so a program's spin lets the others run
        from kda_kernel.triton.interp import run_threaded

        run_threaded(gridbarrier_kernel, ctas, *args, timeout_s=120.0, **cx)
        return None
    return gridbarrier_kernel[(ctas,)](*args, num_warps=NUM_WARPS, **cx)


def interp_run(ctas: int, rounds: int, iters: int, nbytes: int) -> dict[str, Any]:
    """One launch under Triton's interpreter on the CPU (``TRITON_INTERPRET=1`` set before
    triton is imported; a thread a program, ``kda_kernel.triton.interp``): the counter
    after it and every CTA's record (stamps: the shared ticket clock of ``_stamp``)."""
    import torch

    chunks = nbytes // (4 * TILE)
    buf = torch.rand(max(1, ctas * (rounds + 1) * chunks * TILE))
    counter = torch.zeros(1, dtype=torch.int32)
    clock = torch.zeros(1, dtype=torch.int32)
    sink = torch.zeros(ctas, dtype=torch.float32)
    stamps = torch.zeros(ctas * gt.record_slots(rounds), dtype=torch.int64)
    launch(counter, buf, stamps, sink, clock, ctas, rounds, iters, chunks, 1000, interp=True)
    words = gt.record_words(rounds)
    return {"counter": int(counter.item()), "stamps": stamps.view(ctas, -1)[:, :words].tolist()}


def _run(a: argparse.Namespace) -> dict[str, Any]:
    import torch

    from kda_sim.errors import InvalidInput

    sms = torch.cuda.get_device_properties(0).multi_processor_count
    if max(a.ctas) > sms:
        # a CTA that is not resident never arrives: the others would spin to the bound
        raise InvalidInput(
            f"--ctas {max(a.ctas)}: more than the GPU's {sms} SMs (one CTA an SM, all resident)",
            what="ctas",
        )
    chunks = a.nbytes // (4 * TILE)
    words = max(1, max(a.ctas) * (max(a.rounds) + 1) * chunks * TILE)
    buf = torch.rand(words, device="cuda")
    counter = torch.zeros(1, dtype=torch.int32, device="cuda")
    sink = torch.zeros(max(a.ctas), dtype=torch.float32, device="cuda")
    clock = torch.zeros(1, dtype=torch.int32, device="cuda")  # the interpreter's alone
    rows = []
    for r in a.rounds:
        for c in a.ctas:
            words_a_cta = gt.record_words(r)
            stamps = torch.zeros(c * gt.record_slots(r), dtype=torch.int64, device="cuda")
            got = []
            for _ in range(a.launches + 1):  # the first after the compile, then the rest
                k = launch(
                    counter, buf, stamps, sink, clock, c, r, a.work_iters, chunks, a.max_tries
                )
                torch.cuda.synchronize()
                got.append(stamps.view(c, -1)[:, :words_a_cta].cpu().tolist())
            if int(counter.item()) != c * r:
                print(f"ctas {c} rounds {r}: counter {int(counter.item())}", flush=True)
            gave_up = sum(row[gt.GAVE_UP] for st in got for row in st)
            rows.append(
                {
                    "ctas": c,
                    "rounds": r,
                    "counter": int(counter.item()),
                    "gave_up": gave_up,
                    # the build: a spill would make the work's cost the spill's
                    "regs": getattr(k, "n_regs", None),
                    "spills": getattr(k, "n_spills", None),
                    "compile_launch": got[0],
                    "launches": got[1:],
                }
            )
            print(f"ctas {c} rounds {r}: done, waits given up {gave_up}", flush=True)
    return {
        "work_iters": a.work_iters,
        "nbytes": a.nbytes,
        "max_tries": a.max_tries,
        "rows": rows,
    }


def main(argv: list[str] | None = None) -> int:
    return probe_main(
        argv,
        name="gridbarrier_probe",
        doc=__doc__,
        run=_run,
        report=gt.report,
        add_args=_add_args,
        bad_args=_bad_args,
        rounds=False,
    )


if __name__ == "__main__":
    sys.exit(main())
