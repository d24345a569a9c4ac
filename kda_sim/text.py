"""Numbers and docstrings in the words a person reads in a message or a help page."""

from __future__ import annotations

import math
import re


def ordinal(n: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``21st``."""
    if 10 <= n % 100 <= 20:
        return f"{n}th"
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th') }"


_SCALES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"), (1e3, "thousand"))


def probability(log10p: float) -> str:
    """A probability given by its log10 as a plain number: ``0.0123``, or for a small one
    ``6.3e-8 (about 1 in 16 million)``; no underflow however small."""
    if log10p > -4:
        return f"{10**log10p:.3g}"
    e = math.floor(log10p)
    m = round(10 ** (log10p - e), 1)
    if m >= 10:
        m, e = 1.0, e + 1
    sci = f"{m:.2g}e{e}"
    inv = -log10p
    if inv >= 15:
        return f"{sci} (about 1 in 10^{inv:.0f})"
    n = 10**inv
    scale, name = next((s, w) for s, w in _SCALES if n >= s)
    v = n / scale
    return (
        f"{sci} (about 1 in {v:.0f} {name})" if v >= 100 else f"{sci} (about 1 in {v:.2g} {name})"
    )


# a docstring's reST for a terminal: ``code`` and :role:`target` (``~`` dropped) as plain
_ROLE = re.compile(r":[a-z]+:`~?([^`]+)`")


def plain(doc: str) -> str:
    """A module docstring as ``--help`` prints it: its reST markup (double backticks,
    ``:mod:`` and other roles) taken off, the words kept."""
    return _ROLE.sub(r"\1", doc).replace("``", "")
