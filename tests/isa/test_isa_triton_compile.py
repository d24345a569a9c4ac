"""The Triton spin kernels compiled now (AMD backend, compile-only, both archs): what
this Triton emits gets the findings the committed fixtures' expected.json says."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from kda_sim.isa import analyze_text

pytest.importorskip("triton.backends.amd", reason="needs triton with its AMD backend")

ROOT = Path(__file__).parents[2]
EXPECTED = json.loads((ROOT / "tests/isa/fixtures/triton/expected.json").read_text())


def _script():
    path = ROOT / "scripts" / "isa_triton_fixtures.py"
    spec = importlib.util.spec_from_file_location("isa_triton_fixtures", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.parametrize("arch", ["gfx942", "gfx950"])
def test_triton_spins_compiled_now_get_their_findings(
    arch: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))  # compile, not a cached build
    mod = _script()
    for name, kernel in mod.kernels().items():
        r = analyze_text(mod.build(kernel, arch), name)
        got = sorted([str(f.kind), f.line] for f in r.findings)
        assert got == sorted(EXPECTED["findings"][f"{arch}/{name}"]), name


OBJDUMP19 = Path("/usr/lib/llvm-19/bin/llvm-objdump")


def _major(p: Path) -> int:
    return int(p.parts[-3].removeprefix("llvm-"))


# Debian's llvm-20 and newer know gfx950 (scripts/flydsl_env.sh installs llvm-22)
NEWER = sorted(
    (p for p in Path("/usr/lib").glob("llvm-*/bin/llvm-objdump") if _major(p) >= 20),
    key=_major,
)
GFX950_ONLY = {"v_bitop3_b32", "ds_read_b64_tr_b16", "v_mfma_f32_32x32x16_bf16"}
PADDING = ("s_nop", "s_code_end")  # alignment the linker adds, or the .s's own s_nop


def _gfx950_code_object(tmp_path: Path) -> tuple[Path, str]:
    """A Triton dot (gfx950's new MFMA, transposing LDS reads) then a spin on
    atomic_add: the code object, and the assembly Triton printed for it."""
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    sig = {"a": "*bf16", "b": "*bf16", "c": "*fp32", "flag": "*i32", "tag": "i32"}
    k = triton.compile(
        ASTSource(fn=_dot_then_poll(), signature=sig, constexprs={}),
        target=GPUTarget("hip", "gfx950", 64),
    )
    co = tmp_path / "k.hsaco"
    co.write_bytes(k.asm["hsaco"])
    return co, k.asm["amdgcn"]


def _mnemonics(text: str) -> list[str]:
    from kda_sim.isa.parser import parse

    return [i.mnemonic for i in parse(text).kernels[0].instrs if i.mnemonic not in PADDING]


@pytest.mark.skipif(not OBJDUMP19.exists(), reason="needs Debian llvm-19's llvm-objdump")
def test_a_gfx950_code_object_reads_with_an_objdump_that_does_not_know_gfx950(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LLVM 19 decodes gfx950 code as gfx942: the gfx950-only instructions (here 3
    v_bitop3_b32, 4 ds_read_b64_tr_b16, 2 v_mfma_f32_32x32x16_bf16) do not decode and
    are left out, every other instruction comes out as the .s has it, in order."""
    from kda_sim.isa import analyze_path, codeobj

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(codeobj, "find_objdump", lambda: str(OBJDUMP19))
    co, asm = _gfx950_code_object(tmp_path)
    r = analyze_path(co)
    assert r.arch == "gfx950" and len(r.kernels[0].polls) == 1 and r.findings == []
    assert any("decoded as gfx942" in n and "9 gfx950-only" in n for n in r.notes)
    got = _mnemonics(codeobj.disassemble(co)[0])
    assert got == [m for m in _mnemonics(asm) if m not in GFX950_ONLY]


@pytest.mark.skipif(not NEWER, reason="needs Debian's llvm-20 or newer (apt-get install llvm-22)")
def test_a_gfx950_code_object_reads_whole_with_an_objdump_that_knows_gfx950(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With LLVM 20+ nothing is left out: every instruction of the .s, the gfx950-only
    ones too, in order, no note, and the same report as the .s gets."""
    from kda_sim.isa import analyze_path, codeobj

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(codeobj, "find_objdump", lambda: str(NEWER[-1]))
    co, asm = _gfx950_code_object(tmp_path)
    text, notes = codeobj.disassemble(co)
    assert notes == []
    got, want = _mnemonics(text), _mnemonics(asm)
    assert got == want and set(got) >= GFX950_ONLY
    from_co, from_s = analyze_path(co), analyze_text(asm, "k.s")
    assert from_co.arch == "gfx950" and from_co.notes == from_s.notes and from_co.findings == []
    [poll] = from_co.kernels[0].polls
    [want_poll] = from_s.kernels[0].polls
    # the same ops in flight (loads are classed by cache bits only in a code object)
    assert [(t.kind, len(t.lines)) for t in poll.tries] == [
        (t.kind, len(t.lines)) for t in want_poll.tries
    ]
    assert [(f.kind, f.nbytes) for f in poll.in_flight] == [
        (f.kind, f.nbytes) for f in want_poll.in_flight
    ]
    assert from_co.kernels[0].loops == from_s.kernels[0].loops == 1


def _dot_then_poll():
    import triton
    import triton.language as tl

    @triton.jit
    def dot_then_poll(a, b, c, flag, tag):
        r = tl.arange(0, 32)
        x = tl.load(a + r[:, None] * 32 + r[None, :])
        y = tl.load(b + r[:, None] * 32 + r[None, :])
        tl.store(c + r[:, None] * 32 + r[None, :], tl.dot(x, y))
        while tl.atomic_add(flag, 0) != tag:
            pass
        tl.store(c, 1.0)

    return dot_then_poll


@pytest.mark.parametrize("stages", [2, 3])
def test_a_pipelined_gemm_waits_before_its_barriers(
    stages: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LDS written, barriers, LDS read, round a loop: the compiler's waits are there, so
    no lds_write_at_barrier (the finding is not raised by the shape alone)."""
    import triton
    import triton.language as tl
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    @triton.jit
    def gemm(a, b, c, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
        rm, rn, rk = tl.arange(0, BM), tl.arange(0, BN), tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * BN + rn[None, :])
            acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * BN + rn[None, :], acc)

    monkeypatch.setenv("TRITON_CACHE_DIR", str(tmp_path))
    sig = {"a": "*bf16", "b": "*bf16", "c": "*fp32", "K": "i32"}
    sig |= {"BM": "constexpr", "BN": "constexpr", "BK": "constexpr"}
    src = ASTSource(fn=gemm, signature=sig, constexprs={"BM": 64, "BN": 64, "BK": 32})
    asm = triton.compile(
        src, target=GPUTarget("hip", "gfx950", 64), options={"num_stages": stages}
    ).asm["amdgcn"]
    assert "s_barrier" in asm and "ds_write" in asm and "ds_read" in asm
    r = analyze_text(asm, f"gemm{stages}.s")
    assert r.kernels[0].loops >= 1 and r.findings == []
