"""Fuzz: every input path the user gives us -- a kernel's costs file, a Chrome trace,
a ktrace file, a stamp tensor, a kernel file, an ISA text and the CLI's flags -- each
mutated (bad numbers, deleted, doubled, joined and cut lines, flipped bytes, wrong
types) and read the way the commands read it. The contract: the input is taken, or
refused with :class:`InvalidInput` (exit 2) whose message names the file (or the flag);
never another exception, never a hang (each case under :data:`SECONDS`).

Budgets: CI runs a few cases a path (:data:`BUDGET`, about 20 s in all on a 2-core
machine); ``KDA_FUZZ_SCALE=N`` multiplies them for a long run. Cases it once found are
kept in ``tests/fuzz/corpus/`` (one file a case, named for its path) and run every time.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import math
import os
import re
import signal
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from kda_sim.cli import main
from kda_sim.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).parent / "corpus"
SECONDS = 30  # one case ends within this (the issue's bound), on a loaded 2-core machine too
SCALE = float(os.environ.get("KDA_FUZZ_SCALE", "1"))
# cases a path in CI (reading a trace and checking it against its launch: 0.1 to 0.5 s)
BUDGET = {
    "costs": 40,
    "chrome": 10,
    "ktrace": 15,
    "ktrace_records": 40,
    "stamps": 15,
    "kernel_file": 15,
    "isa": 25,
    "flags": 10,
}

# tokens a number in a text input is replaced with: malformed, non-finite, out of range
BAD_NUMBERS = [
    "nan",
    "NaN",
    "Infinity",
    "-Infinity",
    "inf",
    "-1",
    "0",
    "08",
    "0x",
    "zero",
    "1e400",
    "-1e-9",
    "1e30",
    "4294967296",
    "9" * 25,
    "9" * 5000,
    "",
    "true",
    '"1"',
    "null",
    "[]",
    "{}",
]
NUMBER = re.compile(rb"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")


OUTCOMES: Counter[str] = Counter()  # path: outcome -> cases (a long run prints them)


class Hang(Exception):
    pass


@contextlib.contextmanager
def bounded(seconds: int = SECONDS) -> Iterator[None]:
    def alarm(signum: int, frame: Any) -> None:
        raise Hang

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def contract(run: Callable[[], Any], names: str, what: str) -> str:
    """Run one case: "taken" or "refused" (an InvalidInput naming ``names``); anything
    else fails, naming the case ``what``."""
    try:
        with bounded():
            run()
    except Hang:
        pytest.fail(f"no answer within {SECONDS} s: {what}")
    except InvalidInput as e:
        assert names in str(e), f"{e!s:.300} does not name {names}: {what}"
        OUTCOMES[f"{what}: refused"] += 1
        return "refused"
    OUTCOMES[f"{what}: taken"] += 1
    return "taken"


def cli(argv: list[str], names: list[str], what: str) -> int:
    """``kda-sim ARGV`` in this process: exit 0 or 1 (a property), or 2 with a message
    naming one of ``names``; no traceback, no hang."""
    err = io.StringIO()
    out = io.StringIO()
    try:
        with bounded(), contextlib.redirect_stderr(err), contextlib.redirect_stdout(out):
            rc = main(argv)
    except Hang:
        pytest.fail(f"no answer within {SECONDS} s: kda-sim {' '.join(argv)} ({what})")
    except SystemExit as e:  # argparse's refusal of a flag
        rc = e.code if isinstance(e.code, int) else 2
        assert rc == 2, f"exit {e.code}: {what}"
    assert rc in (0, 1, 2), f"exit {rc}: {what}"
    OUTCOMES[f"flags: exit {rc}"] += 1
    if rc == 2:
        said = err.getvalue()
        assert any(n in said for n in names), f"{said!r:.300} names none of {names}: {what}"
    json.dumps(out.getvalue())  # printable: no lone surrogate reached stdout unescaped
    return rc


@st.composite
def mutated_text(draw: st.DrawFn, base: bytes, edits: int = 3) -> bytes:
    """``base`` with 1 to ``edits`` edits: a number replaced by a bad token, a line
    deleted, doubled or joined to the next, the text cut short, a byte flipped or a
    non-UTF-8 byte put in."""
    data = base
    for _ in range(draw(st.integers(1, edits))):
        op = draw(st.sampled_from(["number", "number", "delete", "double", "join", "cut", "byte"]))
        lines = data.split(b"\n")
        if op == "number":
            spots = list(NUMBER.finditer(data))
            if not spots:
                continue
            m = spots[draw(st.integers(0, len(spots) - 1))]
            bad = draw(st.sampled_from(BAD_NUMBERS)).encode()
            data = data[: m.start()] + bad + data[m.end() :]
        elif op in ("delete", "double", "join") and len(lines) > 1:
            i = draw(st.integers(0, len(lines) - 2))
            if op == "delete":
                del lines[i]
            elif op == "double":
                lines.insert(i, lines[i])
            else:
                lines[i : i + 2] = [lines[i] + lines[i + 1]]
            data = b"\n".join(lines)
        elif op == "cut":
            data = data[: draw(st.integers(0, len(data)))]
        elif data:
            i = draw(st.integers(0, len(data) - 1))
            data = (
                data[:i]
                + bytes([draw(st.sampled_from([0x00, 0xFF, 0xC3, 0x22, 0x7B]))])
                + data[i + 1 :]
            )
    return data


def _settings(path: str) -> settings:
    return settings(
        max_examples=max(1, round(BUDGET[path] * SCALE)),
        derandomize=True,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )


def _corpus(path: str) -> list[Path]:
    return sorted(CORPUS.glob(f"{path}--*"))


def _write(tmp: str, name: str, data: bytes) -> Path:
    p = Path(tmp) / name
    p.write_bytes(data)
    return p


# --- a kernel's costs file (GPU-KERNEL costs, read by --profile and --gpu) ---------------

COSTS = (ROOT / "kda_sim" / "kernels" / "k1" / "costs" / "h200.json").read_bytes()


def costs_case(data: bytes) -> str:
    from kda_sim.engine import simulate
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.machine.profile import load_profile

    with tempfile.TemporaryDirectory() as tmp:
        f = _write(tmp, "c.json", data)

        def run() -> None:
            res = simulate(LaunchConfig(1, 1), load_profile(str(f)))
            span = res.timeline.makespan
            assert span is None or (math.isfinite(span) and span >= 0), span

        return contract(run, str(f), "costs")


@_settings("costs")
@given(mutated_text(COSTS))
def test_costs_file(data: bytes) -> None:
    costs_case(data)


# --- our Chrome trace JSON (compare, calibrate, simulate --like, the app) -----------------

CHROME = gzip.decompress((ROOT / "traces" / "k1_h200_R1_L1.json.gz").read_bytes())


def trace_case(name: str, data: bytes, **shape: Any) -> str:
    from kda_sim.importers import load_trace
    from kda_sim.importers.claimed_launch import check_claimed_launch

    with tempfile.TemporaryDirectory() as tmp:
        f = _write(tmp, name, data)

        def run() -> None:
            tl = load_trace(f, **shape)
            check_claimed_launch(tl, str(f))
            for c in tl.ctas:  # nothing past the boundary sees a non-finite time
                for s in c.stages:
                    assert math.isfinite(s.start) and math.isfinite(s.end), (c.cta, s)

        return contract(run, str(f), name)


@_settings("chrome")
@given(mutated_text(CHROME), st.booleans())
def test_chrome_trace(data: bytes, zipped: bool) -> None:
    trace_case("t.json.gz" if zipped else "t.json", gzip.compress(data) if zipped else data)


# --- FlyDSL ktrace (Perfetto protobuf, gzip) ----------------------------------------------

KTRACE = gzip.decompress(
    (ROOT / "tests" / "importers" / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz").read_bytes()
)


@st.composite
def mutated_bytes(draw: st.DrawFn, base: bytes) -> bytes:
    """Protobuf bytes with 1 to 4 bytes set, a run cut out or doubled, or cut short."""
    data = bytearray(base)
    for _ in range(draw(st.integers(1, 4))):
        op = draw(st.sampled_from(["set", "set", "drop", "double", "cut"]))
        i = draw(st.integers(0, max(0, len(data) - 1)))
        if op == "set" and data:
            data[i] = draw(st.integers(0, 255))
        elif op == "drop":
            del data[i : i + draw(st.integers(1, 64))]
        elif op == "double":
            n = draw(st.integers(1, 64))
            data[i:i] = data[i : i + n]
        else:
            del data[i:]
    return bytes(data)


@_settings("ktrace")
@given(mutated_bytes(KTRACE), st.booleans())
def test_ktrace(data: bytes, zipped: bool) -> None:
    trace_case("k.pftrace.gz", gzip.compress(data) if zipped else data, R=1, L=1)


# --- ktrace, structure-aware: its records decoded, edited as records, encoded again -------
#
# The byte mutations above mostly break the protobuf; these keep it well formed and break
# what it says: records dropped, doubled, swapped or cut off, tracks renamed (a workgroup
# outside the launch, a 5,000-digit id, a wave under no CU), times running backwards or
# past any clock, huge and negative payloads, a trace of two workgroups. Each is read as
# the commands read it and, when taken, checked against its launch independently
# (:func:`ktrace_taken_is_whole_or_partial`): a CTA it holds in part is named partial.


def _varint(n: int) -> bytes:
    out = bytearray()
    while n >= 0x80:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _key(num: int, wire: int) -> bytes:
    return _varint(num << 3 | wire)


def _len(num: int, data: bytes) -> bytes:
    return _key(num, 2) + _varint(len(data)) + data


def _payload(value: Any) -> bytes:
    """A ``payload`` debug annotation of ``value``'s type (None: none)."""
    if value is None:
        return b""
    if isinstance(value, bool):
        body = _key(2, 0) + _varint(int(value))
    elif isinstance(value, int):
        body = _key(4, 0) + _varint(value % (1 << 64) if value < 0 else value)
    elif isinstance(value, float):
        body = _key(5, 1) + np.float64(value).tobytes()
    else:
        body = _len(6, str(value).encode())
    return _len(4, _len(10, b"payload") + body)


def encode_ktrace(records: list[tuple]) -> bytes:
    """gzip'd Perfetto packets: ``("track", uuid, name, parent)`` a track descriptor,
    ``("event", ts, kind, track, name, payload)`` a track event (the fields
    :mod:`kda_sim.importers.ktrace` reads); a name is text or raw bytes."""
    out = bytearray()
    for rec in records:
        if rec[0] == "track":
            _, uuid, name, parent = rec
            body = _key(1, 0) + _varint(uuid)
            body += _len(2, name if isinstance(name, bytes) else name.encode())
            body += b"" if parent is None else _key(5, 0) + _varint(parent)
            packet = _len(60, body)
        else:
            _, ts, kind, track, name, payload = rec
            body = _key(9, 0) + _varint(kind) + _key(11, 0) + _varint(track)
            if name is not None:
                body += _len(23, name if isinstance(name, bytes) else name.encode())
            packet = _key(8, 0) + _varint(ts) + _len(11, body + _payload(payload))
        out += _len(1, packet)
    return gzip.compress(bytes(out), mtime=0)


def decode_ktrace(raw: bytes) -> list[tuple]:
    """The fixture's records, as :func:`encode_ktrace` takes them (tracks first)."""
    from kda_sim.importers.ktrace import decode_packets

    tracks, events = decode_packets(gzip.decompress(raw), "fixture")
    out: list[tuple] = [("track", t.uuid, t.name, t.parent) for t in tracks.values()]
    return out + [("event", e.ts, e.kind, e.track, e.name, e.payload) for e in events]


KTRACE_RECORDS = decode_ktrace(
    (ROOT / "tests" / "importers" / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz").read_bytes()
)
HUGE_ID = "9" * 5000  # past int()'s 4,300 digits
TRACK_NAMES = [
    "WG(2, 0, 0)",  # a workgroup the fixture has not: another CTA's
    "WG(255, 0, 0)",
    "WG(256, 0, 0)",  # past the launch's 256
    "WG(65536, 0, 0)",
    f"WG({2**64}, 0, 0)",
    f"WG({HUGE_ID}, 0, 0)",
    "WG(0, 0, 0)",  # a second track of workgroup 0
    "WG(1, 0)",
    "XCD99/SE9/SH9/CU99",
    f"XCD{HUGE_ID}/SE0/SH0/CU0",
    "CU0",
    "launch 2 (queue 1234, dispatch 7)",
    f"launch {HUGE_ID} (queue 1, dispatch 1)",
    "Wave0",
    "",
    b"Wave\xff",
]
EVENT_NAMES = [
    "slice",
    "k.norm",
    "gemv1",
    "Wave Span",
    "poll PART",
    "poll NOPE",
    "put XRDY",
    "put",
    "slice (unclosed)",
    "k.stage (unclosed)",
    "cta end",
    "",
    None,
    b"\xc3",
]
TIMES = [0, 1, 2**31, 2**53 + 1, 10**15 + 1, 2**63, 2**64 - 1, 2**69]
PAYLOADS = [None, -1, 0, 1, 55, 56, 2**31, 2**40 + 1, 2**62, 2**64 - 1, 2**69, 1.5, math.nan]
PAYLOADS += [True, "x", HUGE_ID]


KTRACE_EDITS = ["drop", "double", "swap", "cut", "rename", "parent", "name", "time", "back"]
KTRACE_EDITS += ["payload", "kind", "flood", "workgroups"]


@st.composite
def mutated_ktrace(draw: st.DrawFn) -> list[tuple]:
    """The fixture's records with 1 to 3 structural edits."""
    recs = list(KTRACE_RECORDS)
    for _ in range(draw(st.integers(1, 3))):
        if not recs:
            break
        op = draw(st.sampled_from(KTRACE_EDITS))
        i = draw(st.integers(0, len(recs) - 1))
        r = recs[i]
        if op == "drop":
            del recs[i]
        elif op == "double":
            recs.insert(i, r)
        elif op == "swap":
            j = draw(st.integers(0, len(recs) - 1))
            recs[i], recs[j] = recs[j], recs[i]
        elif op == "cut":
            recs = recs[:i]
        elif op in ("rename", "parent"):
            tracks = [k for k, x in enumerate(recs) if x[0] == "track"]
            if not tracks:
                continue
            k = tracks[draw(st.integers(0, len(tracks) - 1))]
            t = recs[k]
            if op == "rename":
                recs[k] = (*t[:2], draw(st.sampled_from(TRACK_NAMES)), t[3])
            else:  # itself, a track never described, or none
                parent = draw(st.sampled_from([t[1], 10**6, None, 2**64 - 1]))
                recs[k] = (*t[:3], parent)
        elif r[0] != "event":
            continue
        elif op == "name":
            recs[i] = (*r[:4], draw(st.sampled_from(EVENT_NAMES)), r[5])
        elif op == "time":
            recs[i] = (r[0], draw(st.sampled_from(TIMES)), *r[2:])
        elif op == "back":  # earlier than it was: a clock running backwards
            recs[i] = (r[0], max(0, r[1] - draw(st.sampled_from([1, 100, 10**4, 10**6]))), *r[2:])
        elif op == "payload":
            recs[i] = (*r[:5], draw(st.sampled_from(PAYLOADS)))
        elif op == "kind":
            recs[i] = (r[0], r[1], draw(st.sampled_from([0, 1, 2, 3, 4, 2**32])), *r[3:])
        elif op == "flood":  # one record many times: counts far past the launch's
            recs[i:i] = [r] * draw(st.sampled_from([50, 3000]))
        else:  # a trace of one or two workgroups: the others' events dropped
            keep = set(draw(st.lists(st.sampled_from([0, 1, 55, 56, 252]), min_size=1, max_size=2)))
            recs = [x for x in recs if x[0] == "track" or _workgroup(recs, x[3]) in keep]
    return recs


def _workgroup(recs: list[tuple], uuid: int) -> int | None:
    """The workgroup x a track hangs under (None: none, or a broken chain)."""
    by = {r[1]: r for r in recs if r[0] == "track"}
    seen: set[int] = set()
    while uuid in by and uuid not in seen:
        seen.add(uuid)
        name = by[uuid][2]
        m = re.match(r"WG\((\d{1,6}), ", name) if isinstance(name, str) else None
        if m:
            return int(m.group(1))
        uuid = by[uuid][3]
    return None


def ktrace_taken_is_whole_or_partial(tl: Any) -> None:
    """What a taken ktrace must be, checked apart from the readers: times finite and
    within a clock's reach, counts within a launch's; every CTA either recorded whole (it
    ended and holds every stage its program runs) or one the partial-trace note names."""
    from kda_sim.kernels.registry import get
    from kda_sim.protocol.ops import Begin
    from kda_sim.timeline.schema import MAX_ABS_NS, MAX_COUNT
    from kda_sim.timeline.summary import unrecorded_ctas

    nothing, unfinished = unrecorded_ctas(tl)
    named = set(nothing) | set(unfinished)
    cfg = tl.meta.config()
    programs = get(tl.meta.kernel).build(cfg).programs
    for c, prog in zip(tl.ctas, programs, strict=True):
        times = [c.start, c.end, *(t for s in c.stages for t in (s.start, s.end))]
        times += [t for p in c.polls for t in (p.first_issue, p.satisfied)]
        times += [u.time for u in c.puts]
        for t in times:
            assert t is None or (math.isfinite(t) and abs(t) <= MAX_ABS_NS), (c.cta, t)
        for p in c.polls:
            assert p.retries is None or 0 <= p.retries <= MAX_COUNT, (c.cta, p)
        for u in c.puts:
            assert abs(u.first) <= MAX_COUNT, (c.cta, u)
        if c.cta in named:
            continue
        want = {(op.stage, op.task) for op in prog.ops if isinstance(op, Begin)}
        got = {(s.name, s.task) for s in c.stages}
        assert c.finished and want <= got, f"CTA {c.cta}: whole? missing {sorted(want - got)}"


def ktrace_case(data: bytes) -> str:
    from kda_sim.importers import load_trace
    from kda_sim.importers.claimed_launch import check_claimed_launch

    with tempfile.TemporaryDirectory() as tmp:
        f = _write(tmp, "k.pftrace.gz", data)

        def run() -> None:
            tl = load_trace(f, R=1, L=1)
            check_claimed_launch(tl, str(f))
            ktrace_taken_is_whole_or_partial(tl)

        return contract(run, str(f), "ktrace records")


def test_the_encoder_gives_the_fixture_back() -> None:
    """Decoded and encoded again, the fixture reads as it does (the edits below are
    edits of the fixture, nothing else)."""
    from kda_sim.importers import load_trace

    ours = load_trace(ROOT / "tests/importers/fixtures/kda_pre_R1_L1_ktrace.pftrace.gz", R=1, L=1)
    with tempfile.TemporaryDirectory() as tmp:
        again = load_trace(_write(tmp, "k.pftrace.gz", encode_ktrace(KTRACE_RECORDS)), R=1, L=1)
    assert [c.stages for c in again.ctas] == [c.stages for c in ours.ctas]
    assert [c.polls for c in again.ctas] == [c.polls for c in ours.ctas]
    assert ktrace_case(encode_ktrace(KTRACE_RECORDS)) == "taken"


@_settings("ktrace_records")
@given(mutated_ktrace())
def test_ktrace_records(records: list[tuple]) -> None:
    ktrace_case(encode_ktrace(records))


def test_a_two_workgroup_ktrace_is_never_said_to_conform(tmp_path: Path, capsys) -> None:
    """Two workgroups of K1's 256, claimed as a K1 launch: compared, the trace is named
    partial with the CTAs it lacks, never "conforms"."""
    keep = [
        r for r in KTRACE_RECORDS if r[0] == "track" or _workgroup(KTRACE_RECORDS, r[3]) in {0, 56}
    ]
    f = tmp_path / "two.pftrace.gz"
    f.write_bytes(encode_ktrace(keep))
    assert main(["compare", str(f), "--R", "1", "--L", "1", "--json"]) == 1  # not conforming
    report = json.loads(capsys.readouterr().out)
    conf = report["conformance"]
    assert not conf["conforms"] and conf["partial"]["unrecorded_ctas"][:3] == [1, 2, 3]


# --- stamp tensors (.npy; .pt goes through torch's own loader to the same array) ----------


def _stamps() -> np.ndarray:
    from kda_sim.engine import simulate
    from kda_sim.kernels.k1.config import LaunchConfig
    from kda_sim.machine.profile import load_profile

    tl = simulate(LaunchConfig(1, 1), load_profile("mi355x")).timeline
    point = {"slice": 1, "gate": 2, "mix": 3, "load_x": 4, "gemv0": 5, "gemv1": 6}
    point |= {n: 7 + i for i, n in enumerate(("k.stage", "k.conv", "k.gates", "k.recur", "k.norm"))}
    arr = np.zeros((len(tl.ctas), 15), dtype=np.int64)
    for c in tl.ctas:
        arr[c.cta, 0] = 10**9 + round(c.start / 10)
        for s in c.stages:
            arr[c.cta, point[s.name]] = 10**9 + round(s.end / 10)
        if c.role == "attn" and arr[c.cta, 2] == 0:
            arr[c.cta, 2] = arr[c.cta, 1]
    return arr


STAMPS = _stamps()
STAMP_VALUES = [0, -1, 1, 2**62, 2**63 - 1, -(2**63), 10**9, 10**9 + 10**7]


@st.composite
def mutated_stamps(draw: st.DrawFn) -> bytes:
    arr = STAMPS.copy()
    op = draw(st.sampled_from(["cells", "cells", "rows", "shape", "dtype", "header"]))
    if op == "cells":
        for _ in range(draw(st.integers(1, 6))):
            i = draw(st.integers(0, arr.shape[0] - 1))
            j = draw(st.integers(0, arr.shape[1] - 1))
            arr[i, j] = draw(
                st.one_of(st.sampled_from(STAMP_VALUES), st.integers(10**9 - 10, 10**9 + 10**5))
            )
    elif op == "rows":
        arr = arr[: draw(st.integers(0, arr.shape[0]))]
    elif op == "shape":
        arr = arr.reshape(draw(st.sampled_from([(-1,), (arr.shape[0] // 2, 30), (1, -1)])))
    buf = io.BytesIO()
    if op == "dtype":
        np.save(buf, arr.astype(draw(st.sampled_from([np.float64, np.uint64, np.bool_, np.int8]))))
        return buf.getvalue()
    np.save(buf, arr)
    data = buf.getvalue()
    if op == "header":
        data = draw(mutated_bytes(data[:160])) + data[160:]
    return data


@_settings("stamps")
@given(mutated_stamps())
def test_stamps(data: bytes) -> None:
    trace_case("s.npy", data, R=1, L=1)


# --- a kernel file (--kernel FILE.py) -----------------------------------------------------

PINGPONG = (ROOT / "kda_sim" / "kernels" / "examples" / "pingpong.py").read_text()
KERNEL_AT = PINGPONG.index("KERNEL = Kernel(")
KERNEL_FIELDS = re.findall(r"^    (\w+)=", PINGPONG[KERNEL_AT:], re.M)
BAD_VALUES = [
    "None",
    "0",
    "-1",
    "float('nan')",
    "float('inf')",
    "10**40",
    "''",
    "'x'",
    "()",
    "('a', 'a')",
    "('',)",
    "{}",
    "{'nope': '#000'}",
    "{'pp.produce': (float('nan'), 0.0), 'pp.consume': (400.0, 0.0)}",
    "{'pp.produce': (-1.0, 0.0), 'pp.consume': (400.0, 0.0)}",
    "[1, 2]",
    "True",
]


def kernel_file_case(field: str, value: str, name: str) -> str:
    from kda_sim.engine import simulate
    from kda_sim.kernels.registry import load_kernel
    from kda_sim.machine.costs import profile_for

    text = PINGPONG.replace('name="pingpong"', f'name="{name}"')
    text = re.sub(rf"^    {field}=.*,$", f"    {field}={value},", text, flags=re.M)
    with tempfile.TemporaryDirectory() as tmp:
        f = _write(tmp, f"{name}.py", text.encode())

        def run() -> None:
            spec = load_kernel(f)
            cfg = spec.default_config()
            res = simulate(cfg, profile_for("h200", spec))
            span = res.timeline.makespan
            assert span is None or (math.isfinite(span) and span >= 0), span

        return contract(run, name, "kernel file")


@_settings("kernel_file")
@given(st.sampled_from(KERNEL_FIELDS), st.sampled_from(BAD_VALUES), st.integers(0, 10**6))
def test_kernel_file(field: str, value: str, n: int) -> None:
    kernel_file_case(field, value, f"fuzzed{n}")


# --- ISA text (kda-sim isa FILE) ----------------------------------------------------------

ISA = (ROOT / "tests" / "isa" / "fixtures" / "gfx950" / "publish_drained.s").read_bytes()


def isa_case(data: bytes) -> str:
    from kda_sim.isa.analyze import analyze_path

    with tempfile.TemporaryDirectory() as tmp:
        f = _write(tmp, "k.s", data)
        return contract(lambda: analyze_path(f).render(), str(f), "isa")


@_settings("isa")
@given(mutated_text(ISA))
def test_isa(data: bytes) -> None:
    isa_case(data)


# --- the CLI's flags ----------------------------------------------------------------------

FLAG_VALUES = [
    *("nan", "inf", "-1", "0", "1e400", "x", "", "9" * 5000, "1", "2", "0.5", "-0"),
    *("h200", "x" * 5000 + ".json", "/", "no.json"),  # for --gpu and --profile
]
ALIASES = {
    "--gpu": ("GPU", "profile"),
    "--profile": ("profile", ".json"),
}  # --gpu takes a .json too
COMMANDS = {
    "simulate": (
        ["simulate", "--R", "1", "--L", "1"],
        ["--seed", "--jitter", "--R", "--L", "--nb", "--kda0", "--occupancy", "--gpu", "--profile"],
    ),
    "floor": (["floor", "--R", "1", "--L", "1"], ["--poll-ns", "--R", "--L", "--occupancy"]),
    "compare": (
        ["compare", str(ROOT / "traces" / "k1_h200_R1_L1.json.gz"), "--json"],
        ["--tolerance", "--rows", "--max-input-mb", "--max-events", "--R", "--L"],
    ),
}


@_settings("flags")
@given(
    st.sampled_from(sorted(COMMANDS)),
    st.lists(st.tuples(st.integers(0, 99), st.sampled_from(FLAG_VALUES)), min_size=1, max_size=2),
)
@example("floor", [(0, "-1")])  # refused by the floor's check, naming no flag
@example("simulate", [(8, "x" * 5000 + ".json")])  # --profile: OSError, name too long
@example("simulate", [(7, "x" * 5000 + ".json")])  # --gpu: its message names the profile
def test_flags(command: str, flags: list[tuple[int, str]]) -> None:
    argv, names = COMMANDS[command]
    argv = list(argv)
    for k, value in flags:
        argv += [names[k % len(names)], value]
    # a refusal names a flag given, as argparse does (--seed) or as the check does (R;
    # "unknown GPU 'x'" for --gpu, the file for --profile)
    given_flags = {argv[i] for i in range(len(argv)) if argv[i] in names}
    said = [*given_flags, *(f.lstrip("-").replace("-", "_") for f in given_flags)]
    said += [w for f in given_flags for w in ALIASES.get(f, ())]
    cli(argv, said, " ".join(argv))


# --- the corpus: every case a run above once failed on ------------------------------------

READERS: dict[str, Callable[[Path], Any]] = {
    "costs": lambda p: costs_case(p.read_bytes()),
    "chrome": lambda p: trace_case("t.json", p.read_bytes()),
    "ktrace": lambda p: trace_case("k.pftrace.gz", p.read_bytes(), R=1, L=1),
    "ktrace_records": lambda p: ktrace_case(p.read_bytes()),
    "stamps": lambda p: trace_case("s.npy", p.read_bytes(), R=1, L=1),
    "isa": lambda p: isa_case(p.read_bytes()),
    "kernel_file": lambda p: kernel_file_case(*json.loads(p.read_text()), "corpus"),
}


@pytest.mark.parametrize(
    "case", [p for path in READERS for p in _corpus(path)], ids=lambda p: p.name
)
def test_corpus(case: Path) -> None:
    """Each kept case is malformed: refused, naming its file (or kernel), exit 2."""
    assert READERS[case.name.split("--")[0]](case) == "refused"


def test_outcomes_are_reported() -> None:
    """Last: what the cases came to, by path (``-s`` shows it)."""
    print(dict(sorted(OUTCOMES.items())))
