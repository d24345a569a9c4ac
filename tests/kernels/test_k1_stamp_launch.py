"""The launch record in columns 12..14 of the FlyDSL K1's stamps rows
(kda_sim.kernels.k1.stamp_launch): every field of a launch changes it, and a row of
another launch is named with the fields that differ. Decoding whole tensors through the
importer: tests/importers/test_stamps_flydsl.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from kda_sim.errors import TraceFormatError
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.stamp_launch import (
    COLUMNS,
    FLAGS,
    FORMAT,
    check_launch_records,
    launch_record,
)

BASE = LaunchConfig(2, 1)
# one field changed at a time: each must give another record
CHANGED = {
    "R": replace(BASE, R=3),
    "L": replace(BASE, L=2),
    "nb": replace(BASE, nb=4),
    "kda0": replace(BASE, kda0=255),
    **{f: replace(BASE, **{f: True}) for f in FLAGS},
}


def rows(*cfgs: LaunchConfig, width: int = 23) -> np.ndarray:
    """One flushed row a config (a start stamp and its record), the rest zero."""
    arr = np.zeros((len(cfgs), width), dtype=np.int64)
    for i, cfg in enumerate(cfgs):
        arr[i, 0] = 10**9
        arr[i, list(COLUMNS)] = launch_record(cfg)
    return arr


def test_the_record_is_the_columns_the_twin_leaves_zero() -> None:
    assert COLUMNS == (12, 13, 14)
    assert launch_record(BASE) == (FORMAT, 2 | 1 << 16 | 8 << 32, 0)
    assert launch_record(CHANGED["onw_first"])[2] == 1 << 18


@pytest.mark.parametrize("field", list(CHANGED))
def test_every_field_of_the_launch_is_named(field: str) -> None:
    other = CHANGED[field]
    assert launch_record(other) != launch_record(BASE)
    check_launch_records(rows(other), other, required=True, source="s")
    with pytest.raises(TraceFormatError) as e:
        check_launch_records(rows(other), BASE, required=True, source="s")
    assert e.value.what == field and str(e.value).startswith("s: CTA 0: the stamps record a ")
    assert "more than one launch" not in str(e.value)


def test_rows_of_two_launches_are_named_so() -> None:
    with pytest.raises(TraceFormatError, match=r"CTA 2: .* L=2, read as L=1; other rows record"):
        check_launch_records(rows(BASE, BASE, CHANGED["L"]), BASE, required=True, source="s")


def test_a_row_never_flushed_needs_no_record_and_a_flushed_one_does() -> None:
    arr = rows(BASE, BASE)
    arr[1] = 0
    check_launch_records(arr, BASE, required=True, source="s")
    arr[1, 0] = 10**9
    with pytest.raises(TraceFormatError, match=r"CTA 1: no launch record"):
        check_launch_records(arr, BASE, required=True, source="s")


def test_the_twins_rows_record_nothing_and_stamp_nothing_there() -> None:
    twin = rows(BASE, width=15)
    twin[:, list(COLUMNS)] = 0
    check_launch_records(twin, CHANGED["L"], required=False, source="s")  # no record: any L
    twin[0, 13] = 5
    with pytest.raises(TraceFormatError, match="point 13 is stamped"):
        check_launch_records(twin, BASE, required=False, source="s")
    cut = rows(BASE, width=15)  # a FlyDSL row cut to 15 columns keeps its record
    with pytest.raises(TraceFormatError, match="L=1, read as L=2"):
        check_launch_records(cut, CHANGED["L"], required=False, source="s")


def test_bits_outside_the_fields_are_not_a_record() -> None:
    arr = rows(BASE)
    arr[0, 13] |= 1 << 60
    with pytest.raises(TraceFormatError, match="not the launch record of R=2 L=1"):
        check_launch_records(arr, BASE, required=True, source="s")
