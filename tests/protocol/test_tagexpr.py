"""Tag expressions as data: what they say in words, and what they refuse."""

from __future__ import annotations

import pytest

from kda_sim.kernels.k1.constants import EPOCH_BITS, STEP_TAG_INT_BITS, TAG_EXPR, TAG_SLOTS
from kda_sim.protocol.tagexpr import EpochWord, TagExpr


def test_k1_tag_in_words_and_its_fields() -> None:
    assert TAG_EXPR.text() == "(epoch % 2^22) * 256 + slot + 1 in int32"
    assert (TAG_EXPR.bits, TAG_EXPR.scale, TAG_EXPR.epoch_bits) == (
        STEP_TAG_INT_BITS,
        TAG_SLOTS,
        EPOCH_BITS,
    )
    assert TAG_EXPR.has_epoch and TAG_EXPR.word is EpochWord.STEP and TAG_EXPR.lag == 0


@pytest.mark.parametrize(
    ("expr", "text"),
    [
        (TagExpr(32, 256, 22, lag=1), "((epoch - 1) % 2^22) * 256 + slot + 1 in int32"),
        (TagExpr(32, 256, 22, offset=0), "(epoch % 2^22) * 256 + slot in int32"),
        (TagExpr(32, 256, 1), "(epoch % 2) * 256 + slot + 1 in int32"),
        (TagExpr(64, 256, None), "epoch * 256 + slot + 1 in int64"),
        (TagExpr(64, 256, None, lag=2), "(epoch - 2) * 256 + slot + 1 in int64"),
        (TagExpr(32, 0, None), "slot + 1 in int32"),
        (TagExpr(32, 0, None, slot=False, offset=0), "0 in int32"),
        (
            TagExpr(32, 256, 22, word=EpochWord.CAPTURED),
            "(captured epoch % 2^22) * 256 + slot + 1 in int32",
        ),
        (TagExpr(32, 256, 22, offset=-1), "(epoch % 2^22) * 256 + slot - 1 in int32"),
    ],
)
def test_text(expr: TagExpr, text: str) -> None:
    assert expr.text() == text


@pytest.mark.parametrize(
    "kwargs",
    [
        {"bits": 0, "scale": 1, "epoch_bits": None},
        {"bits": 32, "scale": 1, "epoch_bits": 32},
        {"bits": 32, "scale": -1, "epoch_bits": None},
        {"bits": 32, "scale": 1, "epoch_bits": None, "lag": -1},
    ],
)
def test_refuses_what_no_device_computes(kwargs: dict) -> None:
    with pytest.raises(ValueError):
        TagExpr(**kwargs)
