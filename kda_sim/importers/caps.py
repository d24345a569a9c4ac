"""Caps on streamed input: a trace, stamps or ktrace file larger than the byte cap, or a
gzip stream that inflates past it, is refused before it is read or inflated in full; one
holding more records (trace events, ktrace events, stamp rows) than the record cap is
refused before they are decoded. A launch of more CTAs than a timeline holds
(:data:`~kda_sim.timeline.limits.MAX_CTAS`, the bound of the JSON format too) is refused
before it is built: the model simulates and matches every CTA of a trace's launch.

The caps are one setting for the process (the readers are called from many places: the
commands, the app, kernel hooks); :func:`set_caps` changes them, as the common
``--max-input-mb`` and ``--max-events`` flags do. A refusal names the cap and the flag
that raises it.
"""

from __future__ import annotations

import zlib
from pathlib import Path

from kda_sim.errors import InvalidInput, TraceFormatError
from kda_sim.timeline.limits import MAX_CTAS

DEFAULT_MAX_INPUT_MB = 256  # a 256-CTA trace is a few MB; ten times more than any we took
FLAG = "--max-input-mb"
DEFAULT_MAX_EVENTS = 5_000_000  # a 256-CTA launch records tens of thousands
EVENTS_FLAG = "--max-events"
CHUNK = 1 << 20  # bytes inflated per step, so a zip bomb stops within one chunk of the cap
GZIP_MAGIC = b"\x1f\x8b"

_max_mb: float = DEFAULT_MAX_INPUT_MB  # as given, for the message
_max_bytes = DEFAULT_MAX_INPUT_MB * 1024 * 1024
_max_events = DEFAULT_MAX_EVENTS


def set_caps(max_input_mb: float | None = None, max_events: int | None = None) -> None:
    """The caps for every reader from now on (``--max-input-mb``, ``--max-events``);
    None keeps a cap as it is."""
    global _max_mb, _max_bytes, _max_events
    if max_input_mb is not None:
        if not (0 < max_input_mb < 1 << 30):  # also refuses NaN
            raise InvalidInput(f"must be a positive number of MB, got {max_input_mb!r}", where=FLAG)
        _max_mb, _max_bytes = max_input_mb, int(max_input_mb * 1024 * 1024)
    if max_events is not None:
        if isinstance(max_events, bool) or not isinstance(max_events, int) or max_events <= 0:
            raise InvalidInput(f"must be a positive integer, got {max_events!r}", where=EVENTS_FLAG)
        _max_events = max_events


def max_input_bytes() -> int:
    return _max_bytes


def max_events() -> int:
    return _max_events


def check_count(n: int, what: str, where: str) -> None:
    """Refuse ``n`` records (of the kind ``what`` names) over the record cap."""
    if n > _max_events:
        raise TraceFormatError(
            f"more than {_max_events} {what}: past the record cap (raise it with {EVENTS_FLAG})",
            where=where,
        )


def check_ctas(n: int, where: str) -> None:
    """Refuse a trace of a launch of ``n`` CTAs, more than a timeline holds, before its
    launch is built or simulated (``compare`` on 65,536 CTAs takes seconds; on 10^6,
    minutes)."""
    if n > MAX_CTAS:
        raise TraceFormatError(
            f"a launch of {n} CTAs; a timeline holds at most {MAX_CTAS}",
            what="CTA count",
            where=where,
        )


def _too_large(what: str, where: str) -> TraceFormatError:
    return TraceFormatError(
        f"{what} past the input cap of {_max_mb:g} MB (raise it with {FLAG})", where=where
    )


def check_size(path: Path) -> int:
    """``path``'s size, refused over the cap before a byte of it is read."""
    try:
        size = path.stat().st_size
    except OSError as e:
        raise TraceFormatError(f"cannot read: {e.strerror}", where=str(path)) from e
    if size > _max_bytes:
        raise _too_large(f"{size} bytes", str(path))
    return size


def check_bytes(raw: bytes, where: str) -> None:
    """Bytes already in memory (an upload), refused over the cap before they are parsed."""
    if len(raw) > _max_bytes:
        raise _too_large(f"{len(raw)} bytes", where)


def read_capped(path: Path) -> bytes:
    """``path``'s bytes, refused over the cap (checked first, then on the bytes read,
    which a file growing meanwhile could push past it)."""
    check_size(path)
    try:
        with path.open("rb") as f:
            raw = f.read(_max_bytes + 1)
    except OSError as e:
        raise TraceFormatError(f"cannot read: {e.strerror}", where=str(path)) from e
    if len(raw) > _max_bytes:
        raise _too_large("more bytes than it had", str(path))
    return raw


def read_inflated(path: Path) -> bytes:
    """:func:`read_capped`, inflated where the file is gzipped (a ``.json.gz`` trace)."""
    return inflated(read_capped(path), str(path))


def inflated(raw: bytes, where: str) -> bytes:
    """``raw`` inflated (:func:`inflate_capped`) where it is a gzip stream, else as it is."""
    return inflate_capped(raw, where) if raw[:2] == GZIP_MAGIC else raw


def inflate_capped(raw: bytes, where: str) -> bytes:
    """A gzip stream inflated a chunk at a time, refused as soon as it passes the cap
    (never inflated in full first); corrupt or truncated streams refused too."""
    d = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
    out = bytearray()
    data = raw
    try:
        while not d.eof:
            chunk = d.decompress(data, CHUNK)
            out += chunk
            if len(out) > _max_bytes:
                raise _too_large("decompresses", where)
            data = d.unconsumed_tail
            if not chunk and not data:
                break  # input used up, nothing pending: a truncated stream
    except zlib.error as e:
        raise TraceFormatError(f"corrupt gzip stream: {e}", where=where) from e
    if not d.eof:
        raise TraceFormatError("truncated gzip stream", where=where)
    return bytes(out)
