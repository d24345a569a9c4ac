"""The H100 start of run 97's static fit (no GPU): h200-k1 with the H100's HBM bandwidth
at the H200 fit's fraction of its peak, or at a fraction given; sharing read from traces."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import load_profile
from lab.k1_h100_fit import H100_HBM_PEAK, SHARED, h100_base, main


def test_the_h100_keeps_the_h200_fits_fraction_of_its_peak() -> None:
    base = load_profile("h200-k1")
    got = h100_base(base)
    frac = base.hbm_bytes_per_ns / base.hbm_peak_bytes_per_ns
    assert got.hbm_bytes_per_ns == pytest.approx(frac * H100_HBM_PEAK)
    assert got.costs == base.costs and got.latency_ns == base.latency_ns
    assert h100_base(base, frac=0.9).hbm_bytes_per_ns == pytest.approx(0.9 * H100_HBM_PEAK)
    assert not got.unit_shared  # sharing only from traces


def test_sharing_is_read_from_the_traces() -> None:
    """Simulated launches of a profile that shares SHARED by 0.3: the factor read back
    from their stage times is near it (two gemv CTAs on a unit, R = 2's kda pairs)."""
    from dataclasses import replace

    from kda_sim.compare.calibrate import prepare
    from kda_sim.engine import simulate
    from kda_sim.kernels.k1.config import LaunchConfig

    base = load_profile("h200-k1")
    # the datasheet's bandwidth: compute-bound gemv groups, so sharing shows in them
    prof = replace(
        base, unit_shared=SHARED, unit_share=0.3, hbm_bytes_per_ns=base.hbm_peak_bytes_per_ns
    )
    trs = [
        prepare(simulate(LaunchConfig(R, 2, 8), prof, occupancy=2).timeline, f"R{R}")
        for R in (1, 2)
    ]
    got = h100_base(base, trs)
    assert got.unit_shared == SHARED
    assert 0.15 < got.unit_share < 0.45


def test_a_fraction_out_of_range_is_refused(capsys) -> None:
    with pytest.raises(InvalidInput):
        h100_base(load_profile("h200-k1"), frac=1.5)
    assert main(["--dir", "/nonexistent", "--hbm-fracs", "0.9,x"]) == 2
    assert "--hbm-fracs" in capsys.readouterr().err


def test_another_cards_peak_moves_the_bandwidth(capsys) -> None:
    """``--peak``: the same fraction of another card's datasheet peak (an H200 run's
    static traces fit at the H200's 4800 B/ns); a peak of 0 is refused, exit 2."""
    base = load_profile("h200-k1")
    frac = base.hbm_bytes_per_ns / base.hbm_peak_bytes_per_ns
    h200 = h100_base(base, peak=4800.0)
    assert h200.hbm_bytes_per_ns == pytest.approx(base.hbm_bytes_per_ns)
    assert h100_base(base, frac=0.5, peak=4800.0).hbm_bytes_per_ns == pytest.approx(2400.0)
    assert h100_base(base).hbm_bytes_per_ns == pytest.approx(frac * H100_HBM_PEAK)
    assert main(["--dir", "nowhere", "--peak", "0"]) == 2
    assert "--peak 0.0" in capsys.readouterr().err
