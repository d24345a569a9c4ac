"""Our kernel's traces (Chrome JSON): a real file reads back, a wrong one is named."""

from __future__ import annotations

import copy
import gzip
import json
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers import kind_of, load_trace
from kda_sim.importers.chrome import parse_kernel_trace, read_kernel_trace
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.model import Timeline


def test_round_trip_plain_and_gzip(tmp_path: Path, sim_timeline, chrome_text: str) -> None:
    p = tmp_path / "t.json"
    p.write_text(chrome_text)
    tl = read_kernel_trace(p)
    assert tl.makespan == pytest.approx(sim_timeline.makespan)
    assert tl.meta.source == "measured" and len(tl.ctas) == 256
    g = tmp_path / "t.json.gz"
    g.write_bytes(gzip.compress(chrome_text.encode()))
    assert load_trace(g).makespan == pytest.approx(sim_timeline.makespan)


@pytest.mark.parametrize(
    ("mutate", "needle"),
    [
        (
            lambda d: d["otherData"]["meta"].__setitem__("R", "2"),
            "otherData.meta.R: '2' is not of type 'integer'",
        ),
        (lambda d: d["otherData"]["meta"].__setitem__("blocks", 128), "meta.blocks = 128"),
        (lambda d: d["otherData"]["meta"].__setitem__("L", 99), "impossible"),
        (lambda d: d["otherData"]["ctas"][3].__setitem__("unit", "sm3"), "ctas[3]"),
        (lambda d: d.pop("traceEvents"), "traceEvents"),
        (lambda d: d["otherData"].__setitem__("format", "other"), "not a kda-sim timeline"),
    ],
)
def test_wrong_fields_are_named(chrome_text: str, mutate, needle: str) -> None:
    d = json.loads(chrome_text)
    mutate(d)
    with pytest.raises(TraceFormatError, match=None) as e:
        parse_kernel_trace(d, "x.json")
    assert needle in str(e.value)


def test_nonfinite_stage_time_is_named(chrome_text: str) -> None:
    d = json.loads(chrome_text)
    ev = next(e for e in d["traceEvents"] if e.get("cat") == "stage")
    ev["args"]["end"] = math.inf
    with pytest.raises(
        TraceFormatError, match=r"traceEvents\[\d+\]\.args\.end: inf is not a finite number"
    ):
        parse_kernel_trace(d, "x.json")


def test_not_json_not_text_too_big(tmp_path: Path, monkeypatch) -> None:
    p = tmp_path / "a.json"
    p.write_bytes(b"\x00\xff\xfe binary")
    with pytest.raises(TraceFormatError, match="binary"):
        read_kernel_trace(p)
    p.write_text("{not json")
    with pytest.raises(TraceFormatError, match="not JSON"):
        read_kernel_trace(p)
    monkeypatch.setattr("kda_sim.importers.caps._max_bytes", 4)
    p.write_text("{}      ")
    with pytest.raises(TraceFormatError, match="past the input cap"):
        read_kernel_trace(p)
    with pytest.raises(TraceFormatError, match="cannot read"):
        read_kernel_trace(tmp_path / "missing.json")


def test_kind_of_and_shape_arguments(tmp_path: Path) -> None:
    assert kind_of("a/b.pftrace.gz") == "ktrace" and kind_of("x.npy") == "stamps"
    with pytest.raises(TraceFormatError, match="unknown trace kind"):
        kind_of("x.csv")
    with pytest.raises(InvalidInput, match="shape"):
        load_trace(tmp_path / "s.npy")


def _ok_or_clear(fn) -> None:
    """The importers' contract: a timeline, or a TraceFormatError / InvalidInput with a message."""
    try:
        fn()
    except InvalidInput as e:
        assert str(e).strip()


_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=5),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=3), st.integers(), max_size=2),
)


def _event_shapes(d: dict) -> set[tuple]:
    """Every kind of event a Chrome trace holds: (cat, ph, its args' keys)."""
    return {(e.get("cat"), e.get("ph"), tuple(sorted(e.get("args", {})))) for e in d["traceEvents"]}


@pytest.fixture(scope="module")
def fuzz_text(sim_timeline: Timeline, chrome_text: str) -> str:
    """The shared launch with the events of only the first and last CTA of each role: all
    256 CTA heads and every kind of event the whole launch has, a fifth of its events.
    A refusal costs jsonschema's walk up to the bad field (a second or more through the
    whole launch's 6,000 events), which the fuzz's 100 cases pay each."""
    tl = copy.deepcopy(sim_timeline)
    keep: set[int] = set()
    for role in {c.role for c in tl.ctas}:
        ids = [c.cta for c in tl.ctas if c.role == role]
        keep |= {ids[0], ids[-1]}
    for c in tl.ctas:
        if c.cta not in keep:
            c.stages, c.polls, c.puts, c.loads = [], [], [], []
    small = to_chrome(tl)
    full = json.loads(chrome_text)
    assert _event_shapes(small) == _event_shapes(full)
    assert len(small["traceEvents"]) < len(full["traceEvents"]) // 4
    assert len(parse_kernel_trace(small, "fuzz base").ctas) == 256  # the base is read clean
    return json.dumps(small, separators=(",", ":"))


@settings(max_examples=60)
@given(data=st.data())
def test_fuzz_mistyped_fields(fuzz_text: str, data) -> None:
    base = json.loads(fuzz_text)
    d = copy.deepcopy(base)
    where = data.draw(st.sampled_from(["meta", "cta", "event"]))
    if where == "meta":
        key = data.draw(st.sampled_from(sorted(d["otherData"]["meta"])))
        d["otherData"]["meta"][key] = data.draw(_ODD)
    elif where == "cta":
        i = data.draw(st.integers(0, len(d["otherData"]["ctas"]) - 1))
        key = data.draw(st.sampled_from(sorted(d["otherData"]["ctas"][i])))
        d["otherData"]["ctas"][i][key] = data.draw(_ODD)
    else:
        evs = [e for e in d["traceEvents"] if isinstance(e.get("args"), dict) and e.get("cat")]
        ev = evs[data.draw(st.integers(0, len(evs) - 1))]
        target = data.draw(st.sampled_from(["args", "tid", "field"]))
        if target == "field" and ev["args"]:
            ev["args"][data.draw(st.sampled_from(sorted(ev["args"])))] = data.draw(_ODD)
        else:
            ev[target] = data.draw(_ODD)
    _ok_or_clear(lambda: parse_kernel_trace(d, "fuzz.json"))


@settings(max_examples=40)
@given(cut=st.integers(min_value=0, max_value=10**9), seed=st.integers(0, 2**32 - 1))
def test_fuzz_truncated_and_reordered(
    tmp_path_factory, fuzz_text: str, cut: int, seed: int
) -> None:
    d = tmp_path_factory.mktemp("fz")
    p = d / "t.json"
    p.write_text(fuzz_text[: cut % (len(fuzz_text) + 1)])
    _ok_or_clear(lambda: read_kernel_trace(p))
    data = json.loads(fuzz_text)
    random.Random(seed).shuffle(data["traceEvents"])
    _ok_or_clear(lambda: parse_kernel_trace(data, "shuffled.json"))


@settings(max_examples=20)
@given(n=st.integers(min_value=0, max_value=5000), depth=st.integers(min_value=1, max_value=3000))
def test_fuzz_oversized(tmp_path_factory, n: int, depth: int) -> None:
    d = tmp_path_factory.mktemp("big")
    p = d / "t.json"
    p.write_text("[" * depth + "]" * depth)
    _ok_or_clear(lambda: read_kernel_trace(p))
    big = {"traceEvents": [{"cat": "stage", "tid": 10**30, "args": {}}] * n, "otherData": {}}
    _ok_or_clear(lambda: parse_kernel_trace(big, "big.json"))
