"""Code objects (``.hsaco`` / ``.co``): disassembled by LLVM's ``llvm-objdump`` (the
newest Debian ``llvm-N`` installed; ``llvm-22`` knows gfx942 and gfx950) and rewritten
into the assembly form :mod:`parser` reads (branch targets become labels). Argument
metadata is not read from a code object, so its loads are classed by their cache bits.
An objdump that does not know the code's target (LLVM 19 and gfx950) says so; the code
is then decoded as a target whose encodings it extends (gfx950 as gfx942), the
instructions only the newer target has left out and counted in a note
(:func:`realign`)."""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from kda_sim.errors import InvalidInput

ELF_MAGIC = b"\x7fELF"
EM_AMDGPU = 224
# e_flags & 0xff (EF_AMDGPU_MACH) for the targets we name
MACH: dict[int, str] = {0x40: "gfx940", 0x4B: "gfx941", 0x4C: "gfx942", 0x4F: "gfx950"}
SYMBOL = re.compile(r"^(?P<addr>[0-9a-fA-F]+) <(?P<name>[^>]+)>:\s*$")
INSTR = re.compile(
    r"^\s+(?P<body>[a-z_][^/]*?)\s*//\s*(?P<addr>[0-9A-Fa-f]+):[^<]*(?:<(?P<target>[^>]+)>)?\s*$"
)


def is_elf(data: bytes) -> bool:
    return data[:4] == ELF_MAGIC


def elf_target(data: bytes) -> str:
    if len(data) < 52 or data[4] != 2 or data[5] != 1:
        raise InvalidInput("ELF file is not 64-bit little-endian", what="code object")
    machine = int.from_bytes(data[18:20], "little")
    if machine != EM_AMDGPU:
        raise InvalidInput(
            f"ELF machine is {machine}, not AMDGPU ({EM_AMDGPU})", what="code object"
        )
    flags = int.from_bytes(data[48:52], "little")
    return MACH.get(flags & 0xFF, f"mach{flags & 0xFF:#x}")


MIN_LLVM = 17  # the first LLVM that knows gfx942
# the Debian package whose llvm-objdump knows every target we name (scripts/flydsl_env.sh)
OBJDUMP_PACKAGE = "llvm-22"
UNKNOWN_CPU = "is not a recognized processor"  # LLVM's words for a -mcpu it does not know


def find_objdump() -> str | None:
    """The newest ``llvm-objdump`` that knows gfx942: Debian's ``/usr/lib/llvm-N``, else
    one on PATH."""
    candidates = sorted(
        glob.glob("/usr/lib/llvm-*/bin/llvm-objdump"), key=_llvm_version, reverse=True
    )
    for c in [*candidates, shutil.which("llvm-objdump")]:
        if c and _llvm_version(c) >= MIN_LLVM:
            return c
    return None


def _llvm_version(path: str | None) -> int:
    m = re.search(r"llvm-(\d+)", path or "")
    if m:
        return int(m.group(1))
    return 19 if path else 0  # an unversioned llvm-objdump on PATH: try it


# a target an older LLVM does not know -> the target it decodes that code as: gfx950
# extends gfx942's encodings (new MFMA / conversion ops), its memory ops, waits and
# branches are encoded the same
DECODE_AS: dict[str, tuple[str, int]] = {"gfx950": ("gfx942", 20)}  # (as, first LLVM knowing it)


def disassemble(path: Path) -> tuple[str, list[str]]:
    """The code object as assembly text, and notes on how it was read."""
    data = path.read_bytes()
    try:
        arch = elf_target(data)
    except InvalidInput as e:
        raise InvalidInput(str(e), what="code object", where=str(path)) from e
    tool = find_objdump()
    if tool is None:
        raise InvalidInput(
            f"a code object needs llvm-objdump {MIN_LLVM} or newer to be read "
            f"(apt-get install {OBJDUMP_PACKAGE}), "
            "or give the .s FlyDSL dumps (FLYDSL_DEBUG_DUMP_ASM=1)",
            what="code object",
            where=str(path),
        )
    notes: list[str] = []

    def run(mcpu: str, start: int | None = None) -> subprocess.CompletedProcess[str]:
        cmd = [tool, "-d", "--no-show-raw-insn", f"--mcpu={mcpu}", str(path)]
        if start is not None:
            cmd.insert(1, f"--start-address={start:#x}")
        return subprocess.run(cmd, capture_output=True, text=True, timeout=120)

    def checked(out: subprocess.CompletedProcess[str]) -> str:
        if out.returncode != 0:
            raise InvalidInput(
                f"llvm-objdump failed: {out.stderr.strip()[:300]}",
                what="code object",
                where=str(path),
            )
        return out.stdout

    # ask the tool itself whether it knows the target: a version number does not say
    # (vendor builds of one LLVM version differ in the targets they know)
    first = run(arch)
    mcpu = arch
    if UNKNOWN_CPU in first.stderr and arch in DECODE_AS:
        mcpu = DECODE_AS[arch][0]
        first = run(mcpu)

    def objdump(start: int | None = None) -> str:
        return checked(run(mcpu, start))

    dump = checked(first)
    if mcpu != arch:
        dump, unknown, vmem = realign(dump, objdump)
        notes.append(
            f"{tool} does not know {arch} (LLVM {DECODE_AS[arch][1]} and newer do): its code was "
            f"decoded as "
            f"{mcpu}, whose encodings {arch} extends (branches and waits are the same); "
            f"{unknown} {arch}-only instruction(s) did not decode and are left out"
            + (
                f", {vmem} of them vector-memory ops (in-flight queues may be short by as many)"
                if vmem
                else ""
            )
        )
    return to_assembly(dump, arch), notes


_ADDR = re.compile(r"//\s*([0-9A-Fa-f]+):")
_LONG = re.compile(r"^\s*\.long\s+0x([0-9A-Fa-f]+)")
VMEM_ENCODINGS = (0x37, 0x38, 0x3A, 0x3C)  # word >> 26: FLAT/GLOBAL, MUBUF, MTBUF, MIMG
MAX_RESYNC = 500


def realign(dump: str, rerun: Callable[[int], str]) -> tuple[str, int, int]:
    """Drop what an older decoder made of words it does not know: on gfx9 a word with
    its top two bits set starts a 64-bit instruction, so the word after an undecoded
    one (``.long``) is its second half, not an instruction. Where the decoder read that
    half as a longer instruction and so swallowed the next real one, decode again from
    the real one's address. Returns (dump, undecoded instructions, how many of them are
    vector-memory ops)."""
    lines = dump.splitlines()
    out: list[str] = []
    unknown = vmem = 0
    resume = -1  # the address the next instruction must start at, after an undecoded one
    i = 0
    resyncs = 0
    while i < len(lines):
        line = lines[i]
        m = _ADDR.search(line)
        if m is None:  # a symbol header, a blank line
            out.append(line)
            i += 1
            continue
        addr = int(m.group(1), 16)
        if resume >= 0 and addr < resume:
            i += 1  # the second half of the undecoded instruction
            continue
        if resume >= 0 and addr > resume and resyncs < MAX_RESYNC:
            resyncs += 1
            again = rerun(resume).splitlines()
            first = next((k for k, t in enumerate(again) if _ADDR.search(t)), len(again))
            lines = lines[:i] + again[first:]
            resume = -1
            continue
        resume = -1
        long_ = _LONG.match(line)
        if long_ is not None:
            word = int(long_.group(1), 16)
            unknown += 1
            if word >> 30 == 0b11:
                resume = addr + 8
                vmem += (word >> 26) in VMEM_ENCODINGS
            i += 1
            continue
        out.append(line)
        i += 1
    return "\n".join(out) + "\n", unknown, vmem


def to_assembly(dump: str, arch: str) -> str:
    """``llvm-objdump -d`` text -> the assembly form LLVM prints (labels for branch targets)."""
    funcs: list[tuple[str, list[tuple[int, str, int | None]]]] = []
    bases: dict[str, int] = {}
    for line in dump.splitlines():
        sym = SYMBOL.match(line)
        if sym:
            bases[sym.group("name")] = int(sym.group("addr"), 16)
            funcs.append((sym.group("name"), []))
            continue
        ins = INSTR.match(line)
        if not ins or not funcs:
            continue
        target = None
        if ins.group("target"):
            name, _, off = ins.group("target").partition("+")
            if name in bases:
                target = bases[name] + (int(off, 16) if off else 0)
        funcs[-1][1].append((int(ins.group("addr"), 16), ins.group("body").strip(), target))
    out = [f'\t.amdgcn_target "amdgcn-amd-amdhsa--{arch}"', "\t.text"]
    for name, body in funcs:
        targets = {t for _, _, t in body if t is not None}
        out += [f"\t.type\t{name},@function", f"{name}:"]
        for addr, text, target in body:
            if addr in targets:
                out.append(f".L_{addr:x}:")
            if target is not None:
                mnemonic = text.split()[0]
                text = f"{mnemonic} .L_{target:x}"
            out.append(f"\t{text}")
        out.append(f".Lfunc_end_{name}:")
    return "\n".join(out) + "\n"
