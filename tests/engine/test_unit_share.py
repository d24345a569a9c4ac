"""Two CTAs that compute the same stage on one unit: ``unit_share`` slows that stage."""

from __future__ import annotations

from dataclasses import replace

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.summary import partner_stats


def _gemv0(share: float) -> dict[str, float]:
    # the datasheet's bandwidth keeps the 16-row group compute-bound whatever the bundled
    # fit found (at its 3.59 TB/s the stream and the compute nearly tie)
    base = load_profile("h200-k1")
    prof = replace(
        base,
        unit_shared=("gemv",),
        unit_share=share,
        hbm_bytes_per_ns=base.hbm_peak_bytes_per_ns or base.hbm_bytes_per_ns,
    )
    tl = simulate(LaunchConfig(1, 1, 8), prof, occupancy=2).timeline
    return {s.partners: s.median_ns for s in partner_stats(tl) if s.stage == "gemv0"}


def test_a_gemv_cta_beside_another_takes_the_shared_factor_longer() -> None:
    plain, shared = _gemv0(0.0), _gemv0(0.25)
    assert plain["gemv"] == pytest.approx(plain["attn"])  # no sharing: one duration
    # the 16-row group is compute-bound here, so its whole time scales
    assert shared["gemv"] == pytest.approx(1.25 * plain["gemv"], rel=0.02)
    assert shared["attn"] == pytest.approx(plain["attn"], rel=0.02)  # an attn CTA computes no gemv


def test_sharing_is_off_for_stages_not_named() -> None:
    prof = replace(load_profile("h200-k1"), unit_shared=("mix",), unit_share=1.0)
    a = simulate(LaunchConfig(1, 1, 8), prof, occupancy=2).timeline
    b = simulate(LaunchConfig(1, 1, 8), load_profile("h200-k1"), occupancy=2).timeline
    assert a.makespan == b.makespan  # no two attn CTAs share a unit at 256 CTAs on 132 SMs
