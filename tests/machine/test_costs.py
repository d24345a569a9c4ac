"""A kernel's costs kept with the kernel and merged onto a GPU profile: which costs a name
picks (fitted overlay, stock, the kernel's default_costs), that it says so in words, the
``h200-stock`` and ``h200-k1`` names, and costs files refused on load naming the file and
the key."""

from __future__ import annotations

import json
import textwrap
from dataclasses import replace
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.pingpong import KERNEL as PINGPONG
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import get
from kda_sim.machine.costs import profile_for, stock_names, with_kernel_costs
from kda_sim.machine.profile import bundled_names, gpu_names, load_gpu, load_profile

K1_COSTS = resources.files("kda_sim.kernels.k1").joinpath("costs")
FITTED = (
    "k1 costs fitted on h200 by kda-sim calibrate (2026-12-04 22:24 UTC): the Triton K1 we "
    "ship (kernel/triton), as its H200 traces ran"
)
SEED = "the seed's build"


def _k1_file(name: str) -> dict[str, Any]:
    return json.loads(K1_COSTS.joinpath(name).read_text())


def test_a_bundled_gpu_holds_no_kernel_costs() -> None:
    for g in gpu_names():
        raw = json.loads(
            resources.files("kda_sim.machine").joinpath(f"profiles/{g}.json").read_text()
        )
        assert not {"costs", "cost_above", "unit_shared"} & set(raw)
        gpu = load_gpu(g)
        assert gpu.costs == {} and gpu.gpu == g and gpu.costs_from == ""


def test_k1_keeps_stock_costs_for_its_gpus_and_fitted_overlays_for_the_h200_and_h100() -> None:
    names = sorted(p.name for p in K1_COSTS.iterdir() if p.name.endswith(".json"))
    assert names == [
        "h100.fitted.json",  # fitted on the bundled H100 traces
        "h100.json",  # the H200's assumed figures, until fitted
        "h200.fitted.json",
        "h200.json",
        "h200.kda_tickets.fitted.json",  # the ticket build's own (cost_build)
        "h200.kda_tickets_unrolled.fitted.json",  # the unrolled one's: the static + its share
        "mi300x.json",
        "mi355x.json",
    ]
    for g in ("h100-stock", "h200-stock", "mi300x", "mi355x"):
        gpu = g.removesuffix("-stock")
        d = _k1_file(f"{gpu}.json")
        prof = load_profile(g)
        assert prof.costs == {k: tuple(v) for k, v in d["costs"].items()}
        assert list(prof.costs) == list(get("k1").cost_keys)
        assert prof.costs_from.startswith(f"k1 stock costs for {gpu}: {SEED}")


def test_a_gpu_k1_has_no_costs_for_is_refused_naming_them() -> None:
    # the bug corpus's GPUs (h20, b200, ...) carry no K1 costs: none were measured
    for g in sorted(set(gpu_names()) - {"h100", "h200", "mi300x", "mi355x"}):
        with pytest.raises(InvalidInput, match=f"no costs of k1 for GPU '{g}'"):
            load_profile(g)


def test_h200_for_k1_is_the_fitted_overlay_and_says_so() -> None:
    """``--gpu h200`` with K1 runs the costs fitted to the kernel we ship (issue 37: the
    stock figures contradicted the bundled traces), and its costs_from says so."""
    prof = load_profile("h200")
    assert prof.name == "h200" and prof.costs_from == FITTED
    d = _k1_file("h200.fitted.json")
    assert prof.costs["gemv"] == tuple(d["costs"]["gemv"])
    assert prof.kernel.regs_per_thread == d["overrides"]["kernel"]["regs_per_thread"] == 128
    assert replace(prof, name="h200-k1") == load_profile("h200-k1")
    # a bare GPU passed to the engine means what its name means: the same launch
    cfg = LaunchConfig(4, 2)
    bare = simulate(cfg, load_gpu("h200")).timeline
    named = simulate(cfg, prof).timeline
    assert bare.meta.extra["costs"] == FITTED and bare.makespan == named.makespan
    # R=4 L=2 finishes on it, as the bundled H200 trace of that shape did
    assert not named.deadlock


def test_h200_stock_is_the_seeds_build_and_says_so() -> None:
    prof = load_profile("h200-stock")
    d = _k1_file("h200.json")
    assert prof.name == "h200-stock" and prof.gpu == "h200"
    assert prof.costs == {k: tuple(v) for k, v in d["costs"].items()}
    # the GPU's own build figures: no overlay's overrides
    assert prof.kernel == load_gpu("h200").kernel and not prof.streamed_weights
    assert prof.latency_ns == load_gpu("h200").latency_ns
    # in words, quoting the costs file's own build source
    assert prof.costs_from == f"k1 stock costs for h200: {d['sources']['build']}"
    assert SEED in prof.costs_from and "not the Triton K1 we ship" in prof.costs_from
    assert simulate(LaunchConfig(4, 2), prof).timeline.deadlock  # one CTA an SM: 132 slots


def test_h100_for_k1_is_its_fitted_overlay_and_h100_stock_the_assumed_figures(capsys) -> None:
    """K1 on the H100: ``h100`` (and ``h100-k1``) runs the costs fitted to its H100
    traces, with the H100's measured try, first-try and put figures the fit pinned;
    ``h100-stock`` the stock costs, the H200's assumed figures (none measured on an H100)
    on the h100 GPU."""
    prof, d = load_profile("h100"), _k1_file("h100.fitted.json")
    assert prof.name == "h100" and prof.gpu == "h100" and prof.streamed_weights
    assert prof.costs_from.startswith("k1 costs fitted on h100 by kda-sim calibrate (")
    assert prof.costs_from.endswith(
        ": the Triton K1 we ship (kernel/triton), as its H100 traces ran"
    )
    assert prof.costs["k.recur"] == tuple(d["costs"]["k.recur"])
    assert (prof.latency_ns["poll"], prof.latency_ns["poll_lane"]) == (288.0, 55.0)
    assert prof.latency_ns["put_stores"] == d["overrides"]["latency_ns"]["put_stores"] == 88.0
    assert prof.latency_ns["first_try_stores"] == 80.0
    assert prof.kernel.threads == 256 and prof.units == 132
    assert prof.hbm_peak_bytes_per_ns == 3350.0  # the H100's datasheet, not the H200's
    assert replace(load_profile("h100-k1"), name="h100") == prof
    stock, h200 = load_profile("h100-stock"), _k1_file("h200.json")
    assert stock.costs == {k: tuple(v) for k, v in h200["costs"].items()}
    assert stock.costs_from == f"k1 stock costs for h100: {h200['sources']['build']}"
    assert "the same figures as h200.json" in _k1_file("h100.json")["sources"]["costs"]
    assert stock.kernel == load_gpu("h100").kernel and not stock.streamed_weights
    assert stock.latency_ns == load_gpu("h100").latency_ns
    assert main(["simulate", "--gpu", "h100-stock", "--R", "1", "--L", "1"]) == 0
    assert f"costs: k1 stock costs for h100: {SEED}" in capsys.readouterr().err


def test_stock_names_are_listed_where_a_kernel_has_both() -> None:
    assert stock_names() == ["h100-stock", "h200-stock"] == stock_names("k1")
    assert "h200-stock" in bundled_names() and "mi355x-stock" not in bundled_names()
    assert stock_names("pingpong") == []


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--kernel", "pingpong", "--gpu", "h200-stock"], "pingpong has no stock costs for h200"),
        (["--gpu", "mi355x-stock"], "unknown GPU 'mi355x-stock'"),
        (["--gpu", "h20-stock"], "unknown GPU 'h20-stock'"),
    ],
)
def test_an_unknown_stock_combination_exits_2(capsys, argv: list[str], said: str) -> None:
    assert main(["simulate", *argv]) == 2
    assert said in capsys.readouterr().err


def test_a_kernel_without_an_overlay_is_unchanged() -> None:
    """pingpong has no costs for the H200: the GPU's name runs its default_costs on the
    GPU's own figures, as before the fitted overlay became the name's meaning."""
    prof = load_profile("h200", kernel="pingpong")
    assert prof.costs_from == "pingpong default_costs (no pingpong costs for h200)"
    assert prof.kernel == load_gpu("h200").kernel
    assert prof.latency_ns == load_gpu("h200").latency_ns
    assert prof.costs == dict(PINGPONG.default_costs)
    # K1's H200 (its fit's latencies and build) handed to pingpong: the run says so
    said = simulate(PingPongConfig(), load_profile("h200")).timeline.meta.extra["costs"]
    assert said.startswith("pingpong default_costs") and f"on h200, made for {FITTED}" in said


def test_the_profiles_identity_tells_fitted_from_stock() -> None:
    ids = {n: load_profile(n).identity() for n in ("h200", "h200-stock", "h200-k1")}
    assert len(set(ids.values())) == 3  # the name is part of it; so are the costs
    assert load_profile("h200").identity() == ids["h200"]  # stable
    same = load_profile("h200")
    assert replace(same, costs_from="other").identity() != ids["h200"]
    assert same.with_params(poll=1.0).identity() != ids["h200"]


def test_precedence_fitted_then_stock_then_default_costs() -> None:
    fitted = profile_for("h200", "k1")
    assert fitted.costs_from == FITTED and fitted.streamed_weights
    d = _k1_file("h200.fitted.json")
    assert fitted.costs["gemv"] == tuple(d["costs"]["gemv"])
    assert fitted.latency_ns["poll"] == d["overrides"]["latency_ns"]["poll"]
    assert fitted.kernel.threads == d["overrides"]["kernel"]["threads"]
    # what the overlay leaves alone is the GPU's
    assert fitted.latency_ns["retry"] == load_gpu("h200").latency_ns["retry"]
    assert fitted.units == 132 and fitted.hbm_peak_bytes_per_ns == 4800.0
    stock = profile_for("h200", "k1", fitted=False).costs_from
    assert stock.startswith(f"k1 stock costs for h200: {SEED}")
    mi = profile_for("mi355x", "k1").costs_from  # no fitted one
    assert mi == f"k1 stock costs for mi355x: {_k1_file('mi355x.json')['sources']['build']}"
    pp = profile_for("mi355x", "pingpong")
    assert pp.costs_from == "pingpong default_costs (no pingpong costs for mi355x)"
    assert pp.costs == dict(PINGPONG.default_costs)


def test_the_alias_is_the_fitted_overlay_on_its_gpu() -> None:
    assert "h200-k1" in bundled_names() and "h200-k1" not in gpu_names()
    alias = load_profile("h200-k1")
    assert alias.name == "h200-k1" and alias.gpu == "h200"
    assert replace(alias, name="h200") == profile_for("h200", "k1")
    # the alias names K1's fitted costs whatever kernel the caller runs
    assert load_profile("h200-k1", kernel="pingpong").costs == alias.costs


def test_a_kernel_without_costs_for_a_gpu_runs_its_default_costs_and_says_so(capsys) -> None:
    res = simulate(PingPongConfig(), load_gpu("h200"))
    said = "pingpong default_costs (no pingpong costs for h200)"
    assert res.timeline.meta.extra["costs"] == said
    assert main(["simulate", "--kernel", "pingpong", "--gpu", "mi300x"]) == 0
    assert "costs: pingpong default_costs (no pingpong costs for mi300x)" in capsys.readouterr().err


def test_simulate_states_the_costs_it_ran_in_the_meta_and_on_stderr(capsys) -> None:
    cfg = LaunchConfig(1, 1)
    assert simulate(cfg, load_gpu("h200")).timeline.meta.extra["costs"] == FITTED
    said = simulate(cfg, load_profile("h200-stock")).timeline.meta.extra["costs"]
    assert said.startswith(f"k1 stock costs for h200: {SEED}")
    tl = simulate(cfg, load_profile("h200-k1")).timeline
    assert tl.meta.extra["costs"] == FITTED and tl.meta.gpu == "h200-k1"
    for gpu in ("h200-k1", "h200"):
        assert main(["simulate", "--gpu", gpu, "--R", "1", "--L", "1"]) == 0
        assert f"costs: {FITTED}" in capsys.readouterr().err
    # a bare GPU runs the kernel's stock costs: the same launch as the profile with them
    bare = simulate(cfg, load_gpu("mi355x")).timeline
    assert bare.makespan == simulate(cfg, load_profile("mi355x")).timeline.makespan


def test_a_profile_holding_the_kernels_costs_keeps_them() -> None:
    prof = load_profile("h200-k1")
    assert with_kernel_costs(prof, "k1") is prof


def _kernel_file(tmp_path: Path, costs: dict[str, dict[str, Any]], default: bool) -> Path:
    """A kernel given by path whose costs folder holds ``costs`` (file name -> contents)."""
    folder = tmp_path / "costs"
    folder.mkdir()
    for name, d in costs.items():
        (folder / name).write_text(json.dumps(d))
    src = textwrap.dedent(
        f"""
        from dataclasses import dataclass, replace
        from kda_sim.kernels.examples.pingpong import KERNEL as PP, PingPongConfig

        @dataclass(frozen=True)
        class PP2Config(PingPongConfig):  # its own type: pingpong's stays pingpong's
            pass

        KERNEL = replace(PP, name="pp2", config_type=PP2Config, costs_dir={str(folder)!r},
                         default_costs={{"pp.produce": (800.0, 0.0), "pp.consume": (400.0, 0.0)}}
                         if {default} else {{}})
        """
    )
    path = tmp_path / "pp2.py"
    path.write_text(src)
    return path


def _pp(gpu: str = "h200", **more: Any) -> dict[str, Any]:
    costs = {"pp.produce": [500.0, 0.0], "pp.consume": [300.0, 0.0]}
    return {"kernel": "pp2", "gpu": gpu, "costs": costs, **more}


def test_a_kernels_own_costs_folder_is_read_in_order(tmp_path: Path) -> None:
    prov = {"by": "kda-sim calibrate", "date": "2026-12-05 01:00 UTC"}
    fitted = _pp(overrides={"latency_ns": {"poll": 250.0}}, provenance=prov)
    fitted["costs"]["pp.produce"] = [900.0, 0.0]
    path = _kernel_file(tmp_path, {"h200.json": _pp(), "h200.fitted.json": fitted}, True)
    spec = get(str(path))
    got = profile_for("h200", spec)
    assert got.costs["pp.produce"] == (900.0, 0.0) and got.latency_ns["poll"] == 250.0
    assert got.costs_from == "pp2 costs fitted on h200 by kda-sim calibrate (2026-12-05 01:00 UTC)"
    assert load_profile("h200", kernel=spec) == got  # the GPU's name: the fitted overlay
    stock = load_profile("h200-stock", kernel=spec)  # a kernel given by path: the same names
    assert (
        stock.costs["pp.produce"] == (500.0, 0.0) and stock.costs_from == "pp2 stock costs for h200"
    )
    assert stock.latency_ns["poll"] == load_gpu("h200").latency_ns["poll"]
    assert profile_for("mi355x", spec).costs_from.startswith("pp2 default_costs")


def test_a_kernel_with_no_costs_for_a_gpu_and_no_default_is_refused(tmp_path: Path) -> None:
    spec = get(str(_kernel_file(tmp_path, {}, False)))
    with pytest.raises(
        InvalidInput, match=r"no costs of pp2 for GPU 'h200' \(profile name 'h200'\): pp\.produce"
    ):
        profile_for("h200", spec)


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["costs"].__setitem__("pp.bogus", [1.0, 0.0]), "costs.pp.bogus: not a cost"),
        (lambda d: d["costs"].pop("pp.consume"), "costs.pp.consume: missing"),
        (lambda d: d["costs"].__setitem__("pp.produce", [-1.0, 0.0]), "costs.pp.produce[0]"),
        (lambda d: d["costs"].__setitem__("pp.produce", [2e8, 0.0]), "costs.pp.produce[0]"),
        (lambda d: d.__setitem__("colour", "red"), "colour"),
        (lambda d: d.__setitem__("overrides", {"units": 4}), "overrides: Additional"),
        (lambda d: d.__setitem__("overrides", {"latency_ns": {"poll": 0.0}}), "latency_ns.poll"),
        (lambda d: d.__setitem__("overrides", {"latency_ns": {"warp": 1.0}}), "latency_ns"),
        (lambda d: d.__setitem__("kernel", "k1"), "kernel: the file is 'k1'"),
        (lambda d: d.__setitem__("unit_shared", ["pp.bogus"]), "unit_shared.pp.bogus"),
        (lambda d: d.__setitem__("provenance", {"by": "me"}), "provenance: 'date'"),
        (lambda d: d.__setitem__("gpu", "mi355x"), "gpu: 'mi355x', in the file kept for 'h200'"),
    ],
)
def test_a_bad_costs_file_exits_2_naming_the_file_and_key(
    tmp_path: Path, capsys, edit: Any, said: str
) -> None:
    d = _pp()
    edit(d)
    path = _kernel_file(tmp_path, {"h200.json": d}, True)
    assert main(["simulate", "--kernel", str(path), "--gpu", "h200"]) == 2
    err = capsys.readouterr().err
    assert said in err and str(tmp_path / "costs" / "h200.json") in err


@pytest.mark.parametrize("const", ["NaN", "Infinity"])
def test_nan_in_an_overlay_is_refused_naming_the_file(tmp_path: Path, capsys, const: str) -> None:
    text = json.dumps(_k1_file("h200.fitted.json")).replace("270.3098438294479", const)
    p = tmp_path / "fit.json"
    p.write_text(text)
    assert main(["simulate", "--profile", str(p), "--R", "1", "--L", "1"]) == 2
    err = capsys.readouterr().err
    assert str(p) in err and "overrides.latency_ns.poll" in err and const in err


def test_a_user_overlay_loads_on_its_gpu_and_names_itself(tmp_path: Path) -> None:
    p = tmp_path / "fit.json"
    p.write_text(json.dumps(_k1_file("h200.fitted.json")))
    prof = load_profile(str(p))
    assert prof.name == "h200-k1-fitted" and prof.costs_from == f"{FITTED}; from {p}"
    assert replace(prof, name="h200-k1", costs_from=FITTED) == load_profile("h200-k1")
    bad = _k1_file("h200.fitted.json") | {"gpu": "a100"}
    p.write_text(json.dumps(bad))
    with pytest.raises(InvalidInput, match="'a100' is neither a bundled GPU") as e:
        load_profile(str(p))
    assert e.value.where == str(p)


def test_an_overlay_on_a_gpu_profile_file_beside_it(tmp_path: Path) -> None:
    gpu = load_gpu("mi355x").to_dict() | {"name": "mi355x-lab", "units": 128, "xcds": 4}
    (tmp_path / "lab.json").write_text(json.dumps(gpu))
    d = _k1_file("mi355x.json") | {"gpu": "lab.json"}
    (tmp_path / "k1-lab.json").write_text(json.dumps(d))
    prof = load_profile(str(tmp_path / "k1-lab.json"))
    assert prof.units == 128 and prof.costs == load_profile("mi355x").costs


def test_a_gpu_profile_file_gets_the_stock_costs_of_the_gpu_its_name_says(tmp_path: Path) -> None:
    p = tmp_path / "my_h200.json"
    p.write_text(json.dumps(load_gpu("h200").to_dict() | {"units": 66}))
    prof = load_profile(str(p))
    assert prof.units == 66 and prof.costs == load_profile("h200-stock").costs
    assert prof.costs_from.startswith(f"k1 stock costs for h200: {SEED}")
    p.write_text(json.dumps(load_gpu("h200").to_dict() | {"name": "lab-gpu"}))
    with pytest.raises(InvalidInput, match=r"profile name 'lab-gpu'\): slice"):
        load_profile(str(p))


def test_a_builds_own_overlay_is_picked_for_that_build_only(tmp_path: Path) -> None:
    """``<gpu>.<build>.fitted.json``: a build with its own code (K1's kda_tickets loop)
    gets its own fitted costs, by ``build`` or by the ``<gpu>-<kernel>-<build>`` name;
    any other build keeps the kernel's fitted overlay."""
    from kda_sim.machine.costs import builds_fitted, fitted_file

    prov = {"by": "kda-sim calibrate", "date": "2026-12-05 01:00 UTC"}
    fitted = _pp(provenance=prov)
    loop = _pp(provenance=prov)
    loop["costs"]["pp.produce"] = [1700.0, 0.0]
    files = {"h200.json": _pp(), "h200.fitted.json": fitted, "h200.loop.fitted.json": loop}
    spec = get(str(_kernel_file(tmp_path, files, False)))
    assert builds_fitted(spec, "h200") == ["loop"] and builds_fitted(spec, "mi355x") == []
    got = profile_for("h200", spec, build="loop")
    assert got.costs["pp.produce"] == (1700.0, 0.0)
    assert got.costs_from == (
        "pp2 (loop build) costs fitted on h200 by kda-sim calibrate (2026-12-05 01:00 UTC)"
    )
    assert profile_for("h200", spec).costs["pp.produce"] == (500.0, 0.0)
    assert profile_for("h200", spec, build="other").costs["pp.produce"] == (500.0, 0.0)
    assert fitted_file(spec, "h200", "other") is None
    with pytest.raises(InvalidInput, match="letters, digits and _ only"):
        fitted_file(spec, "h200", "../x")


def test_k1s_ticket_build_has_its_own_fitted_costs() -> None:
    """The kda_tickets build's overlay (lab/ticket_k1_fit.py, the measured traces): named
    h200-k1-kda_tickets, its machine the static fit's, its kda and gemv costs its own."""
    static, tickets = load_profile("h200-k1"), load_profile("h200-k1-kda_tickets")
    assert "h200-k1-kda_tickets" in bundled_names()
    assert tickets.latency_ns == static.latency_ns
    assert tickets.hbm_bytes_per_ns == static.hbm_bytes_per_ns
    assert tickets.costs["slice"] == static.costs["slice"]
    for key in ("k.conv", "k.gates", "k.norm"):
        assert tickets.cost(key, 2) > static.cost(key, 2)  # the build spills at L >= 2
        assert tickets.cost_above[key][0] == 1.0  # fitted apart at L = 1 and L >= 2
    assert tickets.cost_above["gemv"] != static.cost_above["gemv"]
    assert tickets.costs_from.startswith(
        "k1 (kda_tickets build) costs fitted on h200 by kda-sim calibrate ("
    )


def test_k1s_unrolled_ticket_build_is_the_static_fit_plus_its_code_share() -> None:
    """h200-k1-kda_tickets_unrolled (lab/ticket_code_fit.py, run 100's untraced times):
    every cost and machine parameter h200-k1's, but gemv (+ a group's share, both forms)
    and k.norm (+ an item's share, apart at L = 1 and L >= 2), labelled as fitted."""
    static, unrolled = load_profile("h200-k1"), load_profile("h200-k1-kda_tickets_unrolled")
    assert unrolled.latency_ns == static.latency_ns
    assert unrolled.hbm_bytes_per_ns == static.hbm_bytes_per_ns
    assert {k for k in static.costs if unrolled.costs[k] != static.costs[k]} == {"gemv", "k.norm"}
    g = unrolled.cost("gemv", 1) - static.cost("gemv", 1)
    assert g > 0 and unrolled.cost("gemv", 16) - static.cost("gemv", 16) == pytest.approx(g)
    x1 = unrolled.cost("k.norm", 1) - static.cost("k.norm", 1)
    x2 = unrolled.cost("k.norm", 2) - static.cost("k.norm", 2)
    assert 0 < x1 < x2 == pytest.approx(unrolled.cost("k.norm", 4) - static.cost("k.norm", 4))
    assert "fitted to untraced times" in unrolled.costs_from
    assert unrolled.costs_from.startswith("k1 (kda_tickets_unrolled build) costs fitted on h200")
