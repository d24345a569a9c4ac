"""Our kernel's traces (``traces/*.json``): Chrome trace JSON as
:mod:`kda_sim.timeline.chrome` writes it, measured or simulated.

This wraps :func:`~kda_sim.timeline.chrome.read_chrome` (the one reader of the format)
and adds what a *measured* trace must also satisfy before it is compared with the
model: the header's shape fields are integers the configuration accepts, one CTA
track a block, and every stage span a pair of finite times. Each failure is a
:class:`TraceFormatError` that names the field and the record.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers.caps import check_count, read_inflated
from kda_sim.jsoncheck import parse_json
from kda_sim.timeline.chrome import FORMAT, from_chrome
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.schema import validate_timeline_dict

_INT_FIELDS = ("R", "L", "nb", "kda0", "blocks")


def _check_meta(data: dict[str, Any], where: str) -> None:
    """The header fields ``from_chrome`` passes through unchecked."""
    meta = (
        data.get("otherData", {}).get("meta") if isinstance(data.get("otherData"), dict) else None
    )
    if not isinstance(meta, dict):
        return  # from_chrome names this one
    for name in _INT_FIELDS:
        if name in meta and (isinstance(meta[name], bool) or not isinstance(meta[name], int)):
            raise TraceFormatError(
                f"field {name!r} must be an integer, got {meta[name]!r}",
                where=f"{where}: otherData.meta",
            )
    for name in ("source", "gpu", "clock"):
        if name in meta and not isinstance(meta[name], str):
            raise TraceFormatError(
                f"field {name!r} must be a string, got {meta[name]!r}",
                where=f"{where}: otherData.meta",
            )
    if "extra" in meta and not isinstance(meta["extra"], dict):
        raise TraceFormatError("field 'extra' must be an object", where=f"{where}: otherData.meta")
    heads = data["otherData"].get("ctas")
    if isinstance(heads, list):
        for i, h in enumerate(heads):
            if not isinstance(h, dict):
                raise TraceFormatError("a CTA header is not an object", where=f"{where}: ctas[{i}]")
            for name in ("cta", "unit", "xcd"):
                v = h.get(name)
                if v is not None and (isinstance(v, bool) or not isinstance(v, int)):
                    raise TraceFormatError(
                        f"field {name!r} must be an integer, got {v!r}",
                        where=f"{where}: otherData.ctas[{i}]",
                    )
            if not isinstance(h.get("role", ""), str):
                raise TraceFormatError(
                    "field 'role' must be a string", where=f"{where}: otherData.ctas[{i}]"
                )


def _check_timeline(tl: Timeline, where: str) -> None:
    m = tl.meta
    if m.blocks != len(tl.ctas):
        raise TraceFormatError(
            f"meta.blocks = {m.blocks} but {len(tl.ctas)} CTA tracks", where=f"{where}: otherData"
        )
    for c in tl.ctas:
        for k, s in enumerate(c.stages):
            rec = f"{where}: CTA {c.cta} stage[{k}] ({s.name!r})"
            if not isinstance(s.name, str) or not isinstance(s.task, int):
                raise TraceFormatError("stage name / task mistyped", where=rec)
            for name in ("start", "end"):
                v = getattr(s, name)
                if not math.isfinite(v):
                    raise TraceFormatError(f"field {name!r} is not finite", where=rec)
        for k, p in enumerate(c.polls):
            rec = f"{where}: CTA {c.cta} poll[{k}]"
            if not isinstance(p.stage, str) or not isinstance(p.label, str):
                raise TraceFormatError("poll stage / label must be strings", where=rec)
            if not isinstance(p.task, int):
                raise TraceFormatError("field 'task' must be an integer", where=rec)
            if p.retries is not None and (
                isinstance(p.retries, bool) or not isinstance(p.retries, int)
            ):
                raise TraceFormatError("field 'retries' must be an integer", where=rec)
            if p.producer is not None and (
                isinstance(p.producer, bool)
                or not isinstance(p.producer, int)
                or not 0 <= p.producer < len(tl.ctas)
            ):
                raise TraceFormatError(f"field 'producer' names no CTA: {p.producer!r}", where=rec)
            for name in ("first_issue", "satisfied", "put_time"):
                v = getattr(p, name)
                if v is not None and (
                    isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v)
                ):
                    raise TraceFormatError(f"field {name!r} must be a finite number", where=rec)
        for k, u in enumerate(c.puts):
            if not isinstance(u.region, str) or not math.isfinite(u.time):
                raise TraceFormatError(
                    "put region / time mistyped", where=f"{where}: CTA {c.cta} put[{k}]"
                )
    try:
        m.config().validate()
    except InvalidInput as e:
        raise TraceFormatError(f"the header's shape is impossible: {e}", where=where) from e


def parse_kernel_trace(data: Any, source: str = "trace") -> Timeline:
    """A decoded JSON object -> :class:`Timeline` (see the module docstring)."""
    if isinstance(data, dict) and isinstance(data.get("traceEvents"), list):
        check_count(len(data["traceEvents"]), "trace events", source)
    other = data.get("otherData") if isinstance(data, dict) else None
    if isinstance(other, dict) and other.get("format") == FORMAT:
        validate_timeline_dict(data, source)  # another format: from_chrome says which
        _check_meta(data, source)
    try:
        tl = from_chrome(data, source)
    except TraceFormatError:
        raise
    except (TypeError, ValueError, AttributeError, KeyError, IndexError) as e:
        # from_chrome checks the fields it reads; a value of a type it does not expect
        # deeper down still has to come back as a format error, never a traceback
        raise TraceFormatError(f"malformed record: {type(e).__name__}: {e}", where=source) from e
    _check_timeline(tl, source)
    return tl


def read_kernel_trace(path: str | Path) -> Timeline:
    """``traces/*.json`` (or ``.json.gz``) -> :class:`Timeline`."""
    p = Path(path)
    return parse_kernel_trace(parse_json(read_inflated(p), str(p)), str(p))
