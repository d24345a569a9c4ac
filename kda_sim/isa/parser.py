"""AMDGPU assembly text (as LLVM prints it) -> kernels of instructions, labels,
markers and kernel-argument metadata."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kda_sim.errors import InvalidInput

MARKER = re.compile(r"^\s*;+\s*kda-sim:\s*(?P<text>.*?)\s*$")
LABEL = re.compile(r"^(?P<name>[.$\w]+):\s*(?:[;/].*)?$")
MNEMONIC = re.compile(r"^(s|v|buffer|global|flat|scratch|ds|image|tbuffer|exp)_?[a-z0-9_]*$")
TARGET = re.compile(r'^\s*\.amdgcn_target\s+"(?P<triple>[^"]+)"')
FUNC_TYPE = re.compile(r"^\s*\.type\s+(?P<name>[.$\w]+)\s*,\s*@function")
HSA_KERNEL = re.compile(r"^\s*\.amdhsa_kernel\s+(?P<name>[.$\w]+)")
HSA_FIELD = re.compile(r"^\s*\.amdhsa_(?P<key>\w+)\s+(?P<value>\S+)")
META_LINE = re.compile(r"^(?P<indent>\s*)(?P<dash>- )?\.(?P<key>[\w.]+):\s*(?P<value>.*)$")

# The ``.amdgpu_metadata`` fields read, and the values each may take (declared once,
# checked as the text is read; LLVM writes them in decimal): a kernel's own fields as
# (attribute of Kernel, key, lowest, highest), an argument's as key -> (lowest, highest).
# The bounds are far above any GPU's and far below overflow: they refuse damage, not
# hardware.
META_FIELDS: tuple[tuple[str, str, int, int], ...] = (
    ("vgpr_spills", "vgpr_spill_count", 0, 1 << 20),
    ("wave_lanes", "wavefront_size", 32, 64),
    ("vgprs", "vgpr_count", 0, 1024),
    ("agprs", "agpr_count", 0, 1024),
    ("lds_bytes", "group_segment_fixed_size", 0, 1 << 26),
    ("max_threads", "max_flat_workgroup_size", 0, 1 << 16),
)
ARG_FIELDS: dict[str, tuple[int, int]] = {"offset": (0, 1 << 32), "size": (0, 1 << 32)}
META_INT = re.compile(r"^(0|[1-9][0-9]{0,11}|0x[0-9a-fA-F]{1,12})$")
# an operand's integer: 64 bits are 20 decimal digits (longer ones would not even convert
# past 4,300 digits)
MAX_OPERAND_DIGITS = 20
LONG_NUMBER = re.compile(rf"\d{{{MAX_OPERAND_DIGITS + 1},}}")

# user SGPRs in the order the hardware lays them out, and how many each takes
_USER_SGPRS: tuple[tuple[str, int], ...] = (
    ("user_sgpr_private_segment_buffer", 4),
    ("user_sgpr_dispatch_ptr", 2),
    ("user_sgpr_queue_ptr", 2),
)


@dataclass(frozen=True, slots=True)
class Instr:
    index: int
    line: int  # 1-based line of the source text
    mnemonic: str
    operands: tuple[str, ...]
    modifiers: tuple[str, ...]
    text: str


@dataclass(frozen=True, slots=True)
class Marker:
    before: int  # index of the first instruction after the marker
    line: int
    text: str


@dataclass(frozen=True, slots=True)
class KernelArg:
    offset: int
    size: int
    name: str
    kind: str


@dataclass
class Kernel:
    name: str
    instrs: list[Instr] = field(default_factory=list)
    labels: dict[str, int] = field(default_factory=dict)  # label -> next instruction index
    markers: list[Marker] = field(default_factory=list)
    args: list[KernelArg] = field(default_factory=list)
    kernarg_sgpr: int = 0  # first SGPR of the kernarg segment pointer
    vgpr_spills: int = 0  # from the metadata: spilled VGPRs go through scratch (vmcnt)
    wave_lanes: int = 64  # the metadata's .wavefront_size
    # the metadata's resources (a residency pre-flight reads them): .vgpr_count,
    # .agpr_count, .group_segment_fixed_size (LDS bytes), .max_flat_workgroup_size
    vgprs: int = 0
    agprs: int = 0
    lds_bytes: int = 0
    max_threads: int = 0


@dataclass
class IsaText:
    arch: str
    kernels: list[Kernel]


def strip_comment(s: str) -> str:
    for sep in (";", "//"):
        cut = s.find(sep)
        if cut >= 0:
            s = s[:cut]
    return s.strip()


def split_instruction(body: str) -> tuple[str, tuple[str, ...], tuple[str, ...]]:
    """``buffer_load_dword v1, v0, s[8:11], 0 offen sc0`` -> mnemonic, operands, modifiers."""
    head, _, rest = body.partition(" ")
    parts = [p.strip() for p in rest.split(",")] if rest.strip() else []
    mods: list[str] = []
    if parts:
        last = parts[-1].split()
        parts[-1] = last[0] if last else ""
        mods = last[1:]
    return head.strip(), tuple(p for p in parts if p), tuple(mods)


def _arch_of(triple: str) -> str:
    return triple.rsplit("-", 1)[-1].split(":")[0]


def _looks_like_instruction(body: str) -> bool:
    head = body.split(" ", 1)[0]
    return bool(MNEMONIC.match(head))


def parse(text: str, where: str = "") -> IsaText:
    """Every kernel of an assembly file. Raises :class:`InvalidInput` naming what is
    missing when the text holds no AMDGPU kernel."""
    lines = text.splitlines()
    arch = ""
    functions: set[str] = set()
    kernels: list[Kernel] = []
    current: Kernel | None = None
    pending: list[tuple[int, str]] = []  # markers waiting for their next instruction
    for lineno, raw in enumerate(lines, start=1):
        m = TARGET.match(raw)
        if m:
            arch = _arch_of(m.group("triple"))
            continue
        m = FUNC_TYPE.match(raw)
        if m:
            functions.add(m.group("name"))
            continue
        stripped = raw.strip()
        label = LABEL.match(stripped)
        if label:
            name = label.group("name")
            if name in functions:
                current = Kernel(name)
                kernels.append(current)
                pending = []
            elif current is not None and name.startswith(".Lfunc_end"):
                current = None
            elif current is not None:
                current.labels[name] = len(current.instrs)
            continue
        if current is None:
            continue
        marker = MARKER.match(raw)
        if marker:
            pending.append((lineno, marker.group("text")))
            continue
        body = strip_comment(stripped)
        if not body or body.startswith("."):
            continue
        if not _looks_like_instruction(body):
            continue
        long = LONG_NUMBER.search(body)
        if long:
            raise InvalidInput(
                f"line {lineno}: a number of {len(long.group())} digits in an instruction "
                f"(at most {MAX_OPERAND_DIGITS}: 64 bits)",
                what="isa",
                where=where,
            )
        mnemonic, operands, mods = split_instruction(body)
        index = len(current.instrs)
        for mline, mtext in pending:
            current.markers.append(Marker(index, mline, mtext))
        pending = []
        current.instrs.append(Instr(index, lineno, mnemonic, operands, mods, body))
    kernels = [k for k in kernels if k.instrs]
    if not kernels:
        raise InvalidInput(
            "no AMDGPU kernel found: expected a `.type NAME,@function` with a `NAME:` label "
            "followed by s_/v_/buffer_/global_ instructions (a FlyDSL NN_final_isa.s, or a "
            "code object)",
            what="isa",
            where=where,
        )
    _attach_metadata(kernels, lines, where)
    return IsaText(arch or "unknown", kernels)


def meta_int(value: str, key: str, lo: int, hi: int, line: int, where: str) -> int:
    """A metadata field's integer, refused (naming the line, the field and the rule)
    unless it is one in [lo, hi]."""
    v = value.strip()
    if not META_INT.match(v) or not lo <= int(v, 0) <= hi:
        raise InvalidInput(
            f"line {line}: .{key}: {v[:40]!r} is not an integer in {lo}..{hi}",
            what=f".{key}",
            where=where,
        )
    return int(v, 0)


def _attach_metadata(kernels: list[Kernel], lines: list[str], where: str) -> None:
    by_name = {k.name: k for k in kernels}
    _kernarg_sgprs(by_name, lines)
    for name, (args, fields) in _metadata(lines, where).items():
        if name in by_name:
            k = by_name[name]
            k.args = args
            for attr, key, lo, hi in META_FIELDS:
                if key in fields:
                    value, line = fields[key]
                    setattr(k, attr, meta_int(value, key, lo, hi, line, where))


def _kernarg_sgprs(by_name: dict[str, Kernel], lines: list[str]) -> None:
    current: Kernel | None = None
    sgpr = 0
    for raw in lines:
        m = HSA_KERNEL.match(raw)
        if m:
            current, sgpr = by_name.get(m.group("name")), 0
            continue
        if current is None:
            continue
        if raw.strip().startswith(".end_amdhsa_kernel"):
            current.kernarg_sgpr = sgpr
            current = None
            continue
        f = HSA_FIELD.match(raw)
        if f:
            for key, width in _USER_SGPRS:
                if f.group("key") == key and f.group("value") == "1":
                    sgpr += width


def _metadata(
    lines: list[str], where: str
) -> dict[str, tuple[list[KernelArg], dict[str, tuple[str, int]]]]:
    """Kernel name -> its arguments and top-level fields (value, line), from the
    ``.amdgpu_metadata`` YAML. LLVM writes it in one fixed layout: a kernel entry is a
    dash at the list's indentation, its ``.args`` items dashes indented deeper."""
    body: list[tuple[int, re.Match[str]]] = []
    inside = False
    for lineno, raw in enumerate(lines, start=1):
        s = raw.strip()
        if s.startswith(".amdgpu_metadata"):
            inside = True
        elif s.startswith(".end_amdgpu_metadata"):
            break
        elif inside:
            m = META_LINE.match(raw)
            if m:
                body.append((lineno, m))
    dashes = [len(m.group("indent")) for _, m in body if m.group("dash")]
    if not dashes:
        return {}
    entry_indent = min(dashes)
    entries: list[list[tuple[int, re.Match[str]]]] = []
    for line, m in body:
        if m.group("dash") and len(m.group("indent")) == entry_indent:
            entries.append([])
        if entries:
            entries[-1].append((line, m))
    out: dict[str, tuple[list[KernelArg], dict[str, tuple[str, int]]]] = {}
    for entry in entries:
        name = ""
        items: list[dict[str, tuple[str, int]]] = []
        fields: dict[str, tuple[str, int]] = {}
        for line, m in entry:
            deeper = len(m.group("indent")) > entry_indent + 2
            value = (m.group("value").strip(), line)
            if not deeper:
                fields[m.group("key")] = value
            if m.group("key") == "name" and not deeper:
                name = value[0]
            elif deeper:
                if m.group("dash"):
                    items.append({})
                if items:
                    items[-1][m.group("key")] = value
        if name:
            out[name] = (_to_args(items, where), fields)
    return out


def _to_args(items: list[dict[str, tuple[str, int]]], where: str) -> list[KernelArg]:
    out = []
    for i, a in enumerate(items):
        nums = {
            key: meta_int(a[key][0], key, lo, hi, a[key][1], where) if key in a else 0
            for key, (lo, hi) in ARG_FIELDS.items()
        }
        out.append(
            KernelArg(
                offset=nums["offset"],
                size=nums["size"],
                name=a["name"][0] if "name" in a else f"arg{i}",
                kind=a["value_kind"][0] if "value_kind" in a else "",
            )
        )
    return out
