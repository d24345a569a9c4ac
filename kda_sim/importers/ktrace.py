"""FlyDSL ktrace's Perfetto trace (``*.pftrace.gz``) decoded into each launch's waves:
their spans and instants.

What the file holds (flydsl 0.5 ``compiler/backends/_rocm_ktrace_trace.py``): gzip'd
``Trace.packet`` entries (field 1). Track descriptors (TracePacket field 60: uuid 1,
name 2, parent 5) nest kernel -> ``launch N (...)`` -> ``XCD{x}/SE{s}/SH{h}/CU{c}``
-> ``WG(x, y, z)`` -> ``Wave{n}`` (-> ``ranges k`` lanes for token ranges). Track
events (field 11; timestamp field 8, in ns from the earliest record) carry type 9
(1 slice begin, 2 slice end, 3 instant), track 11, name 23 and one ``payload`` debug
annotation (field 4). A wave's whole life is a slice named ``Wave Span``; a range
never closed is named ``... (unclosed)``. The protobuf subset is decoded by
:mod:`kda_sim.importers.protowire` (why by hand: see there).

A wave's place comes from its ancestors: the launch, the workgroup (its x) and the CU,
whose label gives ``unit`` = ((xcd 4 + se) 2 + sh) 16 + cu (the field widths of the
HW_ID register ktrace decodes) and ``xcd``. What the spans and instants mean is the
kernel's: its ``trace_decoders`` hook (:mod:`kda_sim.kernels.spec`) maps one launch's
waves (:func:`launch_waves`) onto its timeline (K1's: ``kernels/k1/ktrace.py``).
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kda_sim.errors import TraceFormatError
from kda_sim.importers.caps import GZIP_MAGIC, check_count, inflate_capped
from kda_sim.importers.protowire import (
    FIXED64,
    LEN,
    VARINT,
    WireError,
    as_double,
    as_signed,
    as_text,
    fields,
)
from kda_sim.timeline.schema import MAX_ABS_NS

SUFFIX = ".pftrace.gz"  # what FlyDSL's writer names a ktrace file
SLICE_BEGIN, SLICE_END, INSTANT = 1, 2, 3
# the values a CU label's SE, SH and CU take, as HW_ID packs them (2, 1 and 4 bits): the
# unit is ((xcd SE + se) SH + sh) CU + cu, so a field past its bound gives two CUs one unit
HW_ID_FIELDS = {"SE": 4, "SH": 2, "CU": 16}
MAX_ID_DIGITS = 9  # a workgroup or launch number: ids past 10^9 are no launch of ours
_CU = re.compile(r"^XCD(\d+)/SE(\d+)/SH(\d+)/CU(\d+)$")
_WG = re.compile(r"^WG\((\d+), (\d+), (\d+)\)$")
_LAUNCH = re.compile(r"^launch (\d+)\b")


@dataclass
class Track:
    uuid: int
    name: str
    parent: int | None


@dataclass
class Event:
    ts: int
    track: int
    kind: int
    name: str | None
    payload: Any
    offset: int


@dataclass
class Span:
    name: str
    start: int
    end: int
    payload: Any
    closed: bool = True


@dataclass
class WaveLog:
    spans: list[Span] = field(default_factory=list)
    instants: list[tuple[int, str, Any]] = field(default_factory=list)
    unit: int | None = None
    xcd: int | None = None


def _decompress(raw: bytes, where: str) -> bytes:
    if raw[:2] != GZIP_MAGIC:
        raise TraceFormatError("not gzip (a .pftrace.gz starts with 1f 8b)", where=where)
    return inflate_capped(raw, where)


def _annotation(buf: memoryview, base: int) -> tuple[str | None, Any]:
    name: str | None = None
    value: Any = None
    for num, wt, v, at in fields(buf):
        if num == 10 and wt == LEN:
            name = as_text(v, base + at)
        elif num == 2 and wt == VARINT:
            value = bool(v)
        elif num == 3 and wt == VARINT:
            value = v
        elif num == 4 and wt == VARINT:
            value = as_signed(v)  # type: ignore[arg-type]
        elif num == 5 and wt == FIXED64:
            value = as_double(v)  # type: ignore[arg-type]
        elif num == 6 and wt == LEN:
            value = as_text(v, base + at)
    return name, value


def decode_packets(data: bytes, where: str) -> tuple[dict[int, Track], list[Event]]:
    tracks: dict[int, Track] = {}
    events: list[Event] = []
    try:
        for num, wt, packet, at in fields(data):
            if num != 1:
                continue  # Trace has only field 1; anything else is not ours to read
            if wt != LEN:
                raise WireError("Trace.packet is not length-delimited", at)
            ts = None
            for pnum, pwt, v, _pat in fields(packet):
                if pnum == 8 and pwt == VARINT:
                    ts = v
                elif pnum == 60 and pwt == LEN:
                    t = _descriptor(v, at)  # type: ignore[arg-type]
                    if t.uuid in tracks:
                        raise TraceFormatError(
                            f"track uuid {t.uuid} described twice",
                            where=f"{where}: packet at byte {at}",
                        )
                    tracks[t.uuid] = t
                    check_count(len(tracks), "track descriptors", where)
                elif pnum == 11 and pwt == LEN:
                    events.append(_event(v, ts, at, where))  # type: ignore[arg-type]
                    check_count(len(events), "track events", where)
    except WireError as e:
        raise TraceFormatError(f"bad protobuf: {e}", where=where) from e
    return tracks, events


def _descriptor(buf: memoryview, at: int) -> Track:
    uuid = None
    name = ""
    parent = None
    for num, wt, v, off in fields(buf):
        if num == 1 and wt == VARINT:
            uuid = v
        elif num == 2 and wt == LEN:
            name = as_text(v, at + off)
        elif num == 5 and wt == VARINT:
            parent = v
    if uuid is None:
        raise WireError("a track descriptor without uuid (field 1)", at)
    return Track(int(uuid), name, None if parent is None else int(parent))  # type: ignore[arg-type]


def _event(buf: memoryview, ts: int | None, at: int, where: str) -> Event:
    kind = track = None
    name = None
    payload = None
    for num, wt, v, off in fields(buf):
        if num == 9 and wt == VARINT:
            kind = v
        elif num == 11 and wt == VARINT:
            track = v
        elif num == 23 and wt == LEN:
            name = as_text(v, at + off)
        elif num == 4 and wt == LEN:
            key, val = _annotation(v, at + off)  # type: ignore[arg-type]
            if key == "payload":
                payload = val
    rec = f"{where}: track event at byte {at}"
    if ts is None:
        raise TraceFormatError("a track event without timestamp (TracePacket field 8)", where=rec)
    if ts > MAX_ABS_NS:  # ns from the earliest record: no capture lasts days
        raise TraceFormatError(
            f"timestamp {ts} ns is past {MAX_ABS_NS:.0e} ns (about 11.6 days from the "
            "earliest record): not a clock reading",
            where=rec,
        )
    if track is None:
        raise TraceFormatError("a track event without track_uuid (field 11)", where=rec)
    if kind not in (SLICE_BEGIN, SLICE_END, INSTANT):
        raise TraceFormatError(f"track event type {kind!r} (field 9) is not 1, 2 or 3", where=rec)
    return Event(int(ts), int(track), int(kind), name, payload, at)  # type: ignore[arg-type]


def _ancestors(tracks: dict[int, Track], uuid: int, where: str) -> list[Track]:
    chain: list[Track] = []
    seen: set[int] = set()
    u: int | None = uuid
    while u is not None:
        if u in seen:
            raise TraceFormatError(f"track {uuid}'s parents form a cycle", where=where)
        seen.add(u)
        t = tracks.get(u)
        if t is None:
            raise TraceFormatError(f"track {u} is used but never described", where=where)
        chain.append(t)
        u = t.parent
    return chain


def _number(digits: str, label: str, where: str) -> int:
    """A workgroup's or a launch's number in its track's label, of at most
    :data:`MAX_ID_DIGITS` digits (a 5,000-digit one is refused, not parsed)."""
    if len(digits) > MAX_ID_DIGITS:
        raise TraceFormatError(
            f"track {label[:40]!r}...: a number of {len(digits)} digits, at most {MAX_ID_DIGITS}",
            where=where,
        )
    return int(digits)


def _hw_field(name: str, digits: str, label: str, where: str) -> int:
    """One field of a CU label within what HW_ID packs in it (:data:`HW_ID_FIELDS`)."""
    bound = HW_ID_FIELDS[name]
    if len(digits) > MAX_ID_DIGITS or int(digits) >= bound:
        raise TraceFormatError(
            f"CU track {label[:40]!r}: {name} {digits[:12]} is outside 0 .. {bound - 1}",
            where=where,
        )
    return int(digits)


@dataclass
class Place:
    launch: int
    cta: int
    wave: str
    unit: int
    xcd: int


def _place(
    tracks: dict[int, Track], uuid: int, where: str, cache: dict[int, Place | None]
) -> Place | None:
    """The launch, workgroup and wave a track belongs to; None for tracks above a wave."""
    if uuid in cache:
        return cache[uuid]
    chain = _ancestors(tracks, uuid, where)
    wg = next((i for i, t in enumerate(chain) if _WG.match(t.name)), None)
    if wg is None or wg == 0:
        cache[uuid] = None
        return None
    cu = chain[wg + 1] if wg + 1 < len(chain) else None
    launch = chain[wg + 2] if wg + 2 < len(chain) else None
    m_cu = _CU.match(cu.name) if cu else None
    m_l = _LAUNCH.match(launch.name) if launch else None
    if m_cu is None or m_l is None:
        raise TraceFormatError(
            f"workgroup track {chain[wg].name[:40]!r} is not under a CU and a launch track",
            where=f"{where}: track {chain[wg].uuid}",
        )
    at = f"{where}: track {chain[wg].uuid}"
    x = _number(m_cu.group(1), m_cu.string, at)
    hw = zip(HW_ID_FIELDS, m_cu.groups()[1:], strict=True)
    se, sh, c = (_hw_field(name, digits, m_cu.string, at) for name, digits in hw)
    m_wg = _WG.match(chain[wg].name)
    assert m_wg is not None
    place = Place(
        launch=_number(m_l.group(1), m_l.string, at),
        cta=_number(m_wg.group(1), chain[wg].name, at),
        wave=chain[wg - 1].name,  # the Wave track (a ranges lane hangs under it)
        unit=((x * HW_ID_FIELDS["SE"] + se) * HW_ID_FIELDS["SH"] + sh) * HW_ID_FIELDS["CU"] + c,
        xcd=x,
    )
    cache[uuid] = place
    return place


def collect(
    tracks: dict[int, Track], events: list[Event], where: str
) -> dict[int, dict[tuple[int, str], WaveLog]]:
    """launch -> (cta, wave) -> the wave's closed spans and instants."""
    out: dict[int, dict[tuple[int, str], WaveLog]] = defaultdict(lambda: defaultdict(WaveLog))
    stacks: dict[int, list[Event]] = defaultdict(list)
    cache: dict[int, Place | None] = {}
    for ev in events:
        place = _place(tracks, ev.track, where, cache)
        if place is None:
            continue
        log = out[place.launch][(place.cta, place.wave)]
        log.unit, log.xcd = place.unit, place.xcd
        if ev.kind == SLICE_BEGIN:
            if ev.name is None:
                raise TraceFormatError(
                    "a slice begin without a name (field 23)", where=f"{where}: byte {ev.offset}"
                )
            stacks[ev.track].append(ev)
        elif ev.kind == SLICE_END:
            if not stacks[ev.track]:
                raise TraceFormatError(
                    f"a slice end on track {ev.track} with no open slice",
                    where=f"{where}: byte {ev.offset}",
                )
            b = stacks[ev.track].pop()
            if ev.ts < b.ts:
                raise TraceFormatError(
                    f"slice {b.name!r} ends ({ev.ts}) before it begins ({b.ts})",
                    where=f"{where}: byte {ev.offset}",
                )
            name = b.name or ""
            closed = not name.endswith(" (unclosed)")
            log.spans.append(Span(name.removesuffix(" (unclosed)"), b.ts, ev.ts, b.payload, closed))
        else:
            log.instants.append((ev.ts, ev.name or "", ev.payload))
    left = [s for s in stacks.values() if s]
    if left:
        b = left[0][-1]
        raise TraceFormatError(
            f"slice {b.name!r} never ends (truncated file?)", where=f"{where}: byte {b.offset}"
        )
    return out


def launch_waves(raw: bytes, launch: int, where: str) -> dict[tuple[int, str], WaveLog]:
    """The waves of one launch (1-based, as the trace names them) of a gzip'd ktrace file's
    bytes: (workgroup, wave) -> its spans and instants."""
    data = _decompress(raw, where)
    tracks, events = decode_packets(data, where)
    if not tracks:
        raise TraceFormatError("no track descriptors (TracePacket field 60)", where=where)
    launches = collect(tracks, events, where)
    if launch not in launches:
        have = sorted(launches)
        raise TraceFormatError(
            f"no launch {launch} with workgroup events (launches: {have})", where=where
        )
    return launches[launch]
