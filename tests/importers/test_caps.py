"""Caps on streamed input: bytes, gzip contents inflated chunk by chunk, record counts;
each refusal exit 2 naming the cap and the flag that raises it."""

from __future__ import annotations

import gzip
import json
import tracemalloc
import zlib
from pathlib import Path

import numpy as np
import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.importers import caps, load_trace
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.ktrace import parse_ktrace, read_ktrace
from kda_sim.kernels.k1.stamps import read_stamps, stamps_timeline
from kda_sim.timeline.model import Timeline


def parse_upload(name: str, data: bytes):  # the app's upload path (needs the app extra)
    pytest.importorskip("streamlit")
    from kda_sim.app.data import parse_upload as parse

    return parse(name, data)


FIXTURES = Path(__file__).parent / "fixtures"
KTRACE = FIXTURES / "kda_pre_R1_L1_ktrace.pftrace.gz"
BOMB_INFLATED = 256 << 20  # what the bomb inflates to: 256 MB of spaces


@pytest.fixture(autouse=True)
def _restore_caps():
    yield
    caps.set_caps(caps.DEFAULT_MAX_INPUT_MB, caps.DEFAULT_MAX_EVENTS)


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """A gzip stream of a few hundred KB that inflates to 256 MB."""
    z = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    parts = [z.compress(block) for _ in range(BOMB_INFLATED >> 20)]
    return b"".join(parts) + z.flush()


def test_bomb_is_refused_before_it_is_inflated(bomb: bytes) -> None:
    assert len(bomb) < 1 << 20
    caps.set_caps(max_input_mb=1)
    tracemalloc.start()
    try:
        with pytest.raises(TraceFormatError, match=r"decompresses past the input cap of 1 MB"):
            caps.inflate_capped(bomb, "bomb.json.gz")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # inflated a chunk at a time: at most the cap plus a chunk or two, not 256 MB
    assert peak < 8 << 20


def test_a_stream_under_the_cap_inflates_whole_and_damage_is_named() -> None:
    data = b"x" * (3 << 20)  # several chunks
    assert caps.inflate_capped(gzip.compress(data), "a") == data
    with pytest.raises(TraceFormatError, match="truncated"):
        caps.inflate_capped(gzip.compress(data)[:-20], "a")
    with pytest.raises(TraceFormatError, match="corrupt gzip"):
        caps.inflate_capped(b"\x1f\x8b" + b"\x00" * 30, "a")


def test_trace_bomb_file_and_upload(tmp_path: Path, bomb: bytes) -> None:
    p = tmp_path / "t.json.gz"
    p.write_bytes(bomb)
    caps.set_caps(max_input_mb=4)
    with pytest.raises(TraceFormatError, match="--max-input-mb") as e:
        read_kernel_trace(p)
    assert str(p) in str(e.value)
    with pytest.raises(TraceFormatError, match="decompresses past the input cap"):
        parse_upload("t.json.gz", bomb)


def test_file_over_the_byte_cap_is_refused_unread(tmp_path: Path) -> None:
    caps.set_caps(max_input_mb=0.001)  # 1048 bytes
    big = tmp_path / "s.npy"
    np.save(big, np.zeros((64, 15), dtype=np.int64))
    kt = tmp_path / "k.pftrace.gz"
    kt.write_bytes(b"\x1f\x8b" + b"\x00" * 2000)
    for path, read in ((big, read_stamps), (kt, read_ktrace)):
        with pytest.raises(TraceFormatError, match=r"\d+ bytes past the input cap"):
            read(path, R=1, L=1)
    with pytest.raises(TraceFormatError, match="past the input cap"):
        parse_upload("u.json", b" " * 2000)


def test_record_caps(sim_timeline: Timeline, chrome_text: str) -> None:
    n_events = len(json.loads(chrome_text)["traceEvents"])
    caps.set_caps(max_events=n_events - 1)
    with pytest.raises(TraceFormatError, match=r"trace events: past the record cap.*--max-events"):
        parse_upload("t.json", chrome_text.encode())
    caps.set_caps(max_events=n_events)
    assert parse_upload("t.json", chrome_text.encode()).makespan == pytest.approx(
        sim_timeline.makespan
    )
    arr = np.zeros((5, 15), dtype=np.int64)  # refused on its row count, before decoding
    caps.set_caps(max_events=4)
    with pytest.raises(TraceFormatError, match=r"CTAs \(stamp rows\).*--max-events"):
        stamps_timeline(arr, R=1, L=1)
    caps.set_caps(max_events=3)
    with pytest.raises(TraceFormatError, match=r"track .*--max-events"):
        parse_ktrace(KTRACE.read_bytes(), R=1, L=1)


def test_caps_themselves_are_checked() -> None:
    for bad in (0, -1, float("nan"), float("inf")):
        with pytest.raises(InvalidInput, match="--max-input-mb"):
            caps.set_caps(max_input_mb=bad)
    for bad in (0, True, 2.5):
        with pytest.raises(InvalidInput, match="--max-events"):
            caps.set_caps(max_events=bad)  # type: ignore[arg-type]


def test_cli_names_the_flag_and_the_flag_raises_the_cap(tmp_path: Path, capsys) -> None:
    real = tmp_path / "k.pftrace.gz"
    real.write_bytes(KTRACE.read_bytes())
    args = ["compare", str(real), "--R", "1", "--L", "1", "--json"]
    assert main([*args, "--max-input-mb", "0.0001"]) == 2
    err = capsys.readouterr().err
    assert "past the input cap of 0.0001 MB (raise it with --max-input-mb)" in err
    assert main([*args, "--max-events", "2"]) == 2
    assert "--max-events" in capsys.readouterr().err
    assert main([*args, "--max-input-mb", "1"]) in (0, 1)  # read and compared
    assert "past the input cap" not in capsys.readouterr().err
    # a run without the flags reads under the defaults, not the last run's flags
    assert main([*args, "--max-events", "100000"]) in (0, 1)
    assert caps.max_input_bytes() == caps.DEFAULT_MAX_INPUT_MB << 20
    assert load_trace(real, R=1, L=1).ctas


def test_a_launch_of_more_ctas_than_a_timeline_holds_is_refused_before_it_is_built(
    tmp_path: Path, capsys
) -> None:
    from kda_sim.timeline.limits import MAX_CTAS

    arr = np.zeros((MAX_CTAS + 1, 15), dtype=np.int64)
    with pytest.raises(TraceFormatError, match=rf"a launch of {MAX_CTAS + 1} CTAs.*{MAX_CTAS}"):
        stamps_timeline(arr, R=1, L=1)
    np.save(tmp_path / "big.npy", arr)
    assert main(["compare", str(tmp_path / "big.npy"), "--R", "1", "--L", "1"]) == 2
    assert f"big.npy: a launch of {MAX_CTAS + 1} CTAs" in capsys.readouterr().err


def test_read_inflated_reads_a_file_plain_or_gzipped(tmp_path: Path) -> None:
    from kda_sim.importers.caps import read_inflated

    body = b'{"traceEvents": []}'
    plain, packed = tmp_path / "a.json", tmp_path / "a.json.gz"
    plain.write_bytes(body)
    packed.write_bytes(gzip.compress(body))
    assert read_inflated(plain) == read_inflated(packed) == body
    packed.write_bytes(gzip.compress(body)[:-4])  # cut short: refused, named
    with pytest.raises(TraceFormatError, match="gzip") as e:
        read_inflated(packed)
    assert str(packed) in str(e.value)
