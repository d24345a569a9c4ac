"""Compile the two-workgroup mailbox kernels of `kda-sim isa`'s fixture corpus with
FlyDSL (compile-only) and write their ISA to tests/isa/fixtures/mailbox/<arch>/.

    bash scripts/flydsl_env.sh && python scripts/isa_mailbox_fixtures.py

Workgroup 0 puts one (value, tag) pair; workgroup 1 issues three unrelated loads, polls
the tag and stores what it read. The variants change how the poll is built (a buffer
load with given cache bits, a relaxed or acquire atomic load at a given scope), whether
it sleeps between tries, the put's cache bits, and whether the unrelated loads are
weights (``nt``). What the analyzer must say of each is in
tests/isa/fixtures/mailbox/expected.json, written by reading the assembly
(``tests/isa/test_isa_mailbox.py`` checks it; ``-m flydsl`` also recompiles).

No markers: the analyzer must find polls, deleted polls and scopes from the code alone.

The ``*_ktrace`` variants are built with FlyDSL's ktrace on (compile hint ``ktrace``): a
ktrace range "producer.put" around the put and "consumer.poll" around the poll and its
read. They go to tests/isa/fixtures/ktrace/<arch>/, each with the build's ktrace name
table (name -> event id, which the ISA does not hold) in ``<name>.s.ktrace.json``;
tests/isa/test_isa_ktrace.py checks them against tests/isa/fixtures/ktrace/expected.json.
"""

# no `from __future__ import annotations`: FlyDSL reads the kernels' annotations as types

import json
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

OUT = ROOT / "tests" / "isa" / "fixtures" / "mailbox"
KTRACE_OUT = ROOT / "tests" / "isa" / "fixtures" / "ktrace"
KTRACE_SUFFIX = ".ktrace.json"  # the name table beside a traced build's .s
ARGS: tuple[tuple[str, str], ...] = (
    ("x", "staging"),
    ("w", "weights"),
    ("mb", "mailbox"),
    ("out", "staging"),
    ("tag", "scalar"),
)
THREADS = 64
SC0, NT, SC1 = 1, 2, 16


@dataclass(frozen=True)
class Variant:
    name: str
    mode: str = "buffer"  # buffer / relaxed / acquire
    poll_bits: int = SC0 | SC1  # buffer mode: the poll load's aux bits
    scope: str = "agent"  # atomic modes: the load's syncscope
    sleep: bool = True
    put_bits: int = SC0 | SC1
    weights: bool = False  # the unrelated loads are nt loads of w (else plain loads of x)
    ktrace: bool = False  # built with ktrace ranges around the put and the poll


def _bits_name(b: int) -> str:
    return "_".join(n for n, v in (("sc0", SC0), ("sc1", SC1), ("nt", NT)) if b & v) or "plain"


def variants() -> list[Variant]:
    out = []
    for bits in (SC0 | SC1, SC1, SC0, 0):
        for sleep in (True, False):
            s = "sleep" if sleep else "nosleep"
            out.append(Variant(f"buffer_{_bits_name(bits)}_{s}", poll_bits=bits, sleep=sleep))
    for mode in ("relaxed", "acquire"):
        for sleep in (True, False):
            s = "sleep" if sleep else "nosleep"
            out.append(Variant(f"{mode}_agent_{s}", mode=mode, sleep=sleep))
    out.append(Variant("relaxed_workgroup_sleep", mode="relaxed", scope="workgroup"))
    out.append(Variant("buffer_sc0_sc1_sleep_put_sc0", put_bits=SC0))
    out.append(Variant("buffer_sc0_sc1_sleep_weights", weights=True))
    for base in ("buffer_sc0_sc1_sleep", "buffer_sc0_sc1_nosleep", "relaxed_agent_sleep"):
        v = next(o for o in out if o.name == base)
        out.append(Variant(f"{base}_ktrace", v.mode, v.poll_bits, v.scope, v.sleep, ktrace=True))
    return out


def build(v: Variant, arch: str, dump: Path) -> tuple[Path, dict[str, int]]:
    """The build's ISA and its ktrace name table (empty without ktrace)."""
    import contextlib

    import flydsl.compiler as flyc
    import flydsl.expr as fx
    from flydsl._mlir.dialects import scf
    from flydsl.compiler.kernel_function import CompilationContext
    from flydsl.expr import ktrace
    from flydsl.expr.ktrace_common import name_table

    from kda_kernel.flydsl import dsl
    from kda_kernel.flydsl.build import compile_isa

    order = {"relaxed": fx.AtomicOrdering.Monotonic, "acquire": fx.AtomicOrdering.Acquire}

    def poll(mb: fx.Pointer, rm: object, tag: object) -> fx.Int32:
        loop = scf.WhileOp([], [])
        before = loop.regions[0].blocks.append()
        after = loop.regions[1].blocks.append()
        with dsl.ir.InsertionPoint(before):
            if v.mode == "buffer":
                seen = dsl.element(dsl.load(rm, 0, width=2, aux=v.poll_bits), 1)
            else:
                seen = fx.generic_load(
                    mb + 1, dtype=fx.Int32, memory_order=order[v.mode], syncscope=v.scope
                )
            scf.ConditionOp(dsl.ir_of(seen != dsl.i32(tag)), [])
        with dsl.ir.InsertionPoint(after):
            if v.sleep:
                dsl.sleep(1)
            scf.YieldOp([])
        if v.mode == "buffer":
            return dsl.element(dsl.load(rm, 0, width=2, aux=v.poll_bits), 0)
        return fx.Int32(fx.generic_load(mb, dtype=fx.Int32))

    def body(x: fx.Pointer, w: fx.Pointer, mb: fx.Pointer, out: fx.Pointer, tag: fx.Int32):
        bid = fx.Int32(fx.block_idx.x)
        tid = fx.Int32(fx.thread_idx.x)
        rx, rw, rm, ro = dsl.rsrc(x), dsl.rsrc(w), dsl.rsrc(mb), dsl.rsrc(out)

        def traced(name: str) -> contextlib.AbstractContextManager[None]:
            return ktrace.range(name) if v.ktrace else contextlib.nullcontext()

        def producer() -> None:
            with traced("producer.put"):
                dsl.when(tid == 0, lambda: dsl.store(dsl.pair(42, tag), rm, 0, aux=v.put_bits))

        def consumer() -> None:
            src, aux = (rw, NT) if v.weights else (rx, 0)
            got = [dsl.load(src, tid * 4 + 256 * i, width=4, aux=aux) for i in range(3)]
            with traced("consumer.poll"):
                value = poll(mb, rm, tag)
            for i in range(3):
                dsl.store(got[i], ro, tid * 4 + 256 * i)
            dsl.store(value, ro, 1024 + tid)

        dsl.when(bid == 0, producer)
        dsl.when(bid == 1, consumer)

    body.__name__ = body.__qualname__ = f"mbx_{v.name}"
    kernel = flyc.kernel(body)

    @flyc.jit
    def launch(
        x: fx.Pointer,
        w: fx.Pointer,
        mb: fx.Pointer,
        out: fx.Pointer,
        tag: fx.Int32,
        stream: fx.Stream = fx.Stream(None),  # noqa: B008
    ):
        kernel(x, w, mb, out, tag).launch(grid=(2, 1, 1), block=(THREADS, 1, 1), stream=stream)

    def run() -> None:
        ptrs = [flyc.from_c_void_p(fx.Int32, 0) for _ in range(4)]
        launch(*ptrs, 1)

    with CompilationContext.compile_hints({"ktrace": v.ktrace}):
        isa = compile_isa(run, arch, dump).isa
    names = name_table() if v.ktrace else {}
    return isa, {n: names[n] for n in ("producer.put", "consumer.poll") if n in names}


def main() -> int:
    from kda_kernel.flydsl.toolchain import ARCHES, missing

    why = missing()
    if why:
        print(why, file=sys.stderr)
        return 2
    only = set(sys.argv[1:])
    with tempfile.TemporaryDirectory() as tmp:
        for arch in ARCHES:
            for v in variants():
                if only and v.name not in only:
                    continue
                isa, names = build(v, arch, Path(tmp) / arch / v.name)
                out = (KTRACE_OUT if v.ktrace else OUT) / arch
                out.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(isa, out / f"{v.name}.s")
                if v.ktrace:
                    table = out / f"{v.name}.s{KTRACE_SUFFIX}"
                    table.write_text(json.dumps(names, indent=1, sort_keys=True) + "\n")
                print(f"{arch} {v.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
