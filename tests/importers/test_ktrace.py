"""FlyDSL ktrace's Perfetto file: the committed fixture (written by flydsl's own writer,
``make_ktrace_fixture.py``), the hand-written protobuf reader, and fuzzed files."""

from __future__ import annotations

import gzip
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers import load_trace
from kda_sim.importers.protowire import WireError, fields, read_varint
from kda_sim.kernels.k1.ktrace import parse_ktrace, read_ktrace

FIXTURE = Path(__file__).parent / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz"
SOURCE = Path(__file__).parent / "fixtures" / "ktrace_source_R1_L1.json.gz"  # what it was made from


@pytest.fixture(scope="module")
def raw() -> bytes:
    return FIXTURE.read_bytes()


@pytest.fixture(scope="module")
def packets(raw: bytes) -> list[bytes]:
    data = gzip.decompress(raw)
    out = []
    for _num, _wt, v, _at in fields(data):
        out.append(bytes(v))
    return out


def encode(packets: list[bytes]) -> bytes:
    def varint(n: int) -> bytes:
        b = bytearray()
        while n >= 0x80:
            b.append((n & 0x7F) | 0x80)
            n >>= 7
        b.append(n)
        return bytes(b)

    return gzip.compress(b"".join(b"\x0a" + varint(len(p)) + p for p in packets))


def test_fixture_reads_into_the_timeline() -> None:
    tl = load_trace(FIXTURE, R=1, L=1)
    assert tl.meta.extra["ctas_recorded"] == [0, 1, 55, 56, 57, 252, 253, 255]
    c0 = tl.ctas[0]
    assert [s.name for s in c0.stages] == [
        "slice",
        "gate",
        "mix",
        "k.stage",
        "k.conv",
        "k.gates",
        "k.recur",
        "k.norm",
    ]
    assert [p.label for p in c0.polls] == [
        "PART",
        "WGT",
        "MSQ",
        "PROJ",
        "PROJ",
        "QK",
        "PROJ",
        "ONRM+PROJ",
    ]
    assert [u.region for u in c0.puts] == ["PART", "WGT", "MSQ", "XRDY", "QK", "ONRM"]
    assert all(p.satisfied >= p.first_issue for p in c0.polls)
    g = tl.ctas[56]
    assert g.role == "gemv" and g.xcd is not None and g.unit is not None
    assert [s.task for s in g.stages if s.name.startswith("k.")] == [56] * 5
    assert tl.ctas[2].start is None  # not recorded (the fixture keeps a few CTAs)
    # CTA 0 had two waves: the stage spans are their union (wave 1 stamps a little inside)
    assert c0.stages[0].start == 0.0


def test_fixture_agrees_with_its_source_launch() -> None:
    from kda_sim.importers.chrome import read_kernel_trace

    sim = read_kernel_trace(SOURCE)
    tl = read_ktrace(FIXTURE, R=1, L=1)
    o = sim.origin
    for b in (0, 56, 252):
        for a, s in zip(tl.ctas[b].stages, sim.ctas[b].stages, strict=True):
            assert (a.name, a.task) == (s.name, s.task)
            assert a.start == pytest.approx(s.start - o, abs=10)
            assert a.end == pytest.approx(s.end - o, abs=10)
    # a poll's retries come from its "retries <LABEL>" mark (the K1 records them at the
    # close, a payload FlyDSL's file keeps only on marks and range openings)
    for b in (0, 1, 55, 56, 57, 252, 253):
        got = [(p.label, p.retries) for p in tl.ctas[b].polls]
        assert got == [(p.label, p.retries) for p in sim.ctas[b].polls], f"CTA {b}"
        assert all(r is not None for _, r in got)


def _poll_wave(marks: list[tuple[int, str, object]]) -> dict:
    """One wave of CTA 0 at R = L = 1: its gate stage with one PART poll range (ticks
    100 .. 200) and the instants ``marks``."""
    from kda_sim.importers.ktrace import Span, WaveLog

    spans = [
        Span("Wave Span", 0, 1000, None),
        Span("gate", 50, 500, None),
        Span("poll PART", 100, 200, None),
    ]
    return {(0, "w0"): WaveLog(spans, marks, unit=0, xcd=0)}


def test_retries_marks_in_a_poll_range_add_up_and_strays_are_ignored() -> None:
    """A site polled in several calls (gate_local's PART, once a token) leaves a mark a
    call: the range's retries are their sum; a mark outside every range of its label,
    or without a payload, is counted as ignored, not read."""
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.kernels.k1.ktrace import to_timeline

    cfg = LaunchConfig(1, 1)
    marks = [(120, "retries PART", 3), (200, "retries PART", 4)]
    [p] = to_timeline(_poll_wave(marks), cfg, "mi355x", "t").ctas[0].polls
    assert (p.label, p.first_issue, p.satisfied, p.retries) == ("PART", 100.0, 200.0, 7)
    strays = [(90, "retries PART", 3), (150, "retries WGT", 1), (150, "retries PART", None)]
    tl = to_timeline(_poll_wave(strays), cfg, "mi355x", "t")
    assert tl.ctas[0].polls[0].retries is None and tl.meta.extra["ignored"] == 3
    with pytest.raises(TraceFormatError, match="retries PART: payload -1 is outside 0"):
        to_timeline(_poll_wave([(150, "retries PART", -1)]), cfg, "mi355x", "t")


def test_launch_and_config_errors() -> None:
    with pytest.raises(TraceFormatError, match="no launch 2"):
        read_ktrace(FIXTURE, R=1, L=1, launch=2)
    with pytest.raises(InvalidInput, match="configuration"):
        read_ktrace(FIXTURE, R=1, L=99)


def test_not_gzip_truncated_bad_wire(tmp_path: Path, raw: bytes, packets: list[bytes]) -> None:
    with pytest.raises(TraceFormatError, match="not gzip"):
        parse_ktrace(b"PK\x03\x04", R=1, L=1)
    with pytest.raises(TraceFormatError, match="truncated gzip"):
        parse_ktrace(raw[: len(raw) // 2], R=1, L=1)
    with pytest.raises(TraceFormatError, match="bad protobuf"):
        parse_ktrace(gzip.compress(b"\x0a\xff\xff\xff\xff\x0f"), R=1, L=1)
    with pytest.raises(TraceFormatError, match="wire type 3"):
        parse_ktrace(gzip.compress(b"\x0b"), R=1, L=1)
    with pytest.raises(TraceFormatError, match="no track descriptors"):
        parse_ktrace(gzip.compress(b""), R=1, L=1)
    # every event's track described: drop the descriptors and the reader names the track
    events_only = [p for p in packets if b"\xe2\x03" not in p[:3]]
    with pytest.raises(TraceFormatError):
        parse_ktrace(encode(events_only), R=1, L=1)


def test_unclosed_slice_is_named(packets: list[bytes]) -> None:
    # drop the last slice end: a slice that never ends (a truncated capture)
    ends = [i for i, p in enumerate(packets) if b"\x48\x02" in p]
    cut = packets[: ends[-1]] + packets[ends[-1] + 1 :]
    with pytest.raises(TraceFormatError, match="never ends"):
        parse_ktrace(encode(cut), R=1, L=1)


def test_varint_bounds() -> None:
    assert read_varint(b"\xac\x02", 0, 2) == (300, 2)
    with pytest.raises(WireError, match="truncated"):
        read_varint(b"\x80", 0, 1)
    with pytest.raises(WireError, match="longer than 10"):
        read_varint(b"\xff" * 11 + b"\x01", 0, 12)


def test_decompression_bomb_is_refused(monkeypatch) -> None:
    monkeypatch.setattr("kda_sim.importers.caps._max_bytes", 1000)
    with pytest.raises(TraceFormatError, match="decompresses past the input cap"):
        parse_ktrace(gzip.compress(b"\x00" * 100_000), R=1, L=1)


def _ok_or_clear(data: bytes) -> None:
    try:
        parse_ktrace(data, R=1, L=1)
    except InvalidInput as e:
        assert str(e).strip()


@settings(max_examples=60)
@given(
    cut=st.integers(0, 10**6),
    flips=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6),
)
def test_fuzz_truncated_and_flipped(raw: bytes, cut: int, flips: list[tuple[int, int]]) -> None:
    _ok_or_clear(raw[: cut % (len(raw) + 1)])
    data = bytearray(gzip.decompress(raw))
    for at, byte in flips:
        data[at % len(data)] = byte
    _ok_or_clear(gzip.compress(bytes(data)))


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), drop=st.integers(0, 400))
def test_fuzz_reordered_and_dropped(packets: list[bytes], seed: int, drop: int) -> None:
    ps = list(packets)
    random.Random(seed).shuffle(ps)
    _ok_or_clear(encode(ps))
    ps = list(packets)
    del ps[drop % len(ps)]
    _ok_or_clear(encode(ps))


@settings(max_examples=40)
@given(
    blob=st.binary(max_size=200),
    where=st.integers(0, 10**6),
    n=st.integers(0, 2**64 - 1),
)
def test_fuzz_mistyped_and_oversized(packets: list[bytes], blob: bytes, where: int, n: int) -> None:
    ps = list(packets)
    i = where % len(ps)
    ps[i] = blob  # a packet of arbitrary bytes (a mistyped or foreign message)
    _ok_or_clear(encode(ps))
    # a length prefix far larger than the data (an oversized field)
    big = bytearray(b"\x0a")
    v = n
    while v >= 0x80:
        big.append((v & 0x7F) | 0x80)
        v >>= 7
    big.append(v)
    _ok_or_clear(gzip.compress(bytes(big) + blob))


def test_fixture_is_what_flydsl_writes(tmp_path: Path) -> None:
    """The committed file is reproduced byte for byte by flydsl's own decoder and writer."""
    pytest.importorskip("flydsl")
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    try:
        from make_ktrace_fixture import build
    finally:
        sys.path.pop(0)
    made = build(tmp_path, source=SOURCE)
    assert made.read_bytes() == FIXTURE.read_bytes()


CORPUS = Path(__file__).parents[1] / "fuzz" / "corpus"


@pytest.mark.parametrize(
    ("case", "said"),
    [
        ("workgroup-5000-digits", r"track \d+: track 'WG\(9+.*a number of 5000 digits, at most 9"),
        ("launch-5000-digits", r"a number of 5000 digits"),
        ("xcd-5000-digits", r"a number of 5000 digits"),
        ("se-past-hw-id", r"track \d+: CU track 'XCD0/SE9/SH0/CU0': SE 9 is outside 0 \.\. 3"),
        ("timestamp-2e64", r"track event at byte \d+: timestamp 18446744073709551615 ns is past"),
        ("poll-retries-2e62", r"WG\(0\): poll PROJ: payload 4611686018427387904 is outside 0"),
        ("put-cell-2e62", r"WG\(0\): put QK: payload 4611686018427387904 is outside -1"),
    ],
)
def test_a_record_past_its_bounds_is_refused_naming_it(case: str, said: str) -> None:
    """The structure-aware fuzz's finds (tests/fuzz/test_inputs.py, its corpus): ids past
    int()'s digits, a CU field past HW_ID's bits, times past any clock, payloads past a
    launch's counts."""
    with pytest.raises(TraceFormatError, match=said):
        read_ktrace(CORPUS / f"ktrace_records--{case}.pftrace.gz", R=1, L=1)
