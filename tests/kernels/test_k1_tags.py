"""K1's tag check as the generic layers see it (its ``tag_model`` hook): the shipped tag
from K1's constants, the step shape and nb of a configuration, and a step model whose
launches keep the configuration's placement and variants."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_sim.checks.tags.analysis import Policy, analyse
from kda_sim.checks.tags.footprint import Layout, tag_model
from kda_sim.checks.tags.schemes import SCHEMES
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import EPOCH_BITS, STEP_TAG_INT_BITS, TAG_SLOTS
from kda_sim.kernels.k1.tags import STEP_TAG
from kda_sim.kernels.registry import get


def test_the_hook_is_the_shipped_tag_and_every_scheme() -> None:
    tm = tag_model(get("k1"))
    assert (tm.tag_slots, tm.epoch_bits, tm.tag_bits) == (TAG_SLOTS, EPOCH_BITS, STEP_TAG_INT_BITS)
    assert (STEP_TAG.tag_slots, STEP_TAG.epoch_bits, STEP_TAG.bits) == (
        TAG_SLOTS,
        EPOCH_BITS,
        STEP_TAG_INT_BITS,
    )
    assert tm.schemes == SCHEMES
    cfg = LaunchConfig(3, 2, 5)
    assert tm.shape_of(cfg) == (3, 2) and tm.nb_of(cfg) == 5
    assert tm.parse_shapes("8x1,1x1") == ((8, 1), (1, 1))
    with pytest.raises(InvalidInput, match="8y1"):
        tm.parse_shapes("8y1")


def test_the_step_model_keeps_the_configurations_placement() -> None:
    tm = tag_model(get("k1"))

    def reader(cfg: LaunchConfig) -> str:
        m = tm.step_model(((1, 1), (2, 2)), (1, 8), Layout.FIXED, cfg)
        # tags without the slot term: slot 1 reads slot 0's PROJ pairs of this step
        sc = analyse(m, replace(STEP_TAG, slot_term=False), Policy.NEVER_ZEROED).shortest
        assert sc is not None
        return sc.reader

    # R, L and nb are the step's: a configuration of another shape gives the same model
    assert reader(LaunchConfig(4, 1, 3)) == reader(LaunchConfig(1, 1)) == "CTA 0 in k.gates, task 0"
    assert reader(LaunchConfig(1, 1, kda0=7)) == "CTA 7 in k.gates, task 0"
    with pytest.raises(InvalidInput, match="shape 20x1 with nb = 8"):
        tm.step_model(((20, 1),), (8,), Layout.FIXED, LaunchConfig(1, 1))
