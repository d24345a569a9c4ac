"""Fuzz: one field of a bundled trace set to a bad value (NaN, infinity, negative, huge,
wrong type, missing) is either read and checked against its launch, or refused with
TraceFormatError / InvalidInput naming the file; never another exception."""

from __future__ import annotations

import gzip
import json
import math
import os
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import parse_kernel_trace
from kda_sim.importers.claimed_launch import check_claimed_launch

# CI's budget (each case reads a 3,000-event trace); KDA_FUZZ_EXAMPLES=2000 runs longer
EXAMPLES = int(os.environ.get("KDA_FUZZ_EXAMPLES", "12"))
TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
DOC: dict[str, Any] = json.loads(gzip.decompress(TRACE.read_bytes()))
BAD = [math.nan, math.inf, -1, 0, 1e30, 10**40, "1", "", None, True, [], {}, -1e-9, 2**31]
MISSING = object()


def _fields() -> list[tuple[Any, ...]]:
    """Paths to the header's fields, the CTA heads' and the first event's of each kind."""
    other = DOC["otherData"]
    out: list[tuple[Any, ...]] = [("otherData", "meta", k) for k in other["meta"]]
    out += [("otherData", "ctas", 5, k) for k in other["ctas"][5]]
    seen: set[str] = set()
    for i, e in enumerate(DOC["traceEvents"]):
        cat = e.get("cat")
        if cat in ("stage", "poll", "put", "load") and cat not in seen:
            seen.add(cat)
            out += [("traceEvents", i, "args", k) for k in e["args"]]
            out += [("traceEvents", i, "tid")]
    return out


FIELDS = _fields()


@settings(max_examples=EXAMPLES, derandomize=True, deadline=None)
@given(st.sampled_from(FIELDS), st.sampled_from([*BAD, MISSING]))
def test_a_bad_field_is_read_or_refused(path: tuple[Any, ...], value: Any) -> None:
    box: Any = DOC
    for k in path[:-1]:
        box = box[k]
    key = path[-1]
    had, old = key in box, box.get(key)
    try:
        if value is MISSING:
            box.pop(key, None)
        else:
            box[key] = value
        try:
            check_claimed_launch(parse_kernel_trace(DOC, "t.json"), "t.json")
        except InvalidInput as e:  # TraceFormatError included
            assert str(e).startswith("t.json"), str(e)
    finally:
        if had:
            box[key] = old
        else:
            box.pop(key, None)
