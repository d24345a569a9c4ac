"""K1's tag check (its ``tag_model`` hook, :class:`kda_sim.kernels.spec.TagModel`): the
tag FlyDSL's K1 computes (``(epoch % 2^EPOCH_BITS) * TAG_SLOTS + slot + 1`` in int32),
its step shapes ``R x L``, and which scratch pairs each launch puts and polls
(:mod:`kda_sim.kernels.k1.footprint`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kda_sim.checks.tags.footprint import Layout, StepModel
from kda_sim.checks.tags.schemes import SCHEMES, StepTag
from kda_sim.kernels.k1.config import LaunchConfig, parse_shapes
from kda_sim.kernels.k1.constants import EPOCH_BITS, STEP_TAG_INT_BITS, TAG_SLOTS
from kda_sim.kernels.k1.footprint import Shape, k1_step_model
from kda_sim.protocol.program import Launch

# the shipped tag (the mutations' and the tests' healthy scheme)
STEP_TAG = StepTag(STEP_TAG_INT_BITS, EPOCH_BITS, TAG_SLOTS)


class K1Tags:
    """What ``kda-sim check --tags`` and the app's Tags view take from K1: a step of
    launches of shapes ``R x L``, slot s with ``nb[s]`` AttnRes blocks, placed and
    varied as the configuration given says (kda0, gate_local, the ticket schedules)."""

    schemes: tuple[str, ...] = SCHEMES
    tag_slots: int = TAG_SLOTS
    epoch_bits: int = EPOCH_BITS
    tag_bits: int = STEP_TAG_INT_BITS

    def parse_shapes(self, text: str) -> tuple[Shape, ...]:
        return parse_shapes(text)

    def shape_of(self, cfg: LaunchConfig) -> Shape:
        return (cfg.R, cfg.L)

    def nb_of(self, cfg: LaunchConfig) -> int:
        return cfg.nb

    def step_model(
        self,
        shapes: tuple[Shape, ...],
        nb_per_slot: tuple[int, ...],
        layout: Layout,
        cfg: LaunchConfig | Any,
        *,
        mutate: Callable[[Launch], Launch] | None = None,
    ) -> StepModel:
        """Who polls a pair depends on ``cfg``'s kda0, variants and schedules; its R, L
        and nb are each launch's own. The model carries each launch's programs (with
        ``mutate`` applied: a program fault), whose puts and polls carry their tags."""
        return k1_step_model(shapes, nb_per_slot, layout, cfg, mutate=mutate)


TAGS = K1Tags()
