"""How fast the GPU reads the K1's 90 MB in_proj weight at all: the ceiling that the 1.3x
goal's argument leans on (docs/kernel-h200.md, "Against the goals").

Run 30 measured it with one Triton loop (``lab.kernel_gemv_probe --whole``: 3.72 TB/s at
best). This probe asks the machine instead, with the forms a tuned CUDA kernel would use
(``lab/hbm_read.cu``, built here with nvcc and called through ctypes on torch's stream):

* ``grid``: the whole grid strides over the buffer, 16-byte loads, 1 to 8 in flight a
  thread, three cache hints (plain, evict-first, non-coherent without an L1 line asking L2
  for 256-byte sectors), 132 to 2112 blocks of 256 to 1024 threads;
* ``chunked``: each block reads one contiguous range, as each of the K1's 197 gemv CTAs
  reads its own rows;
* ``bulk``: the copy engine (``cp.async.bulk`` into shared memory on an mbarrier), one
  issuing thread a block;
* torch's device copy (reads and writes the bytes) and ``sum``, as library yardsticks.

Each form is timed as the bench times the K1: the median of ``triton.testing.do_bench``
over a CUDA graph of ``LAYERS`` launches cycling over ``SETS`` copies of the weight (so the
L2 does not hold it), per launch. For the fastest forms, the span inside the kernel too
(first block's start to last block's end, ``%globaltimer``), which leaves out the launch.
Usage: ``python -m lab.hbm_ceiling --out FILE [--force] [--quick] [--kinds grid,bulk]``.
"""

from __future__ import annotations

import argparse
import ctypes
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.constants import HIDDEN, NPROJ

SOURCE = Path(__file__).with_name("hbm_read.cu")
W_BYTES = NPROJ * HIDDEN * 2  # the in_proj weight, bf16
LAYERS = 8
SETS = 4
HINTS = ("plain", "evict_first", "nc_no_l1_256B")
SPAN_LAUNCHES = 24
SPAN_TOP = 6


@dataclass(frozen=True)
class Form:
    kind: str  # grid | chunked | bulk | torch_copy | torch_sum
    blocks: int = 0
    threads: int = 0
    unroll: int = 0
    hint: int = 0
    chunk: int = 0
    stages: int = 0

    def label(self) -> str:
        if self.kind in ("grid", "chunked"):
            return f"{self.kind} {self.blocks}x{self.threads} u{self.unroll} {HINTS[self.hint]}"
        if self.kind == "bulk":
            return f"bulk {self.blocks} blocks, {self.chunk // 1024} KB x {self.stages}"
        return self.kind


@dataclass
class Row:
    form: Form
    us: float | None = None  # a launch, graph-timed
    read_TB_s: float | None = None  # bytes read / us
    span_us: float | None = None  # inside the kernel (fastest forms only)
    error: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


KINDS = ("grid", "chunked", "bulk", "torch_copy", "torch_sum")


def forms(quick: bool, kinds: tuple[str, ...] = KINDS) -> list[Form]:
    """Every form timed (of ``kinds``), the K1's own shape (197 blocks of 256 threads)
    among the chunked ones."""
    out: list[Form] = []
    blocks = (132, 264, 528, 1056, 2112)
    threads = (256, 512, 1024)
    unrolls = (1, 4, 8)
    if quick:
        blocks, threads, unrolls = (264, 1056), (512,), (4,)
    for hint in range(len(HINTS)):
        for u in unrolls:
            for t in threads:
                for b in blocks:
                    out.append(Form("grid", b, t, u, hint))
    for b in (197, 264, 528):
        for t in (256, 512):
            for u in (4, 8):
                for hint in (0, 2):
                    out.append(Form("chunked", b, t, u, hint))
    # the K1's own split (197 CTAs, each its two groups) with fewer loads in flight and
    # the evict-first hint, and 1024 threads
    for t in (256, 512, 1024):
        for u in (1, 2, 4):
            for hint in (0, 1):
                f = Form("chunked", 197, t, u, hint)
                if f not in out:
                    out.append(f)
    for b, chunk, stages in (
        (132, 32768, 4),
        (132, 32768, 6),
        (132, 16384, 8),
        (264, 16384, 4),
        (264, 32768, 3),
        (528, 16384, 3),
        (528, 8192, 6),
        (1056, 8192, 3),
        # the K1's split: 197 blocks, each its own 458 KB, two blocks fitting an SM
        (197, 32768, 3),
        (197, 16384, 6),
        (197, 16384, 4),
        (197, 8192, 8),
    ):
        out.append(Form("bulk", b, 32, 0, 0, chunk, stages))
    out += [Form("torch_copy"), Form("torch_sum")]
    return [f for f in out if f.kind in kinds]


def build(workdir: Path) -> ctypes.CDLL:
    """nvcc the probe for sm_90; a failure is said as InvalidInput with the compiler's words."""
    lib = workdir / "libhbm_read.so"
    cmd = [
        "nvcc",
        "-O3",
        "-shared",
        "-Xcompiler",
        "-fPIC",
        "-gencode",
        "arch=compute_90,code=sm_90",
        "-o",
        str(lib),
        str(SOURCE),
    ]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    except FileNotFoundError as e:
        raise InvalidInput("nvcc is not on PATH", where="this machine") from e
    if r.returncode:
        raise InvalidInput(f"nvcc failed:\n{r.stderr.strip()}", where=str(SOURCE))
    so = ctypes.CDLL(str(lib))
    for fn in (so.launch_read, so.launch_bulk):
        fn.restype = ctypes.c_int
    so.launch_read.argtypes = [ctypes.c_int] * 3 + [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    so.launch_bulk.argtypes = [
        ctypes.c_void_p,
        ctypes.c_size_t,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_int,
        ctypes.c_void_p,
        ctypes.c_void_p,
        ctypes.c_void_p,
    ]
    return so


def launcher(so: ctypes.CDLL, f: Form, sink: Any, err: Any) -> Callable[[Any, Any], None]:
    """One launch of ``f`` over a weight copy, on torch's current stream; ``span`` may be
    None. A launch the probe refuses, or a CUDA error, raises RuntimeError; a bulk wait
    that gave up raises ``err`` (checked by ``measure``)."""
    import torch

    def launch(w: Any, span: Any) -> None:
        s = torch.cuda.current_stream().cuda_stream
        sp = span.data_ptr() if span is not None else None
        if f.kind == "torch_copy":
            sink.copy_(w)
            return
        if f.kind == "torch_sum":
            w.sum(dtype=torch.float32)
            return
        if f.kind == "bulk":
            rc = so.launch_bulk(
                w.data_ptr(), W_BYTES, f.blocks, f.chunk, f.stages, err.data_ptr(), sp, s
            )
        else:
            rc = so.launch_read(
                f.unroll,
                f.hint,
                int(f.kind == "chunked"),
                w.data_ptr(),
                W_BYTES,
                f.blocks,
                f.threads,
                sink.data_ptr(),
                sp,
                s,
            )
        if rc:
            raise RuntimeError(f"launch returned {rc}")

    return launch


def time_launch(launch: Callable[[Any, Any], None], weights: list[Any]) -> float:
    """us a launch: LAYERS launches over the SETS copies, in one CUDA graph."""
    from bench.kernel_bench import bench_graph

    def step() -> None:
        for i in range(LAYERS):
            launch(weights[i % SETS], None)

    return bench_graph(step, n_rep_ms=200) * 1e3 / LAYERS


def span_us(launch: Callable[[Any, Any], None], weights: list[Any]) -> float:
    """Median, over launches one at a time, of the first block's start to the last one's end."""
    import torch

    span = torch.empty(2, dtype=torch.int64, device="cuda")
    got = []
    for i in range(SPAN_LAUNCHES):
        span[0] = -1  # all ones: the unsigned atomicMin's identity
        span[1] = 0
        launch(weights[i % SETS], span)
        torch.cuda.synchronize()
        t0, t1 = (int(v) % 2**64 for v in span.tolist())
        got.append((t1 - t0) / 1e3)
    return statistics.median(got)


def measure(rows: list[Row], so: ctypes.CDLL, progress: Any) -> None:
    import torch

    weights = [
        torch.randint(0, 2**15, (W_BYTES // 2,), dtype=torch.int16, device="cuda").view(
            torch.bfloat16
        )
        for _ in range(SETS)
    ]
    sink = torch.zeros(W_BYTES // 2, dtype=torch.bfloat16, device="cuda")
    err = torch.zeros(1, dtype=torch.int32, device="cuda")
    for row in progress(rows):
        try:
            row.us = time_launch(launcher(so, row.form, sink, err), weights)
            row.read_TB_s = W_BYTES / (row.us * 1e-6) / 1e12
        except RuntimeError as e:
            row.error = str(e)
        torch.cuda.synchronize()  # a sticky CUDA error surfaces here and ends the run
        if int(err.item()):
            row.us = row.read_TB_s = None
            row.error = "a bulk copy's wait gave up (200 ms)"
            err.zero_()
    timed = sorted(
        (r for r in rows if r.us and r.form.kind in ("grid", "chunked", "bulk")),
        key=lambda r: r.us or 0.0,
    )
    k1 = [r for r in timed if r.form.kind == "chunked" and r.form.blocks == 197]
    for row in timed[:SPAN_TOP] + k1[:1]:
        row.span_us = span_us(launcher(so, row.form, sink, err), weights)


def gpu_facts() -> dict[str, Any]:
    import torch

    from kda_kernel.triton.trace import environment

    p = torch.cuda.get_device_properties(0)
    nv = subprocess.run(["nvcc", "--version"], capture_output=True, text=True, check=False)
    return {
        **environment(),
        "l2_bytes": getattr(p, "L2_cache_size", None),
        "nvcc": nv.stdout.strip().splitlines()[-1] if nv.stdout else None,
        "bytes_read_a_launch": W_BYTES,
    }


def summary(rows: list[Row]) -> list[str]:
    """The fastest form of each kind, then the ten fastest overall."""
    ok = sorted((r for r in rows if r.us), key=lambda r: r.us or 0.0)
    lines = ["form | us a launch | TB/s read | us inside the kernel"]
    best: dict[str, Row] = {}
    for r in ok:
        best.setdefault(r.form.kind, r)
    k1 = next((r for r in ok if r.form.kind == "chunked" and r.form.blocks == 197), None)
    picked = list(best.values()) + ([k1] if k1 else []) + ok[:10]
    seen: set[str] = set()
    for r in picked:
        if r.form.label() in seen:
            continue
        seen.add(r.form.label())
        span = f"{r.span_us:.1f}" if r.span_us else "-"
        lines.append(f"{r.form.label()} | {r.us:.1f} | {r.read_TB_s:.2f} | {span}")
    bad = [r for r in rows if r.error]
    lines += [f"{r.form.label()}: {r.error}" for r in bad]
    return lines


def run(quick: bool, kinds: tuple[str, ...]) -> dict[str, Any]:
    from tqdm import tqdm

    rows = [Row(f) for f in forms(quick, kinds)]
    with tempfile.TemporaryDirectory() as d:
        so = build(Path(d))
        measure(rows, so, lambda xs: tqdm(xs, desc="forms", file=sys.stderr))
    print("\n".join(summary(rows)), file=sys.stderr)
    return {
        "env": gpu_facts(),
        "layers": LAYERS,
        "sets": SETS,
        "rows": [{**asdict(r), "label": r.form.label()} for r in rows],
    }


def main(argv: list[str] | None = None) -> int:
    from lab.gpu_jobs import before_launches, report_to

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=None)
    ap.add_argument("--force", action="store_true", help="overwrite --out")
    ap.add_argument("--quick", action="store_true", help="a few grid forms only")
    ap.add_argument("--kinds", default=",".join(KINDS), help=f"some of {','.join(KINDS)}")
    a = ap.parse_args(argv)
    kinds = tuple(k for k in a.kinds.split(",") if k)
    try:
        if not kinds or set(kinds) - set(KINDS):
            raise InvalidInput(f"kinds are some of {', '.join(KINDS)}", where="--kinds")
        before_launches([a.out] if a.out else [], a.force)
        report_to(lambda: run(a.quick, kinds), a.out, a.force)
    except InvalidInput as e:
        print(f"hbm_ceiling: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
