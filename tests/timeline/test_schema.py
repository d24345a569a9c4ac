"""The timeline JSON's schema: the bundled traces and a simulation meet it; a field of
the wrong type, out of range or not finite is refused naming its JSON path."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from kda_sim.engine import simulate
from kda_sim.errors import TraceFormatError
from kda_sim.importers import trace_files
from kda_sim.importers.caps import read_inflated
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.jsoncheck import parse_json
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.schema import validate_timeline_dict

TRACES = Path(__file__).resolve().parents[2] / "traces"


@pytest.fixture(scope="module")
def trace() -> str:
    return gzip.decompress((TRACES / "k1_h200_R1_L1.json.gz").read_bytes()).decode()


def test_bundled_and_simulated_timelines_meet_the_schema() -> None:
    for p in trace_files(TRACES):
        validate_timeline_dict(parse_json(read_inflated(p), p.name), p.name)
    tl = simulate(LaunchConfig(1, 1), load_profile("h200"), seed=1).timeline
    validate_timeline_dict(json.loads(json.dumps(to_chrome(tl))), "sim")


def _first(d: dict[str, Any], cat: str) -> int:
    return next(i for i, e in enumerate(d["traceEvents"]) if e.get("cat") == cat)


@pytest.mark.parametrize(
    ("edit", "path", "why"),
    [
        (lambda d: d["otherData"]["meta"].update(R=-1), "otherData.meta.R", "minimum"),
        (
            lambda d: d["otherData"]["meta"].update(kernel="../x.py"),
            "otherData.meta.kernel",
            "match",
        ),
        (lambda d: d["otherData"]["ctas"][4].update(unit=-3), "otherData.ctas[4].unit", ""),
        (
            lambda d: d["otherData"]["ctas"][4].update(role=""),
            "otherData.ctas[4].role",
            "non-empty",
        ),
        (
            lambda d: d["traceEvents"][_first(d, "stage")]["args"].update(task="0"),
            ".args.task",
            "type",
        ),
        (
            lambda d: d["traceEvents"][_first(d, "poll")]["args"].update(retries=-2),
            ".args.retries",
            "",
        ),
        (
            lambda d: d["traceEvents"][_first(d, "poll")]["args"].pop("first_issue"),
            ".args",
            "first_issue",
        ),
        (lambda d: d["traceEvents"][_first(d, "stage")].update(tid="3"), ".tid", "type"),
        (
            lambda d: d["traceEvents"][_first(d, "stage")]["args"].update(end=1e300),
            ".args.end",
            "maximum",
        ),
    ],
)
def test_a_bad_field_is_named_by_its_path(tmp_path: Path, trace: str, edit, path: str, why: str):
    d = json.loads(trace)
    edit(d)
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d))
    with pytest.raises(TraceFormatError) as e:
        read_kernel_trace(p)
    msg = str(e.value)
    assert msg.startswith(f"{p}: ") and path in msg and why in msg


@pytest.mark.parametrize(
    ("literal", "why"),
    [("NaN", "NaN is not a number"), ("-Infinity", "-Infinity"), ("1" * 30, "30 digits")],
)
def test_non_finite_and_huge_literals_are_named(tmp_path: Path, trace: str, literal: str, why: str):
    d = json.loads(trace)
    i = _first(d, "stage")
    d["traceEvents"][i]["args"]["start"] = "@@"
    p = tmp_path / "t.json"
    p.write_text(json.dumps(d).replace('"@@"', literal))
    with pytest.raises(TraceFormatError, match=rf"traceEvents\[{i}\]\.args\.start: .*{why}"):
        read_kernel_trace(p)
