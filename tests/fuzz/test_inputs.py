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
SECONDS = 30  # one case ends within this (the bound), on a loaded 2-core machine too
SCALE = float(os.environ.get("KDA_FUZZ_SCALE", "1"))
# cases a path in CI (reading a trace and checking it against its launch: 0.1 to 0.5 s)
BUDGET = {
    "costs": 40,
    "chrome": 10,
    "ktrace": 15,
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

CHROME = (ROOT / "traces" / "k1_h200_R1_L1.json").read_bytes()


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
        ["compare", str(ROOT / "traces" / "k1_h200_R1_L1.json"), "--json"],
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
