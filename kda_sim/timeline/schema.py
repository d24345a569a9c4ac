"""The timeline JSON (:mod:`kda_sim.timeline.chrome`'s format: what ``simulate --out``
writes and ``traces/*.json`` are) as a jsonschema, declared once and checked before a
record is built.

The bounds are what a launch can hold: times within about 11 days of the origin (ns),
CTA ids and counts within :data:`~kda_sim.timeline.limits.MAX_CTAS`, counts
non-negative. A kernel is named, never given as a path: a trace's header must not choose
code to run.
"""

from __future__ import annotations

from typing import Any

from kda_sim.jsoncheck import KERNEL_NAME, Schema, check
from kda_sim.timeline.limits import MAX_CTAS

MAX_ABS_NS = 1e15  # |a time| in ns: about 11.6 days
MAX_COUNT = 2**40  # cells, bytes, retries: far above any launch's, far below overflow

_TIME = {"type": "number", "minimum": -MAX_ABS_NS, "maximum": MAX_ABS_NS}
_OPT_TIME = {"anyOf": [{"type": "null"}, _TIME]}
_COUNT = {"type": "integer", "minimum": 0, "maximum": MAX_COUNT}
_OPT_COUNT = {"anyOf": [{"type": "null"}, _COUNT]}
_INT = {"type": "integer", "minimum": -MAX_COUNT, "maximum": MAX_COUNT}
_OPT_INT = {"anyOf": [{"type": "null"}, _INT]}
_CTA = {"type": "integer", "minimum": 0, "maximum": MAX_CTAS - 1}
_OPT_CTA = {"anyOf": [{"type": "null"}, _CTA]}
_TASK = {"type": "integer", "minimum": -1, "maximum": MAX_CTAS * 64}
_STR = {"type": "string"}
_NAME = {"type": "string", "minLength": 1, "maxLength": 256}
_BOOL = {"type": "boolean"}


def _record(required: list[str], props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "required": required, "properties": props}


STAGE = _record(
    ["name", "task", "start", "end"], {"name": _NAME, "task": _TASK, "start": _TIME, "end": _TIME}
)
CELLS = _record(
    ["region", "first", "last", "count"],
    {"region": _STR, "first": _COUNT, "last": _COUNT, "count": _COUNT},
)
POLL = _record(
    ["stage", "task", "label", "n_cells", "n_batches", "first_issue", "satisfied", "retries"],
    {
        "stage": _STR,
        "task": _TASK,
        "label": _STR,
        "n_cells": _COUNT,
        "n_batches": _COUNT,
        "first_issue": _TIME,
        "satisfied": _OPT_TIME,
        "retries": _OPT_COUNT,
        "producer": _OPT_CTA,
        "put_time": _OPT_TIME,
        "put_ref": _OPT_COUNT,
        "cells": {"type": "array", "items": CELLS},
        "behind_loads": _OPT_COUNT,
        "behind_weight_bytes": _OPT_COUNT,
        "tag": _OPT_INT,
    },
)
PUT = _record(
    ["stage", "task", "region", "n_cells", "first", "time"],
    {
        "stage": _STR,
        "task": _TASK,
        "region": _STR,
        "n_cells": _COUNT,
        "first": _COUNT,
        "time": _TIME,
    },
)
LOAD = _record(
    ["name", "kind", "nbytes", "issue", "done"],
    {
        "name": _STR,
        "kind": _STR,
        "nbytes": _COUNT,
        "issue": _TIME,
        "done": _OPT_TIME,
        "stage": _STR,
        "task": _TASK,
    },
)
STUCK = _record(
    ["cta", "stage", "task", "region", "index", "producer", "reason"],
    {
        "cta": _CTA,
        "stage": _STR,
        "task": _TASK,
        "region": _STR,
        "index": _INT,
        "producer": _OPT_CTA,
        "reason": _STR,
        "expected_tag": _OPT_INT,
        "seen_tag": _OPT_INT,
        "time": _OPT_TIME,
    },
)
CTA_HEAD = _record(
    ["cta", "role"],
    {
        "cta": _CTA,
        "role": _NAME,
        "unit": _OPT_COUNT,
        "xcd": _OPT_COUNT,
        "start": _OPT_TIME,
        "end": _OPT_TIME,
    },
)
_SHAPE = {"type": "integer", "minimum": 0, "maximum": MAX_CTAS}
META = _record(
    ["source", "gpu", "R", "L"],
    {
        "source": _NAME,
        "gpu": _STR,
        "R": _SHAPE,
        "L": _SHAPE,
        "nb": _SHAPE,
        "kda0": _SHAPE,
        "gate_local": _BOOL,
        "blocks": {"type": "integer", "minimum": 1, "maximum": MAX_CTAS},
        "clock": _STR,
        "extra": {"type": "object"},
        "nw_first": _BOOL,
        "onw_first": _BOOL,
        "kernel": KERNEL_NAME,
        "params": {"type": "object"},
    },
)


def _event(cat: str, args: dict[str, Any]) -> dict[str, Any]:
    tid = {"tid": {"type": "integer", "minimum": 0, "maximum": 2 * MAX_CTAS - 1}}
    return {
        "if": {"properties": {"cat": {"const": cat}}, "required": ["cat"]},
        "then": {
            "required": ["args"] + ([] if cat == "stuck" else ["tid"]),
            "properties": {"args": args, **({} if cat == "stuck" else tid)},
        },
    }


TIMELINE_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "kda-sim timeline (Chrome trace JSON)",
    "type": "object",
    "required": ["traceEvents", "otherData"],
    "properties": {
        "traceEvents": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"cat": _STR, "name": _STR, "ph": _STR},
                "allOf": [
                    _event("stage", STAGE),
                    _event("poll", POLL),
                    _event("put", PUT),
                    _event("load", LOAD),
                    _event("stuck", STUCK),
                ],
            },
        },
        "otherData": _record(
            ["format", "version", "meta", "ctas"],
            {
                "format": {"const": "kda-sim timeline"},
                "version": {"const": 1},
                "meta": META,
                "ctas": {"type": "array", "minItems": 1, "maxItems": MAX_CTAS, "items": CTA_HEAD},
            },
        ),
    },
}
_SCHEMA = Schema(TIMELINE_SCHEMA)


def validate_timeline_dict(data: Any, where: str) -> None:
    """Refuse a decoded timeline JSON that breaks :data:`TIMELINE_SCHEMA` or holds a
    non-finite number, naming ``where``, the field's JSON path and the constraint."""
    check(data, _SCHEMA, where)
