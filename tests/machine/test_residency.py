"""Residency: what a CTA takes of a unit, and what a unit lacks for one more."""

from __future__ import annotations

from kda_sim.kernels.bugs.mirage_b200 import MirageConfig
from kda_sim.machine import load_gpu
from kda_sim.machine.residency import Footprint, footprint, residency, short_of

B200 = load_gpu("b200")


def test_a_grid_s_footprint_is_its_configuration_s() -> None:
    worker = footprint(MirageConfig(grid="worker"), B200)
    scheduler = footprint(MirageConfig(grid="scheduler"), B200)
    packed = footprint(MirageConfig(grid="scheduler", fix=True), B200)
    assert worker == Footprint(256, 256 * 64, 213 * 1024)
    assert scheduler.threads == 32 and packed.threads == 4 * 32
    assert residency(MirageConfig(grid="worker"), B200).per_unit == 1


def test_short_of_names_the_first_resource_a_unit_lacks() -> None:
    need = Footprint(256, 256 * 64, 100 * 1024)
    empty = Footprint(0, 0, 0)
    assert short_of(empty, 0, need, B200) == ""
    assert short_of(Footprint(0, 0, 200 * 1024), 1, need, B200) == "LDS"
    assert short_of(Footprint(B200.threads_per_unit - 255, 0, 0), 1, need, B200) == "threads"
    assert short_of(Footprint(0, B200.regs_per_unit, 0), 1, need, B200) == "registers"
    small = Footprint(1, 1, 0)
    assert short_of(empty, B200.max_ctas_per_unit, small, B200) == "CTAs a unit"
