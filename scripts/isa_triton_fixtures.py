"""Compile small two-program mailbox kernels with Triton's AMD backend (compile-only: no
GPU needed) and write their ISA to tests/isa/fixtures/triton/<arch>/.

    python scripts/isa_triton_fixtures.py [NAME ...]   # needs triton (3.6 was used)

Program 0 publishes a flag (``tl.atomic_xchg``, with a value before it where there is
one); program 1 spins until it sees the flag, the way users write it: on
``tl.atomic_add(flag, 0)``, ``tl.atomic_cas``, a plain ``tl.load``, a volatile
``tl.load``, and a relaxed or acquire ``atomic_add`` followed by a read of the value.
Also the reproducer of triton-lang/triton#11037 (a work-stealing loop on
``tl.atomic_add(counter, 1)`` that hangs on gfx950) and its control (the same atomic
once). What the analyzer must say of each is in tests/isa/fixtures/triton/expected.json,
written by reading the assembly (tests/isa/test_isa_triton.py). With names, only those
kernels are written.
"""

# no `from __future__ import annotations`: triton reads the kernels' source as written

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "isa" / "fixtures" / "triton"
ARCHES = ("gfx942", "gfx950")


def kernels() -> dict:
    import triton
    import triton.language as tl

    @triton.jit
    def spin_atomic_add(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.atomic_xchg(flag, tag)
        else:
            while tl.atomic_add(flag, 0) != tag:
                pass
            tl.store(out, 1)

    @triton.jit
    def spin_cas(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.atomic_xchg(flag, tag)
        else:
            while tl.atomic_cas(flag, tag, tag) != tag:
                pass
            tl.store(out, 1)

    @triton.jit
    def spin_plain_load(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.atomic_xchg(flag, tag)
        else:
            while tl.load(flag) != tag:
                pass
            tl.store(out, 1)

    @triton.jit
    def spin_volatile_load(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.atomic_xchg(flag, tag)
        else:
            while tl.load(flag, volatile=True) != tag:
                pass
            tl.store(out, 1)

    @triton.jit
    def spin_relaxed_then_value(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.store(flag + 1, 42)
            tl.atomic_xchg(flag, tag, sem="release")
        else:
            while tl.atomic_add(flag, 0, sem="relaxed") != tag:
                pass
            tl.store(out, tl.load(flag + 1))

    @triton.jit
    def spin_acquire_then_value(flag, out, tag):
        if tl.program_id(0) == 0:
            tl.store(flag + 1, 42)
            tl.atomic_xchg(flag, tag, sem="release")
        else:
            while tl.atomic_add(flag, 0, sem="acquire") != tag:
                pass
            tl.store(out, tl.load(flag + 1))

    # triton-lang/triton#11037: every workgroup takes work items off one counter
    @triton.jit
    def work_steal_loop(flag, out, tag):
        idx = tl.atomic_add(flag, 1)
        while idx < tag:
            tl.store(out + idx, idx + 1)
            idx = tl.atomic_add(flag, 1)

    # the control: the same atomic once, no loop
    @triton.jit
    def work_steal_once(flag, out, tag):
        idx = tl.atomic_add(flag, 1)
        if idx < tag:
            tl.store(out + idx, idx + 1)

    return {
        k.__name__: k
        for k in (
            spin_atomic_add,
            spin_cas,
            spin_plain_load,
            spin_volatile_load,
            spin_relaxed_then_value,
            spin_acquire_then_value,
            work_steal_loop,
            work_steal_once,
        )
    }


def build(kernel, arch: str) -> str:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {"flag": "*i32", "out": "*i32", "tag": "i32"}
    src = ASTSource(fn=kernel, signature=sig, constexprs={})
    return triton.compile(src, target=GPUTarget("hip", arch, 64)).asm["amdgcn"]


def main() -> int:
    try:
        import triton  # noqa: F401
    except ImportError:
        print("needs triton (pip install triton)", file=sys.stderr)
        return 2
    only = set(sys.argv[1:])
    for arch in ARCHES:
        (OUT / arch).mkdir(parents=True, exist_ok=True)
        for name, k in kernels().items():
            if only and name not in only:
                continue
            (OUT / arch / f"{name}.s").write_text(build(k, arch))
            print(f"{arch} {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
