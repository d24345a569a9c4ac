"""Chrome trace event JSON, as the Perfetto UI opens it, and back without loss.

CTAs are threads (tid = 2 cta) of one process a role (the roles present, in their
kernel's display order, then any other in order of appearance); a CTA's loads run on a second
track (tid = 2 cta + 1) because they overlap its stages and JSON traces cannot show
overlapping slices on one track. Every event's ``args`` carries its record's fields
with times in ns, so reading back does not depend on the microsecond ``ts``.
Hand-offs are flow events from the put to the poll it satisfied.
"""

from __future__ import annotations

import gzip
import json
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from kda_sim.errors import TraceFormatError
from kda_sim.jsoncheck import parse_json, refuse_non_finite
from kda_sim.timeline.model import (
    CellRange,
    CtaTrack,
    LoadSpan,
    Meta,
    PollRecord,
    PutRecord,
    StageSpan,
    StuckWait,
    Timeline,
)

FORMAT = "kda-sim timeline"
VERSION = 1
PUT_DUR_US = 0.001  # puts are instants; a 1 ns slice lets a flow bind to them


def role_pids(tl: Timeline) -> dict[str, int]:
    """A process id a role present in ``tl``, from 1, in its kernel's display order."""
    from kda_sim.timeline.colors import display

    present = list(dict.fromkeys(c.role for c in tl.ctas))
    known = [r for r in display(tl.meta.kernel).roles if r in present]
    order = known + [r for r in present if r not in known]
    return {role: i + 1 for i, role in enumerate(order)}


def _us(ns: float) -> float:
    return ns / 1000.0


def _cta_head(c: CtaTrack) -> dict[str, Any]:
    return {k: getattr(c, k) for k in ("cta", "role", "unit", "xcd", "start", "end")}


def _cta_events(c: CtaTrack, tid: int, pid: int) -> list[dict[str, Any]]:
    ev: list[dict[str, Any]] = []
    where = {"pid": pid, "tid": tid}
    if c.start is not None:
        end = (
            c.end
            if c.end is not None
            else max([c.start] + [s.end for s in c.stages] + [p.first_issue for p in c.polls])
        )
        args = _cta_head(c)
        ev.append(
            {
                "name": f"CTA {c.cta}",
                "cat": "cta",
                "ph": "X",
                "ts": _us(c.start),
                "dur": _us(end - c.start),
                **where,
                "args": args,
            }
        )
    for s in c.stages:
        ev.append(
            {
                "name": s.name,
                "cat": "stage",
                "ph": "X",
                "ts": _us(s.start),
                "dur": _us(s.end - s.start),
                **where,
                "args": asdict(s),
            }
        )
    for p in c.polls:
        end = p.satisfied if p.satisfied is not None else p.first_issue
        ev.append(
            {
                "name": f"poll {p.label}",
                "cat": "poll",
                "ph": "X",
                "ts": _us(p.first_issue),
                "dur": _us(end - p.first_issue),
                **where,
                "args": asdict(p),
            }
        )
    for u in c.puts:
        ev.append(
            {
                "name": f"put {u.region}",
                "cat": "put",
                "ph": "X",
                "ts": _us(u.time),
                "dur": PUT_DUR_US,
                **where,
                "args": asdict(u),
            }
        )
    for ld in c.loads:
        end = ld.done if ld.done is not None else ld.issue
        ev.append(
            {
                "name": f"load {ld.name}",
                "cat": "load",
                "ph": "X",
                "ts": _us(ld.issue),
                "dur": _us(end - ld.issue),
                "pid": pid,
                "tid": tid + 1,
                "args": asdict(ld),
            }
        )
    return ev


ATTRIBUTED = "handoff (put time from the model)"


def _flows(tl: Timeline, pids: dict[str, int]) -> list[dict[str, Any]]:
    """A flow from each put to the poll it satisfied: from the recorded put, or, where the
    trace records no puts, from the time the model attributes to it (named so)."""
    out: list[dict[str, Any]] = []
    n = 0
    for c in tl.ctas:
        for p in c.polls:
            if p.producer is None or p.satisfied is None:
                continue
            src = tl.ctas[p.producer]
            if p.put_ref is not None and p.put_ref < len(src.puts):
                name, at = "handoff", src.puts[p.put_ref].time
            elif p.put_ref is None and p.put_time is not None and not src.puts:
                name, at = ATTRIBUTED, p.put_time
            else:
                continue
            n += 1
            common = {"name": name, "cat": "handoff", "id": n}
            out.append(
                {
                    **common,
                    "ph": "s",
                    "ts": _us(at),
                    "pid": pids[src.role],
                    "tid": 2 * src.cta,
                }
            )
            out.append(
                {
                    **common,
                    "ph": "f",
                    "bp": "e",
                    "ts": _us(p.satisfied),
                    "pid": pids[c.role],
                    "tid": 2 * c.cta,
                }
            )
    return out


def _names(tl: Timeline, pids: dict[str, int]) -> list[dict[str, Any]]:
    ev: list[dict[str, Any]] = []
    for role, pid in pids.items():
        ev.append(
            {
                "name": "process_name",
                "ph": "M",
                "pid": pid,
                "tid": 0,
                "args": {"name": f"{role} CTAs"},
            }
        )
        ev.append(
            {
                "name": "process_sort_index",
                "ph": "M",
                "pid": pid,
                "tid": 0,
                "args": {"sort_index": pid},
            }
        )
    for c in tl.ctas:
        pid = pids[c.role]
        unit = f" ({c.unit})" if c.unit is not None else ""
        for tid, label in (
            (2 * c.cta, f"CTA {c.cta}{unit}"),
            (2 * c.cta + 1, f"CTA {c.cta} loads"),
        ):
            ev.append(
                {"name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": {"name": label}}
            )
            ev.append(
                {
                    "name": "thread_sort_index",
                    "ph": "M",
                    "pid": pid,
                    "tid": tid,
                    "args": {"sort_index": tid},
                }
            )
    return ev


def to_chrome(tl: Timeline, flows_from: Timeline | None = None) -> dict[str, Any]:
    """``tl`` as Chrome trace JSON; the hand-off arrows from ``flows_from`` if given (the
    same run with the producers of its polls attributed, e.g. by the model), so that what
    the trace recorded stays as it was."""
    pids = role_pids(tl)
    events = _names(tl, pids)
    for c in tl.ctas:
        events += _cta_events(c, 2 * c.cta, pids[c.role])
    events += _flows(flows_from if flows_from is not None else tl, pids)
    for s in tl.stuck:
        c = tl.ctas[s.cta]
        t = s.time if s.time is not None else (c.start or 0.0)
        events.append(
            {
                "name": f"stuck: {s.region or s.stage}",
                "cat": "stuck",
                "ph": "i",
                "s": "t",
                "ts": _us(t),
                "pid": pids[c.role],
                "tid": 2 * s.cta,
                "args": asdict(s),
            }
        )
    return {
        "traceEvents": events,
        "displayTimeUnit": "ns",
        "otherData": {
            "format": FORMAT,
            "version": VERSION,
            "meta": asdict(tl.meta),
            "ctas": [_cta_head(c) for c in tl.ctas],
        },
    }


def write_chrome(tl: Timeline, path: str | Path) -> None:
    """``path`` as Chrome trace JSON, gzipped where its name ends ``.gz`` (the bundled traces
    are: a K1 trace deflates about fourteen times). The gzip header carries no time stamp,
    so the same timeline writes the same bytes."""
    text = json.dumps(to_chrome(tl), separators=(",", ":"))
    p = Path(path)
    if p.name.endswith(".gz"):
        p.write_bytes(gzip.compress(text.encode(), compresslevel=9, mtime=0))
    else:
        p.write_text(text)


def _build(cls: type, args: Any, where: str) -> Any:
    if not isinstance(args, dict):
        raise TraceFormatError("event args are not an object", where=where)
    names = {f.name for f in fields(cls)}
    missing = [n for n in names if n not in args and n not in _DEFAULTS.get(cls, ())]
    if missing:
        raise TraceFormatError(f"{cls.__name__} misses field(s) {missing}", where=where)
    try:
        obj = cls(**{k: v for k, v in args.items() if k in names})
    except TypeError as e:
        raise TraceFormatError(f"bad {cls.__name__}: {e}", where=where) from e
    return obj


_DEFAULTS: dict[type, tuple[str, ...]] = {
    PollRecord: (
        "producer",
        "put_time",
        "put_ref",
        "cells",
        "behind_loads",
        "behind_weight_bytes",
        "tag",
    ),
    LoadSpan: ("stage", "task"),
    StuckWait: ("expected_tag", "seen_tag", "time"),
    CtaTrack: ("unit", "xcd", "start", "end", "stages", "polls", "puts", "loads"),
    Meta: (
        "nb",
        "kda0",
        "gate_local",
        "blocks",
        "clock",
        "extra",
        "nw_first",
        "onw_first",
        "kernel",
        "params",
    ),
}


def _num(v: Any, where: str, field: str, optional: bool = False) -> None:
    if v is None and optional:
        return
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise TraceFormatError(f"field {field!r} must be a number, got {v!r}", where=where)


def from_chrome(data: Any, source: str = "trace") -> Timeline:
    """Read a timeline written by :func:`to_chrome`; a clear error names what is wrong."""
    if not isinstance(data, dict) or "traceEvents" not in data:
        raise TraceFormatError("not a Chrome trace object (no 'traceEvents')", where=source)
    other = data.get("otherData")
    if not isinstance(other, dict) or other.get("format") != FORMAT:
        raise TraceFormatError(
            "a Chrome trace, but not a kda-sim timeline (otherData.format missing)", where=source
        )
    if other.get("version") != VERSION:
        raise TraceFormatError(f"unsupported version {other.get('version')!r}", where=source)
    meta = _build(Meta, other.get("meta"), f"{source}: otherData.meta")
    if not isinstance(meta.kernel, str) or not isinstance(meta.params, dict):
        raise TraceFormatError("meta.kernel must be a name, meta.params an object", where=source)
    heads = other.get("ctas")
    if not isinstance(heads, list) or not 0 < len(heads) <= 65536:
        raise TraceFormatError("otherData.ctas must list the CTAs", where=source)
    ctas = [_build(CtaTrack, h, f"{source}: otherData.ctas[{i}]") for i, h in enumerate(heads)]
    for i, c in enumerate(ctas):
        if c.cta != i:
            raise TraceFormatError(f"CTA {c.cta} listed at {i}", where=f"{source}: otherData.ctas")
        _num(c.start, source, "start", optional=True)
        _num(c.end, source, "end", optional=True)
    n = len(ctas)
    stuck: list[StuckWait] = []
    events = data["traceEvents"]
    if not isinstance(events, list):
        raise TraceFormatError("'traceEvents' is not a list", where=source)
    pending: list[tuple[int, str, dict[str, Any], str]] = []
    for i, ev in enumerate(events):
        where = f"{source}: traceEvents[{i}]"
        if not isinstance(ev, dict):
            raise TraceFormatError("an event is not an object", where=where)
        cat = ev.get("cat")
        if cat not in ("stage", "poll", "put", "load", "stuck"):
            continue
        args = ev.get("args")
        if not isinstance(args, dict):
            raise TraceFormatError("event has no args object", where=where)
        if cat == "stuck":
            stuck.append(_build(StuckWait, args, where))
            continue
        tid = ev.get("tid")
        if not isinstance(tid, int) or not 0 <= tid // 2 < n:
            raise TraceFormatError(f"tid {tid!r} names no CTA of {n}", where=where)
        pending.append((tid // 2, cat, args, where))
    for cta, cat, args, where in pending:
        track = ctas[cta]
        if cat == "stage":
            s = _build(StageSpan, args, where)
            _num(s.start, where, "start")
            _num(s.end, where, "end")
            track.stages.append(s)
        elif cat == "poll":
            p = _build(PollRecord, args, where)
            _num(p.first_issue, where, "first_issue")
            _num(p.satisfied, where, "satisfied", optional=True)
            p.cells = [_build(CellRange, c, where) for c in (p.cells or [])]
            track.polls.append(p)
        elif cat == "put":
            u = _build(PutRecord, args, where)
            _num(u.time, where, "time")
            track.puts.append(u)
        elif cat == "load":
            ld = _build(LoadSpan, args, where)
            _num(ld.issue, where, "issue")
            track.loads.append(ld)
    bad = sorted({repr(c.role) for c in ctas if not isinstance(c.role, str) or not c.role})
    if bad:
        raise TraceFormatError(f"a role must be a non-empty string, not {bad}", where=source)
    return Timeline(meta, ctas, stuck)


def read_chrome(path: str | Path) -> Timeline:
    """What :func:`write_chrome` wrote, plain or gzipped (told by its first bytes)."""
    from kda_sim.importers.caps import read_inflated  # the importers read this module

    p = Path(path)
    return chrome_of_bytes(read_inflated(p), str(p))


def chrome_of_bytes(blob: bytes, source: str) -> Timeline:
    """:func:`read_chrome` of a file's bytes already read (``source`` names it)."""
    data = parse_json(blob, source)  # NaN, long integers, deep nesting refused
    refuse_non_finite(data, source)
    return from_chrome(data, source)
