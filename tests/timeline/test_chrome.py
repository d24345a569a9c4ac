"""Chrome trace JSON: valid for the trace viewers, and read back without loss."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine import simulate
from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import from_chrome, read_chrome, to_chrome, write_chrome

# The Trace Event Format (the JSON Object Format the Perfetto UI and chrome://tracing read):
# the phases we write and the fields each needs.
EVENT = {
    "type": "object",
    "required": ["name", "ph", "pid", "tid"],
    "properties": {
        "name": {"type": "string"},
        "cat": {"type": "string"},
        "ph": {"enum": ["X", "M", "s", "f", "i"]},
        "ts": {"type": "number"},
        "dur": {"type": "number", "minimum": 0},
        "pid": {"type": "integer"},
        "tid": {"type": "integer"},
        "id": {"type": "integer"},
        "args": {"type": "object"},
        "s": {"enum": ["g", "p", "t"]},
        "bp": {"enum": ["e"]},
    },
    "allOf": [
        {"if": {"properties": {"ph": {"const": "X"}}}, "then": {"required": ["ts", "dur"]}},
        {
            "if": {"properties": {"ph": {"enum": ["s", "f"]}}},
            "then": {"required": ["ts", "id", "cat"]},
        },
        {"if": {"properties": {"ph": {"const": "i"}}}, "then": {"required": ["ts"]}},
        {
            "if": {"properties": {"ph": {"const": "M"}}},
            "then": {
                "required": ["args"],
                "properties": {
                    "name": {
                        "enum": [
                            "process_name",
                            "thread_name",
                            "process_sort_index",
                            "thread_sort_index",
                        ]
                    }
                },
            },
        },
    ],
}
SCHEMA = {
    "type": "object",
    "required": ["traceEvents"],
    "properties": {
        "traceEvents": {"type": "array", "items": EVENT},
        "displayTimeUnit": {"enum": ["ms", "ns"]},
        "otherData": {"type": "object"},
    },
}


def test_written_trace_is_valid_chrome_json_with_flows(tmp_path: Path) -> None:
    res = simulate(LaunchConfig(1, 2), load_profile("mi355x"))
    path = tmp_path / "t.json"
    write_chrome(res.timeline, path)
    data = json.loads(path.read_text())
    jsonschema.validate(data, SCHEMA)
    ev = data["traceEvents"]
    starts = {e["id"] for e in ev if e["ph"] == "s"}
    ends = {e["id"] for e in ev if e["ph"] == "f"}
    assert starts and starts == ends  # every hand-off arrow has both ends
    names = {e["args"]["name"] for e in ev if e["name"] == "thread_name"}
    assert {"CTA 0 (0)", "CTA 255 loads"} <= names
    # every flow starts on a put slice of its producer and ends inside the consumer's poll
    puts = {(e["tid"], e["ts"]) for e in ev if e.get("cat") == "put"}
    assert all((e["tid"], e["ts"]) in puts for e in ev if e["ph"] == "s")


@settings(max_examples=6, deadline=None)
@given(
    R=st.integers(1, 3),
    L=st.integers(1, 2),
    seed=st.one_of(st.none(), st.integers(0, 99)),
    gpu=st.sampled_from(["mi355x", "h200"]),
    occupancy=st.sampled_from([None, 1]),
)
def test_round_trip_is_lossless(R, L, seed, gpu, occupancy) -> None:
    tl = simulate(LaunchConfig(R, L), load_profile(gpu), seed=seed, occupancy=occupancy).timeline
    back = from_chrome(json.loads(json.dumps(to_chrome(tl))))
    assert back == tl


def test_deadlocked_timeline_round_trips_with_its_stuck_waits() -> None:
    tl = simulate(LaunchConfig(4, 2), load_profile("h200"), occupancy=1).timeline
    back = from_chrome(json.loads(json.dumps(to_chrome(tl))))
    assert back.stuck == tl.stuck and back.deadlock


@pytest.mark.parametrize(
    ("content", "needle"),
    [
        (b"\xff\xfe\x00binary", "not a text file"),
        (b"\x1f\x8b\x08binary", "gzip stream"),  # gzipped as written to a .gz name, broken
        (b"{not json", "not JSON"),
        (b'{"traceEvents": []}', "not a kda-sim timeline"),
        (b"[1, 2]", "not a Chrome trace"),
    ],
)
def test_bad_files_get_a_clear_error(tmp_path: Path, content: bytes, needle: str) -> None:
    p = tmp_path / "bad.json"
    p.write_bytes(content)
    with pytest.raises(TraceFormatError, match=needle) as e:
        read_chrome(p)
    assert str(p) in str(e.value)


def test_a_damaged_record_is_named() -> None:
    data = to_chrome(simulate(LaunchConfig(1, 1), load_profile("mi355x")).timeline)
    i = next(k for k, e in enumerate(data["traceEvents"]) if e.get("cat") == "poll")
    data["traceEvents"][i]["args"]["first_issue"] = "soon"
    with pytest.raises(TraceFormatError, match=rf"traceEvents\[{i}\].*first_issue"):
        from_chrome(data)
    del data["traceEvents"][i]["args"]["first_issue"]
    with pytest.raises(TraceFormatError, match="misses field"):
        from_chrome(data)


def test_nw_first_round_trips_and_older_files_read_as_the_seeds_order(tmp_path: Path) -> None:
    cfg = LaunchConfig(1, 1, nw_first=True, onw_first=True)
    data = to_chrome(simulate(cfg, load_profile("h200")).timeline)
    assert from_chrome(data).meta.config() == cfg
    for v in ("nw_first", "onw_first"):  # a file written before the variants existed
        del data["otherData"]["meta"][v]
    assert from_chrome(data).meta.config() == LaunchConfig(1, 1)
    data["otherData"]["meta"]["nw_first"] = "yes"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    from kda_sim.importers import read_kernel_trace

    with pytest.raises(
        TraceFormatError, match=r"otherData\.meta\.nw_first: 'yes' is not of type 'boolean'"
    ):
        read_kernel_trace(path)


def test_tracks_come_from_the_roles_present() -> None:
    """A timeline of any kernel's roles exports (a process a role, in order of appearance
    when the kernel is not registered) and reads back."""
    from kda_sim.timeline.model import CtaTrack, Meta, StageSpan, Timeline

    ctas = [
        CtaTrack(0, "producer", 0, 0, 0.0, 10.0, [StageSpan("produce", -1, 0.0, 10.0)]),
        CtaTrack(1, "consumer", 1, 0, 0.0, 20.0, [StageSpan("consume", -1, 0.0, 20.0)]),
        CtaTrack(2, "producer", 2, 0, 0.0, 10.0),
    ]
    tl = Timeline(Meta("measured", "h200", 0, 0, blocks=3, kernel="not-registered"), ctas)
    data = to_chrome(tl)
    events = data["traceEvents"]
    procs = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert procs == {1: "producer CTAs", 2: "consumer CTAs"}
    assert {e["pid"] for e in events if e.get("tid") == 4} == {1}
    back = from_chrome(json.loads(json.dumps(data)))
    assert back.ctas == tl.ctas and back.meta.kernel == "not-registered"


def test_a_real_trace_without_puts_exports_arrows_from_the_attributed_puts() -> None:
    import json
    from pathlib import Path

    from kda_sim.compare.diff import annotate_producers
    from kda_sim.compare.model import model_view
    from kda_sim.importers import load_trace
    from kda_sim.timeline.chrome import ATTRIBUTED, from_chrome, to_chrome

    path = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
    real = load_trace(path)
    assert not any(c.puts for c in real.ctas)  # the Triton K1 records polls, not puts
    linked = annotate_producers(real, model_view(real))
    out = to_chrome(real, flows_from=linked)
    starts = [e for e in out["traceEvents"] if e.get("ph") == "s"]
    assert len(starts) > 100 and {e["name"] for e in starts} == {ATTRIBUTED}
    assert sum(e.get("ph") == "f" for e in out["traceEvents"]) == len(starts)
    # what the trace recorded stays as it was: no producer is written into its polls
    back = from_chrome(json.loads(json.dumps(out)))
    assert all(p.producer is None for c in back.ctas for p in c.polls)


def test_read_chrome_is_strict_json(tmp_path: Path) -> None:
    """NaN, Infinity, integers past 18 digits and deep nesting refused, naming the field."""
    path = tmp_path / "t.json"
    for text, said in (
        ('{"traceEvents": [], "otherData": {"x": NaN}}', "otherData.x: NaN is not a number"),
        ('{"traceEvents": [], "otherData": {"x": -Infinity}}', "otherData.x: -Infinity"),
        ('{"traceEvents": [], "n": ' + "9" * 5000 + "}", "n: an integer of 5000 digits"),
        ("[" * 100_000, "JSON nested too deeply"),
    ):
        path.write_text(text)
        with pytest.raises(TraceFormatError, match=f"t.json: {said}"):
            read_chrome(path)


def test_a_gz_name_is_written_gzipped_and_read_back(tmp_path: Path) -> None:
    """The bundled traces are gzipped: ``write_chrome`` gzips a ``.gz`` name, the same
    bytes each time, and ``read_chrome`` reads either form to the same timeline."""
    tl = simulate(LaunchConfig(1, 1), load_profile("h200")).timeline
    plain, packed, again = tmp_path / "t.json", tmp_path / "t.json.gz", tmp_path / "u.json.gz"
    write_chrome(tl, plain)
    write_chrome(tl, packed)
    write_chrome(tl, again)
    assert packed.read_bytes()[:2] == b"\x1f\x8b" and plain.read_bytes()[:1] == b"{"
    assert packed.read_bytes() == again.read_bytes()
    assert gzip.decompress(packed.read_bytes()) == plain.read_bytes()
    assert read_chrome(packed) == read_chrome(plain) == tl
