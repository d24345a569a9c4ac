"""Visibility: the real publish is clean under an adversarial store model; a publish
without its drain, or stores after the flag, are caught."""

from __future__ import annotations

from pingpong_variants import VariantConfig

from kda_sim.checks.visibility import STORE_SLOW, adversarial, check_visibility
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.mutations import publish_without_drain, store_after_publish


def test_real_publish_is_not_flagged_even_with_slow_stores(mi355x, h200) -> None:
    for prof in (mi355x, h200):
        v = check_visibility(LaunchConfig(2, 1), prof, seeds=(1, 2))
        assert v.ok and v.runs == 3 and not v.findings
        assert v.flagged_loads == 197  # every gemv CTA reads the x rows


def test_adversarial_model_is_what_hides_nothing(mi355x) -> None:
    adv = adversarial(mi355x)
    assert adv.latency_ns["store_ack"] == mi355x.latency_ns["store_ack"] * STORE_SLOW
    assert adv.latency_ns["visibility_cross_xcd"] == 0.0


def test_publish_without_drain_is_caught_with_cta_slice_and_fix(mi355x) -> None:
    case = publish_without_drain(LaunchConfig(1, 2), mi355x)
    assert case.launch is not None
    v = check_visibility(case.cfg, case.prof, launch=case.launch)
    assert not v.ok
    f = v.findings[0]
    assert f.category.value == "visibility"
    assert f.details["region"] == "X" and 0 <= f.details["index"] < 56
    assert "load_x" in f.message and "XRDY[" in f.message and "drain" in f.fix


def test_nominal_timing_alone_can_hide_a_missing_drain(mi355x) -> None:
    # why the adversarial model is needed: at the profile's latencies the stores of the
    # no-drain mutant happen to land before any gemv CTA reads x
    case = publish_without_drain(LaunchConfig(1, 1), mi355x)
    nominal = simulate(case.cfg, case.prof, launch=case.launch)
    weak = check_visibility(case.cfg, case.prof, launch=case.launch)
    assert not weak.ok
    assert len(nominal.stale_reads) < len(weak.stale)


def test_stores_after_the_flag_are_caught(h200) -> None:
    case = store_after_publish(LaunchConfig(2, 2), h200)
    v = check_visibility(case.cfg, case.prof, launch=case.launch)
    assert not v.ok and v.findings[0].details["count"] > 0


# -- any kernel: the pingpong example with flagged data ------------------------------------
def test_a_pingpong_publish_without_drain_is_caught_in_its_own_words(mi355x) -> None:
    plain = check_visibility(VariantConfig(), mi355x)
    assert plain.ok and plain.flagged_loads == 0  # nothing to check, and said so
    assert check_visibility(VariantConfig(flagged=True, rounds=2), mi355x).flagged_loads == 2
    assert check_visibility(VariantConfig(flagged=True), mi355x).ok
    v = check_visibility(VariantConfig(flagged=True, drain=False), mi355x)
    assert not v.ok
    f = v.findings[0]
    assert f.details["region"] == "DATA" and f.details["index"] == 0 and f.details["cta"] == 1
    assert "read DATA[0] (flagged by FLAG[0] with this launch's tag)" in f.message
    assert "CTA 0's stores" in f.message and f.details["flag"] == "FLAG[0]"
    assert "flagged cells" in f.message and "Publish(drain=True)" in f.fix
