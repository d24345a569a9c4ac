"""Build a ktrace ``.pftrace.gz`` with FlyDSL's own decoder and writer, no GPU needed.

A simulated launch is turned into the raw 32-byte ktrace records a traced kernel
leaves in its buffer (per wave: a header slot, then ``<QQIIII`` records: time in
100 MHz ticks, payload, HW_ID, XCC_ID, packed event id / kind / payload type, start
slot), exactly as flydsl 0.5 lays them out (``expr/rocdl/ktrace_format.py``,
``runtime/device_runtime/rocm_ktrace_buffer.py``). flydsl's ``decode_records`` reads
them back and ``_rocm_ktrace_trace.write_trace`` writes the Perfetto file, so the
fixture is what the real tool writes for those records.

    python tests/importers/make_ktrace_fixture.py OUT_DIR [--all] [--source TIMELINE.json]

Without ``--all`` only a few CTAs of each role are kept (a small fixture to commit),
and the launch they come from is saved next to it (``ktrace_source_R1_L1.json.gz``, those
CTAs only) so the fixture can be rebuilt and checked without the simulator, whose
timings change as the model does. ``--source`` rebuilds from such a file.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import struct
import sys
from pathlib import Path

from kda_sim.engine import simulate
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.model import CtaTrack, Timeline

KIND_MARK, KIND_PUSH, KIND_POP = 0, 1, 2
ENC_INT64 = 1
SLOTS = 256  # EVENTS_PER_WAVE: the header and 255 records
BASE_TICK = 5_000_000
SMALL = (0, 1, 55, 56, 57, 252, 253, 255)


def tick(ns: float) -> int:
    return BASE_TICK + round(ns / 10.0)


def wave_events(c: CtaTrack, wave: int) -> list[tuple[int, int, str, int | None]]:
    """(tick, kind, name, payload) of one wave, in record order, as the FlyDSL K1's
    ktrace build records them (``kernel/flydsl/k1_ctx.py``): every wave its stage ranges
    and put marks, wave 0 its polls too (a poll's retries a mark ``retries <LABEL>``
    before its range's pop); wave > 0 a little later / earlier than wave 0
    (waves are merged)."""
    assert c.start is not None and c.end is not None
    skew = 3 * wave
    ev: list[tuple[int, int, str, int | None]] = [(tick(c.start), KIND_MARK, "cta start", None)]
    for s in c.stages:
        task = s.task if s.name.startswith("k.") else None
        ev.append((tick(s.start) + skew, KIND_PUSH, s.name, task))
        inner: list[tuple[float, int, list]] = []
        if wave == 0:
            for p in c.polls:
                if p.stage == s.name and p.task == s.task and p.satisfied is not None:
                    recs = [(tick(p.first_issue), KIND_PUSH, f"poll {p.label}", None)]
                    if p.retries is not None:  # known at the close: a mark before the pop
                        recs.append((tick(p.satisfied), KIND_MARK, f"retries {p.label}", p.retries))
                    recs.append((tick(p.satisfied), KIND_POP, "", None))
                    inner.append((p.first_issue, 0, recs))
        lo = tick(s.start) + skew
        hi = max(tick(s.end) - skew, lo)
        for u in c.puts:
            if u.stage == s.name and u.task == s.task:
                at = min(max(tick(u.time), lo), hi)  # inside this wave's stage range
                inner.append((u.time, 1, [(at, KIND_MARK, f"put {u.region}", u.first)]))
        for _, _, recs in sorted(inner, key=lambda x: (x[0], x[1])):
            ev += recs
        ev.append((max(tick(s.end) - skew, ev[-1][0]), KIND_POP, "", None))
    ev.append((max(tick(c.end), ev[-1][0]), KIND_MARK, "cta end", None))
    return ev


def raw_regions(tl: Timeline, ctas: list[int], names: dict[str, int], waves: int) -> bytes:
    per_xcd = 32
    out = bytearray()
    slot = 1  # decode_records' first_slot
    for b in ctas:
        c = tl.ctas[b]
        unit = c.unit or 0
        local = unit % per_xcd
        for w in range(waves if b == 0 else 1):
            hw = (
                w
                | (0 << 4)
                | ((local % 16) << 8)
                | (((local // 16) % 2) << 12)
                | ((local // 32) << 13)
            )
            recs = wave_events(c, w)
            if len(recs) > SLOTS - 1:
                raise SystemExit(f"CTA {b}: {len(recs)} events overflow a wave region")
            region = bytearray(SLOTS * 32)
            # header: attempted, wave word (wave id | block z << 8), dispatch, queue, block x, y
            struct.pack_into("<IIQQII", region, 0, len(recs), w, 7, 0x1234, b, 0)
            stack: list[int] = []
            for i, (t, kind, name, payload) in enumerate(recs, 1):
                if kind == KIND_POP:
                    stack.pop()
                    eid = 0
                else:
                    eid = names.setdefault(name, len(names) + 1)
                    if kind == KIND_PUSH:
                        stack.append(i)
                packed = eid | (kind << 24)
                bits = 0
                if payload is not None:
                    packed |= (ENC_INT64 << 27) | (1 << 31)
                    bits = payload & ((1 << 64) - 1)
                struct.pack_into("<QQIIII", region, i * 32, t, bits, hw, c.xcd or 0, packed, 0)
            out += region
            slot += SLOTS
    return bytes(out)


def source_timeline(R: int = 1, L: int = 1) -> Timeline:
    """The simulated launch, only the fixture's CTAs kept."""
    tl = simulate(LaunchConfig(R, L), load_profile("mi355x")).timeline
    for c in tl.ctas:
        if c.cta not in SMALL:
            c.stages, c.polls, c.puts, c.loads = [], [], [], []
        for p in c.polls:
            p.producer = p.put_time = p.put_ref = None
    return tl


def build(
    out_dir: Path,
    *,
    all_ctas: bool = False,
    R: int = 1,
    L: int = 1,
    source: Path | None = None,
    timeline: Timeline | None = None,
) -> Path:
    """The ktrace file of the launch at R, L (simulated), of ``source`` (a Chrome trace)
    or of ``timeline``; every CTA with ``all_ctas`` or a given timeline, else a few."""
    from flydsl.compiler.backends import _rocm_ktrace_trace as writer
    from flydsl.runtime.device_runtime.rocm_ktrace_buffer import decode_records

    if timeline is not None:
        tl, all_ctas = timeline, True
    elif source is not None:
        tl = read_kernel_trace(source)
    elif all_ctas:
        tl = simulate(LaunchConfig(R, L), load_profile("mi355x")).timeline
    else:
        tl = source_timeline(R, L)
        text = json.dumps(to_chrome(tl), separators=(",", ":")).encode()
        (out_dir / f"ktrace_source_R{R}_L{L}.json.gz").write_bytes(gzip.compress(text, mtime=0))
    ctas = list(range(len(tl.ctas))) if all_ctas else list(SMALL)
    names: dict[str, int] = {}
    raw = raw_regions(tl, ctas, names, waves=2)
    records, overflowed = decode_records(raw, first_slot=1)
    assert not overflowed
    kernel = f"kda_pre_R{R}_L{L}" + ("_all" if all_ctas else "")
    tmp = out_dir / ".ktrace_tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    path = Path(writer.write_trace(records, names, kernel=kernel, out_dir=str(tmp)))
    dest = out_dir / path.name
    shutil.move(path, dest)
    shutil.rmtree(tmp, ignore_errors=True)
    return dest


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out_dir", type=Path)
    ap.add_argument("--all", action="store_true")
    ap.add_argument("--source", type=Path, default=None)
    a = ap.parse_args(argv)
    a.out_dir.mkdir(parents=True, exist_ok=True)
    print(build(a.out_dir, all_ctas=a.all, source=a.source))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
