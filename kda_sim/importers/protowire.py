"""The protobuf wire format, the subset a Perfetto trace uses, decoded by hand.

Why by hand: the only offline Perfetto reader (``perfetto``'s trace processor) downloads
a native binary at first use, which a CI machine without network cannot do, and the
``protobuf`` package would need Perfetto's ``.proto`` files compiled in. The part of
the format FlyDSL's ktrace writer emits is small (varints, length-delimited fields,
fixed64 doubles), so a bounded reader here is less code than either and never runs
foreign code. Every read is bounds-checked and raises :class:`WireError` naming the
byte offset; nesting depth and sizes are capped so a hostile file cannot hang it.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator

VARINT, FIXED64, LEN, FIXED32 = 0, 1, 2, 5
MAX_DEPTH = 16


class WireError(ValueError):
    def __init__(self, message: str, offset: int) -> None:
        self.offset = offset
        super().__init__(f"{message} at byte {offset}")


def read_varint(buf: bytes | memoryview, pos: int, end: int) -> tuple[int, int]:
    value = 0
    shift = 0
    start = pos
    while True:
        if pos >= end:
            raise WireError("truncated varint", start)
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, pos
        shift += 7
        if shift >= 70:  # a varint is at most 10 bytes
            raise WireError("varint longer than 10 bytes", start)


def fields(
    buf: bytes | memoryview, start: int = 0, end: int | None = None
) -> Iterator[tuple[int, int, int | bytes | memoryview, int]]:
    """(field number, wire type, value, offset) of each field in ``buf[start:end]``;
    a LEN value is a memoryview into ``buf``, FIXED64 / FIXED32 an int."""
    view = memoryview(buf)
    end = len(view) if end is None else end
    pos = start
    while pos < end:
        at = pos
        key, pos = read_varint(view, pos, end)
        number, wtype = key >> 3, key & 7
        if number == 0:
            raise WireError("field number 0", at)
        if wtype == VARINT:
            value, pos = read_varint(view, pos, end)
            yield number, wtype, value, at
        elif wtype == LEN:
            n, pos = read_varint(view, pos, end)
            if n > end - pos:
                raise WireError(f"length {n} runs past the end of its message", at)
            yield number, wtype, view[pos : pos + n], at
            pos += n
        elif wtype == FIXED64:
            if pos + 8 > end:
                raise WireError("truncated fixed64", at)
            yield number, wtype, int.from_bytes(view[pos : pos + 8], "little"), at
            pos += 8
        elif wtype == FIXED32:
            if pos + 4 > end:
                raise WireError("truncated fixed32", at)
            yield number, wtype, int.from_bytes(view[pos : pos + 4], "little"), at
            pos += 4
        else:  # 3 / 4: deprecated groups; 6 / 7: invalid
            raise WireError(f"wire type {wtype} (field {number}) is not used by Perfetto", at)


def as_double(bits: int) -> float:
    return struct.unpack("<d", bits.to_bytes(8, "little"))[0]


def as_text(value: object, offset: int) -> str:
    if not isinstance(value, memoryview):
        raise WireError("expected a string", offset)
    try:
        return bytes(value).decode("utf-8")
    except UnicodeDecodeError as e:
        raise WireError("a string that is not UTF-8", offset) from e


def as_signed(value: int) -> int:
    """An int64 field written as a two's-complement varint."""
    return value - (1 << 64) if value >= 1 << 63 else value
