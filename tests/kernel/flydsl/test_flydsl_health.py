"""The bounded-wait build's health buffer on the host (``kernel/flydsl/health.py``):
records matched by tag, decoded to CTA / stage / pair, the cause first; the bound's
unit and range; every poll site the kernel traces is in the table."""

from __future__ import annotations

import numpy as np
import pytest

from kda_kernel.flydsl import health
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.space import CellSpace

CFG = LaunchConfig(2, 1)
SPACE = CellSpace.of(CFG)


def buffer(*records: tuple[int, int, int, int, int, int, int]) -> np.ndarray:
    """(cta, tag, kind, cell, site, task, ticks) records in a fresh buffer."""
    h = np.zeros(health.words(BLOCKS), dtype=np.int32)
    for cta, tag, kind, cell, site, task, ticks in records:
        r = h[health.REC0 + cta * health.REC_WORDS :][: health.REC_WORDS]
        r[health.F_TAG], r[health.F_KIND], r[health.F_CELL] = tag, kind, cell
        r[health.F_SEEN], r[health.F_SITE], r[health.F_TASK] = tag - 256, site, task
        r[health.F_TIME_LO], r[health.F_TIME_HI] = ticks & 0xFFFFFFFF, ticks >> 32
    return h


def test_records_are_this_launchs_by_tag_and_the_cause_comes_first() -> None:
    xrdy = int(SPACE.gid(Region.XRDY, 5))
    proj = int(SPACE.gid(Region.PROJ, 40))
    late = 5 << 32  # a time past 2^32 ticks: both words are read
    h = buffer(
        (7, 513, health.KIND_RELEASED, xrdy, health.site("load_x", "XRDY"), -1, late + 3),
        (100, 513, health.KIND_TIMEOUT, proj, health.site("k.norm", "ONRM+PROJ"), 12, late + 9),
        (3, 257, health.KIND_TIMEOUT, proj, 0, -1, 1),  # an older launch's
    )
    first, second = health.read(h, SPACE, 513)
    assert (first.cta, first.kind, first.stage, first.label) == (
        100,
        "timeout",
        "k.norm",
        "ONRM+PROJ",
    )
    assert (first.region, first.index, first.task, first.ticks) == ("PROJ", 40, 12, late + 9)
    assert (second.cta, second.kind, second.region, second.index) == (7, "released", "XRDY", 5)
    assert [g.cta for g in health.read(h, SPACE, 257)] == [3]
    assert health.read(h, SPACE, 769) == []
    with pytest.raises(health.KernelStuck, match="1 CTA\\(s\\) gave up, 1 released"):
        health.check(h, SPACE, 513)
    health.check(h, SPACE, 769)  # no record: no error


def test_the_bound_is_in_100_mhz_ticks_within_int32() -> None:
    assert health.alarm_ticks(1.0) == 100_000
    assert health.alarm_ticks(21474.0) <= health.ALARM_MAX
    for ms in (21475.0, 0.0, 1e-6):
        with pytest.raises(InvalidInput, match="--watchdog-ms"):
            health.alarm_ticks(ms)


def test_every_poll_the_kernel_makes_has_a_site() -> None:
    """The model's polls (what the kernel's record equals) of the default and the
    gate_local builds are every site but none more; an unknown one is refused."""
    from kda_sim.isa.model import stage_ops

    polls = {
        (stage, region)
        for cfg in (CFG, LaunchConfig(2, 1, gate_local=True))
        for stage, ops in stage_ops(cfg).items()
        for region, kind in ops
        if kind == "poll"
    }
    assert polls == set(health.SITES)
    with pytest.raises(ValueError, match=r"not in health\.SITES"):
        health.site("k.conv", "QK")
