"""The Triton K1's build keys: what a build refuses before anything compiles."""

from __future__ import annotations

import pytest

from kernel.launch import MAX_NB, Build


def test_largest_nb_builds() -> None:
    assert Build(4, 4, MAX_NB).validate().nb == MAX_NB


def test_nb_past_the_gate_lanes_is_refused() -> None:
    # nb = 15 passes the protocol's own limits (16 (nb + 1) <= 256 threads) but its
    # nb + 2 weights do not fit the kernel's 16 lanes: it used to give NaN rows
    with pytest.raises(ValueError, match=r"nb = 15 > 14"):
        Build(1, 1, 15).validate()

