"""Integer arithmetic as the device does it (Python ints in, exact results out).

FlyDSL lowers ``%`` on a signed integer to ``arith.remsi`` (C semantics: the remainder
takes the dividend's sign) and ``//`` to ``arith.floordivsi``; every ``+`` and ``*``
wraps at the integer's width. Python's ``%`` and ``//`` floor, so they are not used on
signed device values anywhere in the checks.
"""

from __future__ import annotations


def wrap(x: int, bits: int) -> int:
    """Two's-complement wraparound of ``x`` to a signed ``bits``-bit integer."""
    m = 1 << bits
    x &= m - 1
    return x - m if x >= m >> 1 else x


def remsi(a: int, b: int) -> int:
    """``arith.remsi``: a - b * trunc(a / b); the result has a's sign (b != 0)."""
    if b == 0:
        raise ZeroDivisionError("remsi by zero")
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def floordivsi(a: int, b: int) -> int:
    """``arith.floordivsi``: the quotient rounded toward minus infinity."""
    if b == 0:
        raise ZeroDivisionError("floordivsi by zero")
    return a // b  # Python's // floors, exactly floordivsi on in-range values


def in_range(x: int, bits: int) -> bool:
    return -(1 << (bits - 1)) <= x < (1 << (bits - 1))
