"""Profiles are data with documented sources; residency follows threads, registers, LDS."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import bundled_names, check_fits, load_profile, residency
from kda_sim.machine import profile as gp
from kda_sim.machine.profile import FIRST_TRY, PUT_BEHIND


def test_bundled_profiles_state_the_issue_figures() -> None:
    assert {"mi355x", "mi300x", "h200", "h100"} <= set(bundled_names())
    m, m3, h = load_profile("mi355x"), load_profile("mi300x"), load_profile("h200-stock")
    assert (m.units, m.xcds, m.lds_per_unit, m.hbm_bytes_per_ns) == (256, 8, 160 * 1024, 8000.0)
    assert (m3.units, m3.lds_per_unit, m3.hbm_bytes_per_ns) == (304, 64 * 1024, 5300.0)
    assert (h.units, h.lds_per_unit, h.hbm_bytes_per_ns) == (132, 228 * 1024, 4800.0)
    assert m.in_order_loads and not h.in_order_loads
    for p in (m, m3, h):
        assert p.sources and "costs" in p.sources  # every profile says where defaults come from


def test_the_h100_is_the_h200_s_chip_with_its_own_memory_and_measured_poll() -> None:
    """H100 SXM5: the H200's GH100 (132 SMs, 228 KiB shared memory an SM) with HBM3 at
    3.35 TB/s; its poll round trip run 101's H100 retry (335 ns); the name torch reports
    for the card means it, so a trace of one finds its profile."""
    from kda_sim.machine.profile import bundled_for

    h1, h2 = load_profile("h100", kernel=None), load_profile("h200", kernel=None)
    assert (h1.units, h1.lds_per_unit, h1.threads_per_unit) == (132, 228 * 1024, 2048)
    assert h1.hbm_bytes_per_ns == h1.hbm_peak_bytes_per_ns == 3350.0
    assert h1.latency_ns["poll"] == 335.0 and "run 101" in h1.sources["latency_ns.poll"]
    assert {k: v for k, v in h1.latency_ns.items() if k != "poll"} == {
        k: v for k, v in h2.latency_ns.items() if k != "poll"
    }
    assert bundled_for("NVIDIA H100 80GB HBM3") == "h100"
    assert bundled_for("NVIDIA H200") == "h200"


def test_residency_from_resources_and_override() -> None:
    h = load_profile("h200-stock")
    r = residency(LaunchConfig(1, 1), h)
    assert (r.per_unit, r.slots, r.limited_by) == (2, 264, "registers")
    big = residency(LaunchConfig(4, 2), h)  # x rows of 8 tokens: one CTA an SM
    assert (big.per_unit, big.limited_by) == (1, "LDS")
    assert residency(LaunchConfig(4, 2), h, occupancy=2).slots == 264
    with pytest.raises(InvalidInput, match="occupancy"):
        residency(LaunchConfig(1, 1), h, occupancy=0)


def test_the_h200_as_we_ship_it_keeps_two_ctas_an_sm_at_every_shape() -> None:
    # the Triton K1's resources (256 threads, 128 registers, 48 KiB shared, x rows not
    # staged): registers bound it to 2 an SM whatever the shape, as its traces recorded
    h = load_profile("h200")
    for shape in ((1, 1), (4, 2), (4, 4)):
        r = residency(LaunchConfig(*shape), h)
        assert (r.per_unit, r.slots, r.limited_by) == (2, 264, "registers"), shape


def test_x_rows_over_the_lds_budget_are_refused() -> None:
    check_fits(LaunchConfig(9, 1), load_profile("mi355x"))  # S = 9: 129 KiB <= 136 KiB
    with pytest.raises(InvalidInput, match="LDS"):
        check_fits(LaunchConfig(10, 1), load_profile("mi355x"))


def test_a_profile_file_loads_and_a_bad_one_is_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    d["name"] = "h200-fitted"
    good = tmp_path / "fit.json"
    good.write_text(json.dumps(d))
    assert load_profile(str(good)).name == "h200-fitted"
    del d["latency_ns"]["poll"]
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(d))
    with pytest.raises(InvalidInput, match="poll"):
        load_profile(str(bad))
    with pytest.raises(InvalidInput, match="unknown GPU"):
        load_profile("a100")


def test_streamed_weights_round_trip_and_a_bad_flag_is_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    assert d["streamed_weights"] is False
    d["streamed_weights"] = True
    f = tmp_path / "streamed.json"
    f.write_text(json.dumps(d))
    assert load_profile(str(f)).streamed_weights is True
    d["streamed_weights"] = "yes"
    f.write_text(json.dumps(d))
    with pytest.raises(InvalidInput, match="streamed_weights"):
        load_profile(str(f))


def test_unit_share_round_trips_and_bad_values_are_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    assert "unit_shared" not in d and "unit_share" not in d  # stock: no sharing, as before
    d["unit_shared"], d["unit_share"] = ["gemv"], 0.13
    f = tmp_path / "shared.json"
    f.write_text(json.dumps(d))
    p = load_profile(str(f))
    assert p.unit_shared == ("gemv",) and p.unit_share == 0.13
    assert p.to_dict()["unit_shared"] == ["gemv"] and p.to_dict()["unit_share"] == 0.13
    assert p.unit_share_from == 0.0 and "unit_share_from" not in p.to_dict()  # as before
    f.write_text(json.dumps(d | {"unit_share_from": 2}))
    assert load_profile(str(f)).to_dict()["unit_share_from"] == 2.0
    assert p.unit_share_skew == 0.0 and "unit_share_skew" not in p.to_dict()  # as before
    f.write_text(json.dumps(d | {"unit_share_skew": 0.25}))
    skewed = load_profile(str(f))
    assert skewed.to_dict()["unit_share_skew"] == 0.25
    # the first CTA on the unit and a later one straddle the one factor
    assert (skewed.share_factor(True), skewed.share_factor(False)) == pytest.approx(
        (1 + 0.13 * 0.75, 1 + 0.13 * 1.25)
    )
    assert p.share_factor(True) == p.share_factor(False) == pytest.approx(1.13)
    # the skew from four units on: a compute of fewer takes the one factor
    assert "unit_share_skew_from" not in skewed.to_dict()  # unset: as before the field
    f.write_text(json.dumps(d | {"unit_share_skew": 0.25, "unit_share_skew_from": 4}))
    from4 = load_profile(str(f))
    assert from4.to_dict()["unit_share_skew_from"] == 4.0
    assert from4.share_factor(True, 2) == from4.share_factor(False, 2) == pytest.approx(1.13)
    assert from4.share_factor(False, 4) == pytest.approx(1 + 0.13 * 1.25)
    f.write_text(json.dumps(d | {"unit_share_skew": 1.5}))  # a later CTA would speed up
    with pytest.raises(InvalidInput, match="unit_share_skew"):
        load_profile(str(f))
    for bad in ({"unit_share": -0.1}, {"unit_shared": ["no_such_stage"]}):
        f.write_text(json.dumps(d | bad))
        with pytest.raises(InvalidInput, match="unit_share"):
            load_profile(str(f))


def test_unit_share_first_task_round_trips_and_bad_keys_are_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    d["unit_shared"], d["unit_share"] = ["gemv"], 0.13
    f = tmp_path / "first.json"
    f.write_text(json.dumps(d))
    p = load_profile(str(f))
    assert "unit_share_first_task" not in p.to_dict()  # unset: as before the field existed
    assert p.share_keys == ("gemv",)
    f.write_text(json.dumps(d | {"unit_share_first_task": {"k.stage": 1.2}}))
    p = load_profile(str(f))
    assert p.to_dict()["unit_share_first_task"] == {"k.stage": 1.2}
    assert p.share_keys == ("gemv", "k.stage")
    f.write_text(json.dumps(d | {"unit_share_first_task": {"no_such_stage": 1.2}}))
    with pytest.raises(InvalidInput, match=r"unit_share_first_task\.no_such_stage"):
        load_profile(str(f))


def test_cost_growth_round_trips_and_bad_values_are_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    assert "cost_growth" not in d  # stock: no growth, as before the field existed
    f = tmp_path / "grown.json"
    f.write_text(json.dumps(d | {"cost_growth": {"k.recur": 0.05}}))
    p = load_profile(str(f))
    assert p.cost_growth == {"k.recur": 0.05} and p.to_dict()["cost_growth"] == {"k.recur": 0.05}
    assert p.grown("k.recur", 16) == pytest.approx(1.8) and p.grown("gemv", 16) == 1.0
    for bad, what in (
        ({"k.recur": 1.5}, "cost_growth"),  # above MAX_GROWTH
        ({"k.recur": -0.1}, "cost_growth"),
        ({"no_such_stage": 0.1}, "cost_growth.no_such_stage"),
    ):
        f.write_text(json.dumps(d | {"cost_growth": bad}))
        with pytest.raises(InvalidInput, match=what):
            load_profile(str(f))


def test_cta_spread_round_trips_in_a_profile_and_an_overlay(tmp_path: Path) -> None:
    """cta_spread: stage kind -> sd, written only where set; one number for every kind is
    refused naming the map form, and an overlay's kinds must be its kernel's stage kinds."""
    d = load_profile("h200-stock").to_dict()
    assert "cta_spread" not in d  # unset: as before the field existed
    f = tmp_path / "spread.json"
    gemv = {"gemv0": 0.025, "gemv1": 0.025}
    f.write_text(json.dumps(d | {"cta_spread": gemv}))
    p = load_profile(str(f))
    assert p.cta_spread == gemv and p.to_dict()["cta_spread"] == gemv
    assert p.with_params(spread_gemv1=0.0).cta_spread == {"gemv0": 0.025}
    k1 = load_profile("h200-k1")
    overlay = {"kernel": "k1", "gpu": "h200", "costs": {k: list(v) for k, v in k1.costs.items()}}
    o = tmp_path / "overlay.json"
    o.write_text(json.dumps(overlay | {"cta_spread": {"k.recur": 0.03}}))
    assert load_profile(str(o)).cta_spread == {"k.recur": 0.03}
    for bad, what in (
        (0.025, "is one number; it is a map of stage kind"),
        ({"gemv0": -0.1}, "cta_spread.gemv0"),  # below 0
        ({"gemv0": 1.5}, "cta_spread.gemv0"),  # above MAX_SPREAD
        ({"gemv0": "wide"}, "cta_spread.gemv0"),  # not a number
    ):
        f.write_text(json.dumps(d | {"cta_spread": bad}))
        with pytest.raises(InvalidInput, match=what):
            load_profile(str(f))
        o.write_text(json.dumps(overlay | {"cta_spread": bad}))
        with pytest.raises(InvalidInput, match=what):
            load_profile(str(o))
    o.write_text(json.dumps(overlay | {"cta_spread": {"gemv": 0.03}}))  # a cost key, not a kind
    with pytest.raises(InvalidInput, match=r"cta_spread\.gemv: not a stage kind of k1"):
        load_profile(str(o))


def test_a_bandwidth_above_the_datasheet_is_named(tmp_path: Path) -> None:
    d = load_profile("h200-stock").to_dict()
    assert d["hbm_peak_bytes_per_ns"] == 4800.0  # round-trips: a fit keeps the bound
    f = tmp_path / "fast.json"
    f.write_text(json.dumps(d | {"hbm_bytes_per_ns": 5100.0}))
    with pytest.raises(InvalidInput, match="above the datasheet's hbm_peak_bytes_per_ns 4800"):
        load_profile(str(f))
    f.write_text(json.dumps(d | {"hbm_bytes_per_ns": 5100.0, "hbm_peak_bytes_per_ns": None}))
    assert load_profile(str(f)).hbm_bytes_per_ns == 5100.0  # no datasheet figure: no bound


def _set_by_overlay(name: str) -> dict[str, float]:
    """The latencies the bundled profile ``name``'s fitted overlay sets (``h100-k1``: the
    H100's measured figures its fit pinned); none for a GPU alone or a stock name."""
    from kda_sim.kernels.registry import get
    from kda_sim.machine.costs import aliases, fitted_file

    alias = aliases().get(name)
    if alias is None:
        return {}
    gpu, kernel, build = alias
    d = json.loads(fitted_file(get(kernel), gpu, build).read_text())
    return d.get("overrides", {}).get("latency_ns", {})


def test_the_first_try_figures_default_to_0_round_trip_and_are_named(tmp_path: Path) -> None:
    """A poll's first try behind the CTA's own traffic: 0 in every bundled profile (every
    poll as before) but where a bundled fit pinned measured ones (``h100-k1``: 80 ns, 10.6
    ns a KiB stored, 4.8 a KiB loaded), a profile file's figures kept, a negative one
    refused by name."""
    for name in bundled_names():
        lat, pinned = load_profile(name, kernel=None).latency_ns, _set_by_overlay(name)
        assert all(lat[n] == pinned.get(n, 0.0) for n in FIRST_TRY), name
    pinning = {n for n in bundled_names() if any(_set_by_overlay(n).get(k) for k in FIRST_TRY)}
    assert pinning == {"h100-k1"}
    assert [load_profile("h100-k1").latency_ns[n] for n in FIRST_TRY] == [80.0, 10.6, 4.8]
    d = load_profile("h200-stock").to_dict()
    d["latency_ns"] |= {"first_try_stores": 80.0, "first_try_store_kib": 10.6}
    f = tmp_path / "behind.json"
    f.write_text(json.dumps(d))
    lat = load_profile(str(f)).latency_ns
    assert (lat["first_try_stores"], lat["first_try_store_kib"]) == (80.0, 10.6)
    assert lat["first_try_load_kib"] == 0.0  # left out: 0
    d["latency_ns"]["first_try_load_kib"] = -4.8
    f.write_text(json.dumps(d))
    with pytest.raises(InvalidInput, match="first_try_load_kib"):
        load_profile(str(f))


def test_the_put_figures_default_to_0_and_are_named(tmp_path: Path) -> None:
    """A put's pairs behind the CTA's own stores: 0 in every bundled profile (every put
    visible as before) but where a bundled fit pinned measured ones (``h100-k1``: 88 ns
    and 9.9 ns a KiB, the store pipe's line from the H200's probe, which the H100's matched
    within 32 ns), a profile file's figures kept, a negative one refused by name."""
    for name in bundled_names():
        lat, pinned = load_profile(name, kernel=None).latency_ns, _set_by_overlay(name)
        assert all(lat[n] == pinned.get(n, 0.0) for n in PUT_BEHIND), name
    pinning = {n for n in bundled_names() if any(_set_by_overlay(n).get(k) for k in PUT_BEHIND)}
    assert pinning == {"h100-k1"}
    assert [load_profile("h100-k1").latency_ns[n] for n in PUT_BEHIND] == [88.0, 9.9]
    d = load_profile("h200-stock").to_dict()
    d["latency_ns"] |= {"put_stores": 88.0}
    f = tmp_path / "put.json"
    f.write_text(json.dumps(d))
    lat = load_profile(str(f)).latency_ns
    assert (lat["put_stores"], lat["put_store_kib"]) == (88.0, 0.0)  # left out: 0
    d["latency_ns"]["put_store_kib"] = -9.9
    f.write_text(json.dumps(d))
    with pytest.raises(InvalidInput, match="put_store_kib"):
        load_profile(str(f))


def _outcome(name: str, kernel: str | None) -> object:
    try:
        return load_profile(name, kernel=kernel)
    except InvalidInput as e:
        return str(e)


def test_a_gpu_s_own_name_loads_as_through_every_bundled_name(monkeypatch) -> None:
    # a bundled GPU's own name skips listing the other names (which imports every
    # built-in kernel): the same profile, or the same refusal, as the listing gives
    names = [*gp.gpu_names(), "h200-stock", "h200-k1", "h200x"]
    kernels = [None, "k1", "monomoe", "pingpong", "nokernel"]
    fast = {(n, k): _outcome(n, k) for n in names for k in kernels}
    monkeypatch.setattr(gp, "_own_gpu_name", lambda name: False)
    slow = {(n, k): _outcome(n, k) for n in names for k in kernels}
    assert fast == slow
    assert any(isinstance(v, str) for v in fast.values())  # refusals compared too


def test_a_gpu_s_own_name_imports_no_other_kernel(fresh_python) -> None:
    code = (
        "from kda_sim.machine.profile import load_profile\n"
        "from kda_sim.kernels import registry\n"
        "load_profile('h200', kernel='k1')\nprint(sorted(registry._loaded))"
    )
    assert fresh_python(code) == "['k1']"
