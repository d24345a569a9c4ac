"""Glue: text or file -> parsed kernels -> CFG -> in-flight queues -> report."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from pathlib import Path

from kda_sim.errors import InvalidInput
from kda_sim.importers.caps import read_capped
from kda_sim.isa import cfg as cfg_mod
from kda_sim.isa import ktrace, lds, polls, waitcnt
from kda_sim.isa.classes import classify, source_of
from kda_sim.isa.codeobj import disassemble, is_elf
from kda_sim.isa.memops import MemKind, Scope, bits_text, mem_op, scope
from kda_sim.isa.parser import Kernel, parse
from kda_sim.isa.provenance import argument
from kda_sim.isa.report import (
    Finding,
    FindingKind,
    InFlight,
    IsaReport,
    KernelReport,
    KtraceRangeReport,
    PollReport,
    PublishReport,
    TryReport,
)

KTRACE_NAMES_SUFFIX = ".ktrace.json"  # a ktrace name table beside the ISA it names
NO_MARKER_NOTE = (
    "no `kda-sim: publish` markers: a flag store cannot be told from a put without one, "
    "so drains were not checked"
)


def analyze_path(
    path: Path,
    *,
    arg_classes: Mapping[str, str] | None = None,
    arg_layout: Sequence[tuple[str, str]] = (),
    accept: Collection[str] = (),
    ktrace_table: Path | None = None,
    bounded: bool = False,
) -> IsaReport:
    """Analyze a ``.s`` file, or a code object through ``llvm-objdump``; a ktrace name
    table (``ktrace_table``, else ``<file>.ktrace.json`` beside it, where there is one)
    names its ktrace ranges. ``bounded``: the file is a bounded-wait build, whose every
    poll loop must give up on a clock (a poll without is a finding)."""
    data = read_capped(path)  # refused over --max-input-mb before it is read
    names = _ktrace_names(path, ktrace_table)
    notes: list[str] = []
    if is_elf(data):
        text, notes = disassemble(path)
    else:
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as e:
            raise InvalidInput(
                f"not text (byte {e.start} is not UTF-8) and not an ELF code object",
                what="isa",
                where=str(path),
            ) from e
    report = analyze_text(
        text,
        str(path),
        arg_classes=arg_classes,
        arg_layout=arg_layout,
        accept=accept,
        ktrace_names=names,
        bounded=bounded,
    )
    report.notes.extend(notes)
    return report


def _ktrace_names(path: Path, given: Path | None = None) -> dict[str, int]:
    """The ktrace name table ``given`` (it must be there), else the one beside ``path``,
    else none."""
    table = given if given is not None else path.with_name(path.name + KTRACE_NAMES_SUFFIX)
    if given is not None and not given.is_file():
        raise InvalidInput("no such ktrace name table", what="ktrace names", where=str(given))
    if not table.is_file():
        return {}
    try:
        data = json.loads(read_capped(table))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise InvalidInput(f"not JSON: {e}", what="ktrace names", where=str(table)) from e
    return ktrace.name_table(data, str(table))


def analyze_text(
    text: str,
    name: str = "<text>",
    *,
    arg_classes: Mapping[str, str] | None = None,
    arg_layout: Sequence[tuple[str, str]] = (),
    accept: Collection[str] = (),
    ktrace_names: Mapping[str, int] | None = None,
    bounded: bool = False,
) -> IsaReport:
    """``arg_layout``: (name, class) of the kernel's arguments in order, for builds whose
    metadata names none (FlyDSL's); ``arg_classes``: classes by argument name;
    ``ktrace_names``: FlyDSL's ktrace name table (event name -> id) of the build;
    ``bounded``: a poll loop with no clock bound is a finding (a bounded-wait build)."""
    parsed = parse(text, where=name)
    report = IsaReport(name, parsed.arch, [], [])
    classes = {n: c for n, c in arg_layout}
    classes.update(arg_classes or {})
    for kernel in parsed.kernels:
        _name_args(kernel, arg_layout)
        first = len(report.findings)
        kr = _kernel(kernel, parsed.arch, classes, set(accept), report, bounded)
        _ktrace_ranges(kernel, kr, report.findings[first:], ktrace_names or {}, report)
        report.kernels.append(kr)
    if not any(polls.marker_kind(m)[0] == "publish" for k in parsed.kernels for m in k.markers):
        report.notes.append(NO_MARKER_NOTE)
    return report


def _ktrace_ranges(
    kernel: Kernel,
    kr: KernelReport,
    findings: list[Finding],
    names: Mapping[str, int],
    report: IsaReport,
) -> None:
    """Name, on each poll and finding of the kernel, the ktrace range it falls in."""
    if not any(ins.mnemonic == ktrace.TIMESTAMP for ins in kernel.instrs):
        return  # no ktrace: nothing to build
    evs, notes = ktrace.events(kernel, cfg_mod.build(kernel))
    rs, more = ktrace.ranges(kernel, evs, names)
    report.notes.extend(notes + more)
    kr.ktrace_ranges = [
        KtraceRangeReport(r.label, r.event_id, r.begin_line, r.end_line) for r in rs
    ]
    for p in kr.polls:
        r = ktrace.innermost(rs, p.line)
        p.ktrace_range = r.label if r else ""
    for f in findings:
        r = ktrace.innermost(rs, f.line)
        f.ktrace_range = r.label if r else ""


def load_lines(
    text: str, name: str = "<text>", *, arg_layout: Sequence[tuple[str, str]] = ()
) -> dict[str, list[int]]:
    """The source lines of every kernel's vector loads, by the argument they read (where
    provenance finds one): where the compiler placed, say, a weight load against a poll."""
    parsed = parse(text, where=name)
    out: dict[str, list[int]] = {}
    for kernel in parsed.kernels:
        _name_args(kernel, arg_layout)
        for ins in kernel.instrs:
            op = mem_op(ins)
            if op is None or op.kind is not MemKind.LOAD:
                continue
            arg = argument(kernel, ins.index, op.resource)
            if arg is not None:
                out.setdefault(arg.name, []).append(ins.line)
    return out


def _name_args(kernel: Kernel, layout: Sequence[tuple[str, str]]) -> None:
    """Give metadata arguments without names (``argN``) the layout's names, in order."""
    kernel.args = [
        replace(a, name=layout[i][0]) if i < len(layout) and a.name == f"arg{i}" else a
        for i, a in enumerate(kernel.args)
    ]


def _in_flight(
    kernel: Kernel, flow: waitcnt.Flow, indices: tuple[int, ...], classes: Mapping[str, str]
) -> list[InFlight]:
    out = []
    for i in indices:
        op = flow.ops[i]
        arg = argument(kernel, i, op.resource)
        ins = kernel.instrs[i]
        out.append(
            InFlight(
                ins.line,
                ins.text,
                str(op.kind),
                classify(op, arg, classes),
                op.nbytes,
                source_of(op, arg),
            )
        )
    return out


def _bucket(f: InFlight) -> str:
    return f.load_class if f.kind in (MemKind.LOAD, MemKind.ATOMIC) else f"{f.kind}:{f.load_class}"


def _kernel(
    kernel: Kernel,
    arch: str,
    classes: dict[str, str],
    accept: set[str],
    report: IsaReport,
    bounded: bool = False,
) -> KernelReport:
    cfg = cfg_mod.build(kernel)
    flow = waitcnt.analyze(kernel, cfg, arch)
    sites, spins = polls.classify_loops(kernel, cfg, flow)
    labels, missing = polls.bind_polls(kernel, sites)
    kr = KernelReport(kernel.name, len(kernel.instrs), len(cfg.loops), kernel.vgpr_spills)
    for n, site in enumerate(sites):
        kr.polls.append(_poll(kernel, cfg, flow, site, labels.get(n, ""), classes, accept, report))
        if bounded and not site.bounded:
            p = kr.polls[-1]
            report.findings.append(
                Finding(
                    FindingKind.POLL_UNBOUNDED,
                    kernel.name,
                    p.loop_line,
                    f"poll {p.label or '(unmarked)'}: the loop at line {p.loop_line} reads no "
                    "clock that a compare uses (s_memrealtime / s_memtime), so in this "
                    "bounded-wait build it can still wait forever for a missing producer",
                )
            )
    for m in missing:
        report.findings.append(
            Finding(
                FindingKind.POLL_MISSING,
                kernel.name,
                m.line,
                f"marker `poll {polls.marker_kind(m)[1]}` has no poll loop after it (no loop "
                "that re-loads, compares and sleeps or loads coherently): the compiler deleted it",
            )
        )
    for loop in spins:
        line = kernel.instrs[cfg.blocks[loop.header].start].line
        report.findings.append(
            Finding(
                FindingKind.SPIN_WITHOUT_LOAD,
                kernel.name,
                line,
                "a loop spins without any memory access: a poll whose load was hoisted out "
                "(no s_sleep, no atomic)",
            )
        )
    for u in polls.unpolled_flag_loads(kernel, cfg, flow, sites, spins):
        ins, st = kernel.instrs[u.load], kernel.instrs[u.store]
        report.findings.append(
            Finding(
                FindingKind.UNPOLLED_FLAG_LOAD,
                kernel.name,
                ins.line,
                f"`{ins.text}` reads {u.arg}, which this kernel publishes (line {st.line}: "
                f"`{st.text}`), once: no loop around it and no poll before it, so it does "
                "not wait for the put (a poll the compiler deleted, or none written)",
            )
        )
    for u in polls.unordered_reads(kernel, cfg, flow, sites, arch):
        ins, op = kernel.instrs[u.load], flow.ops.get(u.load)
        how = (
            f"with {bits_text(op)} ({scope(op, arch).name.lower()} scope) and no acquire (no "
            "buffer_inv between)"
            if op is not None
            else "through the scalar cache (no s_dcache_inv between)"
        )
        report.findings.append(
            Finding(
                FindingKind.UNORDERED_READ,
                kernel.name,
                ins.line,
                f"`{ins.text}` reads {u.arg}, which this kernel publishes, after the poll at "
                f"line {kernel.instrs[u.poll].line} {how}: the poll orders nothing after it, "
                "so the value may be stale",
            )
        )
    flag_list = polls.flags(kernel, flow)
    for flag in flag_list:
        kr.publishes.append(_publish(kernel, flow, flag, classes, report))
    _scopes(kernel, arch, flow, sites, flag_list, labels, report)
    _lds_barriers(kernel, cfg, report)
    report.approximate = report.approximate or flow.approximate
    return kr


def _lds_barriers(kernel: Kernel, cfg: cfg_mod.Cfg, report: IsaReport) -> None:
    found, approximate = lds.unwaited_barriers(kernel, cfg)
    report.approximate = report.approximate or approximate
    for u in found:
        bar, read = kernel.instrs[u.barrier], kernel.instrs[u.read]
        writes = ", ".join(
            f"line {kernel.instrs[w].line} `{kernel.instrs[w].text}`" for w in u.writes
        )
        report.findings.append(
            Finding(
                FindingKind.LDS_WRITE_AT_BARRIER,
                kernel.name,
                bar.line,
                f"`{bar.text}` may be reached with an LDS write still in flight ({writes}): "
                "no `s_waitcnt lgkmcnt(0)` retires it on some path to the barrier, and the "
                "barrier orders no memory, so a wave reading LDS after it (line "
                f"{read.line}: `{read.text}`) may see the old value (a workgroup release "
                "needs the wait)",
            )
        )


def _scopes(
    kernel: Kernel,
    arch: str,
    flow: waitcnt.Flow,
    sites: list[polls.PollSite],
    flag_list: list[polls.Flag],
    labels: Mapping[int, str],
    report: IsaReport,
) -> None:
    """Every poll load, every publish marker's flag store, and every store to an
    argument a poll reads (a put, or an unmarked flag) must be agent scope or wider."""
    why = "agent scope needs sc1" if arch.startswith(("gfx94", "gfx95")) else "needs glc"
    checked: set[int] = set()
    polled: set[str] = set()
    for n, site in enumerate(sites):
        name = labels.get(n) or "(unmarked)"
        for i in (*site.first_try, *site.loads):
            arg = argument(kernel, i, flow.ops[i].resource)
            if arg is not None:
                polled.add(arg.name)
            if i not in checked:
                checked.add(i)
                _scope_finding(kernel, arch, flow, i, f"poll {name} load", why, report)
    stores = [(f.store, f"flag store {polls.marker_kind(f.marker)[1]}") for f in flag_list]
    to_polled = []
    for i, op in sorted(flow.ops.items()):
        if op.kind in (MemKind.STORE, MemKind.ATOMIC):
            arg = argument(kernel, i, op.resource)
            if arg is not None and arg.name in polled:
                to_polled.append((i, op, arg.name))
    for i, op, name in to_polled:
        if op.kind is MemKind.ATOMIC:
            continue  # agent scope at least (checked below only as a poll)
        # a plain store followed by a coherent store or atomic to the same argument is
        # data that the later flag publishes (a release), not the flag itself
        later = {j for j, o, n in to_polled if n == name and j > i and (o.coherent)}
        if not op.cache & {"sc0", "sc1", "glc"} and later:
            continue
        stores.append((i, f"store to polled argument {name}"))
    for i, what in stores:
        if i not in checked:
            checked.add(i)
            _scope_finding(kernel, arch, flow, i, what, why, report)


def _scope_finding(
    kernel: Kernel,
    arch: str,
    flow: waitcnt.Flow,
    i: int,
    what: str,
    why: str,
    report: IsaReport,
) -> None:
    op = flow.ops[i]
    sc = scope(op, arch)
    if sc >= Scope.AGENT:
        return
    ins = kernel.instrs[i]
    report.findings.append(
        Finding(
            FindingKind.SCOPE_BELOW_AGENT,
            kernel.name,
            ins.line,
            f"{what} `{ins.text}` has {bits_text(op)}: {sc.name.lower()} scope on {arch} "
            f"({why}), so a workgroup on another CU may not see it",
        )
    )


def _poll(
    kernel: Kernel,
    cfg: cfg_mod.Cfg,
    flow: waitcnt.Flow,
    site: polls.PollSite,
    label: str,
    classes: Mapping[str, str],
    accept: set[str],
    report: IsaReport,
) -> PollReport:
    in_flight = _in_flight(kernel, flow, polls.in_flight_at_poll(flow, site), classes)
    by_class: dict[str, int] = {}
    bytes_by_class: dict[str, int] = {}
    for f in in_flight:
        key = _bucket(f)
        by_class[key] = by_class.get(key, 0) + 1
        bytes_by_class[key] = bytes_by_class.get(key, 0) + f.nbytes
    wait = polls.wait_of(kernel, flow, site.first)
    pr = PollReport(
        kernel=kernel.name,
        label=label,
        line=kernel.instrs[site.first].line,
        loop_line=kernel.instrs[cfg.blocks[site.loop.header].start].line,
        wait_line=kernel.instrs[wait].line if wait >= 0 else 0,
        pairs=len(site.loads),
        sleeps=site.sleeps,
        coherent=site.coherent,
        peeled=bool(site.first_try),
        bounded=site.bounded,
        in_flight=in_flight,
        by_class=by_class,
        bytes_by_class=bytes_by_class,
        wave_bytes_by_class={c: b * kernel.wave_lanes for c, b in bytes_by_class.items()},
        accepted=label in accept,
    )
    for t in polls.tries(flow, site):
        tr = _try(kernel, flow, t, classes)
        pr.tries.append(tr)
        weights = [
            f for f in _in_flight(kernel, flow, t.in_flight, classes) if _bucket(f) == "weights"
        ]
        if weights and not pr.accepted:
            span = (
                f"lines {weights[0].line}..{weights[-1].line}"
                if len(weights) > 1
                else (f"line {weights[0].line}")
            )
            report.findings.append(
                Finding(
                    FindingKind.POLL_BEHIND_WEIGHTS,
                    kernel.name,
                    tr.wait_line or tr.line,
                    f"poll {label or '(unmarked)'} {t.kind} (load at line {tr.line}) waits at "
                    f"`{tr.wait or 'no s_waitcnt found'}` behind {len(weights)} weight load(s) "
                    f"({sum(f.nbytes for f in weights)} B a lane, {span}) that the role rule "
                    "says are not in flight",
                )
            )
    return pr


def _try(kernel: Kernel, flow: waitcnt.Flow, t: polls.Try, classes: Mapping[str, str]) -> TryReport:
    by_class: dict[str, int] = {}
    for f in _in_flight(kernel, flow, t.in_flight, classes):
        by_class[_bucket(f)] = by_class.get(_bucket(f), 0) + 1
    wait = polls.wait_of(kernel, flow, t.load)
    return TryReport(
        kind=t.kind,
        line=kernel.instrs[t.load].line,
        wait_line=kernel.instrs[wait].line if wait >= 0 else 0,
        wait=kernel.instrs[wait].text if wait >= 0 else "",
        by_class=by_class,
        lines=[kernel.instrs[i].line for i in t.in_flight],
        paths=t.paths,
    )


def _stores(
    kernel: Kernel, flow: waitcnt.Flow, at: int, classes: Mapping[str, str]
) -> list[InFlight]:
    vm, vs = polls.worst_state(flow.before(at))
    return [f for f in _in_flight(kernel, flow, vm + vs, classes) if f.kind != MemKind.LOAD]


def _publish(
    kernel: Kernel,
    flow: waitcnt.Flow,
    flag: polls.Flag,
    classes: Mapping[str, str],
    report: IsaReport,
) -> PublishReport:
    label = polls.marker_kind(flag.marker)[1]
    at_barrier = _stores(kernel, flow, flag.barrier, classes) if flag.barrier >= 0 else []
    at_flag = _stores(kernel, flow, flag.store, classes)
    drained = flag.barrier >= 0 and not at_barrier and not at_flag
    pr = PublishReport(
        kernel=kernel.name,
        label=label,
        line=kernel.instrs[flag.store].line,
        drained=drained,
        barrier_line=kernel.instrs[flag.barrier].line if flag.barrier >= 0 else 0,
        stores_at_barrier=at_barrier,
        stores_at_flag=at_flag,
    )
    if not drained:
        why = (
            "no s_barrier between the CTA's earlier stores and the flag"
            if flag.barrier < 0
            else f"{len(at_barrier) or len(at_flag)} store(s) still in flight at the barrier / flag"
        )
        report.findings.append(
            Finding(
                FindingKind.PUBLISH_UNDRAINED,
                kernel.name,
                pr.line,
                f"flag store {label}: {why} (needs s_waitcnt vmcnt(0) + s_barrier)",
            )
        )
    return pr
