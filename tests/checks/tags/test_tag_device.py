"""The device arithmetic: int wraparound, remsi (dividend's sign), floordivsi."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kda_sim.checks.tags.device import floordivsi, in_range, remsi, wrap

I32 = st.integers(-(2**31), 2**31 - 1)


@pytest.mark.parametrize(
    ("a", "b", "rem", "fdiv"),
    [(7, 4, 3, 1), (-7, 4, -3, -2), (7, -4, 3, -2), (-7, -4, -3, 1), (-8, 4, 0, -2)],
)
def test_remsi_takes_the_dividends_sign_floordivsi_floors(a: int, b: int, rem: int, fdiv: int):
    assert remsi(a, b) == rem
    assert floordivsi(a, b) == fdiv


def test_wrap_is_twos_complement() -> None:
    assert wrap(2**31, 32) == -(2**31)
    assert wrap(2**32 + 5, 32) == 5
    assert wrap(-(2**31) - 1, 32) == 2**31 - 1
    assert in_range(2**31 - 1, 32) and not in_range(2**31, 32)


@given(I32, st.integers(1, 2**30))
def test_remsi_matches_c_truncation(a: int, b: int) -> None:
    r = remsi(a, b)
    q = int(a / b) if abs(a) < 2**52 else (abs(a) // b) * (1 if a >= 0 else -1)
    assert r == a - b * q
    assert abs(r) < b and (r == 0 or (r > 0) == (a > 0))


@given(I32, I32, I32)
def test_wrap_is_a_ring_homomorphism(a: int, b: int, c: int) -> None:
    # the device wraps after every op; wrapping once at the end is the same
    assert wrap(wrap(a * b, 32) + c, 32) == wrap(a * b + c, 32)
