"""Code objects (``.hsaco`` / ``.co``): disassembled by LLVM's ``llvm-objdump`` (Debian
``llvm-19``) and rewritten into the assembly form :mod:`parser` reads (branch targets
become labels). Argument metadata is not read from a code object, so its loads are
classed by their cache bits."""

from __future__ import annotations

import glob
import re
import shutil
import subprocess
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


def find_objdump() -> str | None:
    candidates = sorted(
        glob.glob("/usr/lib/llvm-*/bin/llvm-objdump"), key=_llvm_version, reverse=True
    )
    for c in [*candidates, shutil.which("llvm-objdump")]:
        if c and _llvm_version(c) >= 17:  # gfx942 needs LLVM 17
            return c
    return None


def _llvm_version(path: str | None) -> int:
    m = re.search(r"llvm-(\d+)", path or "")
    if m:
        return int(m.group(1))
    return 19 if path else 0  # an unversioned llvm-objdump on PATH: try it


def disassemble(path: Path) -> str:
    data = path.read_bytes()
    try:
        arch = elf_target(data)
    except InvalidInput as e:
        raise InvalidInput(str(e), what="code object", where=str(path)) from e
    tool = find_objdump()
    if tool is None:
        raise InvalidInput(
            "a code object needs llvm-objdump 19 or newer to be read (apt-get install llvm-19), "
            "or give the .s FlyDSL dumps (FLYDSL_DEBUG_DUMP_ASM=1)",
            what="code object",
            where=str(path),
        )
    if arch == "gfx950" and _llvm_version(tool) < 20:
        raise InvalidInput(
            f"{tool} (LLVM {_llvm_version(tool)}) does not know gfx950 (LLVM 20 does); "
            "give the .s FlyDSL dumps (FLYDSL_DEBUG_DUMP_ASM=1)",
            what="code object",
            where=str(path),
        )
    cmd = [tool, "-d", "--no-show-raw-insn", f"--mcpu={arch}", str(path)]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if out.returncode != 0:
        raise InvalidInput(
            f"llvm-objdump failed: {out.stderr.strip()[:300]}", what="code object", where=str(path)
        )
    return to_assembly(out.stdout, arch)


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
