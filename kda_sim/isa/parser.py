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
    _attach_metadata(kernels, lines)
    return IsaText(arch or "unknown", kernels)


def _attach_metadata(kernels: list[Kernel], lines: list[str]) -> None:
    by_name = {k.name: k for k in kernels}
    _kernarg_sgprs(by_name, lines)
    for name, (args, fields) in _metadata(lines).items():
        if name in by_name:
            by_name[name].args = args
            by_name[name].vgpr_spills = int(fields.get("vgpr_spill_count", "0") or 0)
            by_name[name].wave_lanes = int(fields.get("wavefront_size", "64") or 64)
            by_name[name].vgprs = int(fields.get("vgpr_count", "0") or 0)
            by_name[name].agprs = int(fields.get("agpr_count", "0") or 0)
            by_name[name].lds_bytes = int(fields.get("group_segment_fixed_size", "0") or 0)
            by_name[name].max_threads = int(fields.get("max_flat_workgroup_size", "0") or 0)


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


def _metadata(lines: list[str]) -> dict[str, tuple[list[KernelArg], dict[str, str]]]:
    """Kernel name -> its arguments and top-level fields, from the ``.amdgpu_metadata``
    YAML. LLVM writes it
    in one fixed layout: a kernel entry is a dash at the list's indentation, its
    ``.args`` items dashes indented deeper."""
    body: list[re.Match[str]] = []
    inside = False
    for raw in lines:
        s = raw.strip()
        if s.startswith(".amdgpu_metadata"):
            inside = True
        elif s.startswith(".end_amdgpu_metadata"):
            break
        elif inside:
            m = META_LINE.match(raw)
            if m:
                body.append(m)
    dashes = [len(m.group("indent")) for m in body if m.group("dash")]
    if not dashes:
        return {}
    entry_indent = min(dashes)
    entries: list[list[re.Match[str]]] = []
    for m in body:
        if m.group("dash") and len(m.group("indent")) == entry_indent:
            entries.append([])
        if entries:
            entries[-1].append(m)
    out: dict[str, tuple[list[KernelArg], dict[str, str]]] = {}
    for entry in entries:
        name, items, fields = "", [], {}
        for m in entry:
            deeper = len(m.group("indent")) > entry_indent + 2
            if not deeper:
                fields[m.group("key")] = m.group("value").strip()
            if m.group("key") == "name" and not deeper:
                name = m.group("value").strip()
            elif deeper:
                if m.group("dash"):
                    items.append({})
                if items:
                    items[-1][m.group("key")] = m.group("value").strip()
        if name:
            out[name] = (_to_args(items), fields)
    return out


def _to_args(items: list[dict[str, str]]) -> list[KernelArg]:
    out = []
    for i, a in enumerate(items):
        out.append(
            KernelArg(
                offset=int(a.get("offset", "0"), 0),
                size=int(a.get("size", "0"), 0),
                name=a.get("name", f"arg{i}"),
                kind=a.get("value_kind", ""),
            )
        )
    return out
