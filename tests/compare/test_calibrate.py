"""Calibration: stage costs and machine parameters recovered from perturbed launches.

The full acceptance run (three shapes fitted, the rest predicted) takes minutes on two
cores: ``lab/compare_calibrate_synthetic.py``; here a small budget shows each piece
works and the profile file loads."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.compare.calibrate import (
    DEFAULT_SEARCH,
    MAX_SEEDS,
    apply_search,
    correct_costs,
    evaluate,
    fit_costs,
    fit_profile,
    fitted_overlay,
    pinned,
    prepare,
    searched,
    with_seeds,
    write_overlay,
)
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import (
    FIRST_TRY,
    MAX_CROWD,
    MAX_GROWTH,
    PUT_BEHIND,
    load_profile,
)


@pytest.fixture(scope="module")
def slow_recur(h200, skew):
    """k.recur 1.5x slower, on skewed clocks: the truth a fit should find."""
    b, u = h200.costs["k.recur"]
    truth = h200.with_params(**{"cost_k.recur": (1.5 * b, 1.5 * u)})
    tl, _ = skew(simulate(LaunchConfig(1, 2), truth).timeline, 3)
    return truth, prepare(tl, "R1L2")


def test_cost_correction_recovers_a_scaled_stage(h200, slow_recur) -> None:
    truth, tr = slow_recur
    prof = h200
    for _ in range(2):
        prof = correct_costs(prof, [tr], [simulate(tr.cfg, prof).timeline])
    want = truth.cost("k.recur", 2)
    assert prof.cost("k.recur", 2) == pytest.approx(want, rel=0.05)
    assert prof.costs["k.conv"] == pytest.approx(h200.costs["k.conv"], rel=0.1)
    before = evaluate(h200, [tr])["R1L2"]
    after = evaluate(prof, [tr])["R1L2"]
    assert abs(after.makespan_err) < abs(before.makespan_err)


def test_fit_writes_an_overlay_the_simulator_loads(tmp_path: Path, h200, slow_recur) -> None:
    _, tr = slow_recur
    res = fit_profile(h200, [tr], budget=3, cost_passes=1, progress=False)
    assert res.launches >= 4 and len(res.history) == 3
    d = fitted_overlay(res, h200, [tr], out=tmp_path / "fit.json")
    out = tmp_path / "fit.json"
    write_overlay(d, out)
    written = json.loads(out.read_text())
    # the kernel's costs, what the fit moved of the GPU, and where it came from: no units,
    # no memory model, nothing of the profile the fit did not change
    assert written["kernel"] == "k1" and written["gpu"] == "h200" and "units" not in written
    assert set(written["costs"]) == set(h200.costs)
    assert set(written.get("overrides", {})) <= {
        "latency_ns",
        "hbm_bytes_per_ns",
        "unit_bytes_per_ns",
    }
    assert written["provenance"]["by"] == "kda-sim calibrate"
    assert "R1L2" in written["provenance"]["detail"]
    prof = load_profile(str(out))
    assert prof.name == "h200-k1-fitted" and "R1L2" in prof.sources["calibration"]
    assert prof.costs == res.profile.costs and prof.latency_ns == res.profile.latency_ns
    assert prof.costs_from.startswith("k1 costs fitted on h200 by kda-sim calibrate (")
    # a fit does not carry its start's build text (the seed's) over, nor its start's
    # words on the costs it replaced (the stock file's "assumed")
    assert "costs" in h200.sources
    assert "build" not in written.get("sources", {})
    assert "costs" not in written.get("sources", {})
    assert str(out) in prof.costs_from
    a, b = simulate(tr.cfg, prof).timeline, simulate(tr.cfg, res.profile).timeline
    assert a.makespan is not None and a.makespan == b.makespan


def test_search_parameters(h200) -> None:
    import numpy as np

    x = np.zeros(len(DEFAULT_SEARCH))
    x[DEFAULT_SEARCH.index("hbm_bytes_per_ns")] = np.log(0.5)
    p = apply_search(h200, x)
    assert p.hbm_bytes_per_ns == pytest.approx(0.5 * h200.hbm_bytes_per_ns)
    # never faster than the datasheet's 4.8 TB/s, however far the search reaches
    x[DEFAULT_SEARCH.index("hbm_bytes_per_ns")] = np.log(2.0)
    assert h200.hbm_peak_bytes_per_ns == 4800.0
    assert apply_search(h200, x).hbm_bytes_per_ns == 4800.0
    no_peak = replace(h200, hbm_peak_bytes_per_ns=None)
    assert apply_search(no_peak, x).hbm_bytes_per_ns == pytest.approx(9600.0)
    p = apply_search(
        h200, np.array([0.0, 0.0, np.log(2.0)]), ("hbm_bytes_per_ns", "poll", "visibility")
    )
    assert p.latency_ns["visibility_cross_xcd"] == pytest.approx(
        2 * h200.latency_ns["visibility_cross_xcd"]
    )
    with pytest.raises(InvalidInput, match="unknown search"):
        apply_search(h200, np.zeros(1), ("bogus",))
    # put_crowd is a factor: searched on request, it stays where a profile may hold it
    crowd = [apply_search(h200, np.array([v]), ("put_crowd",)) for v in (-5.0, 0.25, 50.0)]
    assert [c.latency_ns["put_crowd"] for c in crowd] == [0.0, 0.25, MAX_CROWD]
    assert "put_crowd" not in DEFAULT_SEARCH


def test_a_costs_growth_is_searched_on_request_within_its_bounds(h200) -> None:
    """``--search growth_k.recur``: a factor added to the growth the fit started from,
    kept within [0, MAX_GROWTH]; not searched by default; a name without a stage cost
    refused."""
    import numpy as np

    assert not any(n.startswith("growth_") for n in DEFAULT_SEARCH)
    assert searched(["growth_k.recur"], {})[-1] == "growth_k.recur"
    start = h200.with_params(**{"growth_k.recur": 0.04})
    got = [
        apply_search(start, np.array([v]), ("growth_k.recur",)).cost_growth.get("k.recur", 0.0)
        for v in (-1.0, 0.01, 5.0)
    ]
    assert got == pytest.approx([0.0, 0.05, MAX_GROWTH])
    with pytest.raises(InvalidInput, match="growth_nothing"):
        apply_search(h200, np.zeros(1), ("growth_nothing",))


def test_the_first_try_figures_are_pinned_not_searched(h200) -> None:
    """A poll's first try behind the CTA's own traffic is read from the probe (the traces
    record no loads): calibrate pins it where asked and leaves it out of the search."""
    assert not set(FIRST_TRY) & set(DEFAULT_SEARCH)
    pins = {"first_try_stores": 80.0, "first_try_store_kib": 10.6, "first_try_load_kib": 4.8}
    prof, search = pinned(h200, pins)
    assert {n: prof.latency_ns[n] for n in FIRST_TRY} == pins
    assert search == list(DEFAULT_SEARCH)
    with pytest.raises(InvalidInput, match=">= 0"):
        pinned(h200, {"first_try_load_kib": -1.0})


def test_the_put_figures_are_pinned_not_searched(h200) -> None:
    """A put behind the CTA's own stores is read from the probe's store pipe (the traces
    record no put times): calibrate pins it where asked and leaves it out of the search."""
    assert not set(PUT_BEHIND) & set(DEFAULT_SEARCH)
    pins = {"put_stores": 88.0, "put_store_kib": 9.9}
    prof, search = pinned(h200, pins)
    assert {n: prof.latency_ns[n] for n in PUT_BEHIND} == pins
    assert search == list(DEFAULT_SEARCH)
    with pytest.raises(InvalidInput, match=">= 0"):
        pinned(h200, {"put_store_kib": -1.0})


def test_unfinished_trace_is_refused(h200) -> None:
    dead = simulate(LaunchConfig(4, 2), h200).timeline  # deadlocks on the H200 (LDS)
    with pytest.raises(InvalidInput, match="did not finish"):
        prepare(dead, "dead")


def test_a_stage_with_two_code_forms(h200, tmp_path: Path) -> None:
    """``cost_above``: a stage whose cost changes form above a work size (the Triton K1's
    gemv: FMA loop for S <= 4, tensor-core dots above) round-trips through the file."""
    p = h200.with_params(above_gemv=(4.0, 9000.0, 0.0))
    assert p.cost("gemv", 4) == h200.cost("gemv", 4)
    assert p.cost("gemv", 8) == 9000.0
    d = fitted_overlay(type("R", (), {"profile": p, "launches": 0, "seconds": 0.0})(), h200, [])
    write_overlay(d, tmp_path / "p.json")
    assert load_profile(str(tmp_path / "p.json")).cost_above == {"gemv": (4.0, 9000.0, 0.0)}


def test_fit_with_a_switch_searches_both_forms(h200, slow_recur) -> None:
    _, tr = slow_recur
    res = fit_profile(h200, [tr], budget=2, cost_passes=0, progress=False, switches={"gemv": 4})
    assert res.profile.cost_above["gemv"][0] == 4.0
    with pytest.raises(InvalidInput, match="no such stage"):
        fit_profile(h200, [tr], budget=0, cost_passes=0, progress=False, switches={"bogus": 1})


def test_measured_build_and_gpu_name(h200) -> None:
    from kda_sim.compare.launch import NO_X_LIMIT, bundled_for, with_resources

    assert bundled_for("NVIDIA H200") == "h200" and bundled_for("Tesla T4") is None
    p = with_resources(h200, {"threads": 256, "regs_per_thread": 128, "shared_bytes": 32768})
    assert p.kernel.threads == 256 and p.x_lds_budget == NO_X_LIMIT
    assert p.streamed_weights and not h200.streamed_weights  # the Triton build streams
    assert with_resources(h200, None) is h200


def test_traces_of_two_builds_fit_the_tighter_one(h200) -> None:
    """Traces of the Triton K1's per-L builds (128 and 126 registers): the fit runs, and
    its overlay keeps, the build that places the fewest CTAs on an SM, so a simulation
    of the overlay without a trace still runs the measured build (not the seed's
    x-rows limit), and says the builds differed; one build is kept as it is; none, the
    stock profile."""
    from types import SimpleNamespace

    from kda_sim.compare.calibrate import measured_build
    from kda_sim.compare.launch import MEASURED_BUILD, NO_X_LIMIT

    def tr(regs: int, per_sm: int | None = 2) -> SimpleNamespace:
        r = {"threads": 256, "regs_per_thread": regs, "shared_bytes": 49152}
        return SimpleNamespace(resources=r | ({"ctas_per_sm": per_sm} if per_sm else {}))

    p = measured_build(h200, [tr(126), tr(128), tr(126)])
    assert p.kernel.regs_per_thread == 128 and p.x_lds_budget == NO_X_LIMIT
    assert "the traces ran 2 builds" in p.sources[MEASURED_BUILD]
    assert measured_build(h200, [tr(200, 1), tr(128)]).kernel.regs_per_thread == 200
    one = measured_build(h200, [tr(126), tr(126)])
    assert one.kernel.regs_per_thread == 126 and "builds" not in one.sources[MEASURED_BUILD]
    assert measured_build(h200, [SimpleNamespace(resources=None)]) is h200


def test_shared_among_processes_the_fit_is_the_same(h200, slow_recur, skew) -> None:
    """--jobs: the search's simulations in worker processes give the serial fit exactly."""
    truth, tr = slow_recur
    other = prepare(skew(simulate(LaunchConfig(1, 1), truth).timeline, 5)[0], "R1L1")
    serial = fit_profile(h200, [tr, other], budget=4, cost_passes=1, progress=False)
    shared = fit_profile(h200, [tr, other], budget=4, cost_passes=1, progress=False, jobs=2)
    assert shared.history == serial.history and shared.profile == serial.profile
    assert evaluate(h200, [tr, other], jobs=2) == evaluate(h200, [tr, other])
    with pytest.raises(InvalidInput, match="at least 1"):
        evaluate(h200, [tr], jobs=0)


def test_calibrate_refuses_a_partial_trace(tmp_path: Path, capsys) -> None:
    """A ktrace of 8 of 256 CTAs: a fit to part of a launch is refused, naming what it
    lacks, and nothing is written."""
    from kda_sim.cli import main

    ktrace = (
        Path(__file__).parents[1] / "importers" / "fixtures" / "kda_pre_R1_L1_ktrace.pftrace.gz"
    )
    out = tmp_path / "fit.json"
    assert main(["calibrate", str(ktrace), "--R", "1", "--L", "1", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "a partial trace (248 of 256 CTAs recorded nothing (2, 3," in err and str(ktrace) in err
    assert not out.exists()


def test_fit_costs_moves_only_the_named_costs(h200, slow_recur) -> None:
    """A build with its own code (the kda_tickets loop): its stage costs fitted from the
    static fit, the machine kept; only the named keys move."""
    truth, tr = slow_recur
    res = fit_costs(h200, [tr], ["k.recur", "k.conv"], passes=2)
    got = res.profile
    assert got.cost("k.recur", 2) == pytest.approx(truth.cost("k.recur", 2), rel=0.05)
    for key in ("gemv", "slice", "k.gates", "k.norm"):
        assert got.costs[key] == h200.costs[key]
    assert got.latency_ns == h200.latency_ns
    assert res.history[-1] < res.history[0] and res.launches == len(res.history)


def test_fit_costs_switches_fit_two_forms(h200, slow_recur) -> None:
    """A switch at 1 unit: the L = 2 trace moves the form above it, not the one below."""
    _, tr = slow_recur
    got = fit_costs(h200, [tr], ["k.recur"], passes=1, switches={"k.recur": 1.0}).profile
    assert got.costs["k.recur"] == h200.costs["k.recur"]
    assert got.cost_above["k.recur"][0] == 1.0
    assert got.cost("k.recur", 2) > h200.cost("k.recur", 2)
    with pytest.raises(InvalidInput, match=r"switch k\.conv: not one of the costs fitted"):
        fit_costs(h200, [tr], ["k.recur"], switches={"k.conv": 1.0})
    with pytest.raises(InvalidInput, match="no such stage cost"):
        fit_costs(h200, [tr], ["k.bogus"])


def test_stage_error_is_the_rms_of_the_kinds_relative_errors() -> None:
    from kda_sim.compare.calibrate import stage_error

    assert stage_error({"a": 100.0, "b": 200.0}, {"a": 110.0, "b": 170.0}) == pytest.approx(
        (0.5 * (0.1**2 + 0.15**2)) ** 0.5
    )
    # a kind the simulation lacks is 100 % off; one the real trace lacks is not scored
    assert stage_error({"a": 100.0}, {"b": 5.0}) == 1.0
    assert stage_error({"a": 100.0}, {"a": 100.0, "b": 1.0}) == 0.0


def test_the_stage_term_weighs_in_the_loss_and_the_fit(h200, slow_recur) -> None:
    """A trace whose k.recur runs 1.5x: its stage error is scored always, weighed in the
    loss only where asked; the fit with the term leaves a smaller stage error."""
    _truth, tr = slow_recur
    s0 = evaluate(h200, [tr])["R1L2"]
    assert s0.stage_err > 0.05 and s0.stage_weight == 0.0
    assert s0.loss == pytest.approx(s0.makespan_err**2 + s0.start_err_median**2)
    w = evaluate(h200, [replace(tr, stage_weight=2.0)])["R1L2"]
    assert w.loss == pytest.approx(s0.loss + 2.0 * s0.stage_err**2)
    fit = fit_profile(h200, [tr], budget=0, cost_passes=2, progress=False, stage_weight=2.0)
    assert fit.train["R1L2"].stage_err < s0.stage_err
    assert fit.train["R1L2"].stage_weight == 2.0
    with pytest.raises(InvalidInput, match="stage weight"):
        fit_profile(h200, [tr], budget=0, progress=False, stage_weight=float("nan"))


def _spread(prof, sd: float = 0.05):
    """``prof`` with a spread between CTAs on every gemv CTA's gemv stages."""
    return replace(prof, cta_spread={"gemv0": sd, "gemv1": sd})


def test_with_a_spread_a_trace_scores_the_mean_over_fixed_seeds(h200, slow_recur) -> None:
    """--seeds: each trace's score is the mean of its seeded runs' figures, the same seeds
    at every evaluation (the loss a function of the profile alone), and not the nominal
    run's, which draws no spread."""
    _truth, tr = slow_recur
    prof = _spread(h200)
    (seeded,) = with_seeds([tr], prof, 3)
    assert seeded.seeds == (0, 1, 2)
    got = evaluate(prof, [seeded])["R1L2"]
    assert evaluate(prof, [seeded])["R1L2"] == got
    one = [evaluate(prof, [replace(tr, seeds=(s,))])["R1L2"] for s in range(3)]
    assert len({s.makespan_err for s in one}) == 3  # each seed draws its own spread
    for name in ("makespan_err", "start_err_median", "start_err_p90", "stage_err"):
        want = sum(getattr(s, name) for s in one) / 3
        assert getattr(got, name) == pytest.approx(want)
    assert got.makespan_err != evaluate(prof, [tr])["R1L2"].makespan_err
    assert with_seeds([tr], h200, 0) == [tr]
    with pytest.raises(InvalidInput, match="sets no cta_spread"):
        with_seeds([tr], h200, 2)
    with pytest.raises(InvalidInput, match="--seeds 65: 0 to 64"):
        with_seeds([tr], prof, MAX_SEEDS + 1)


def test_a_fit_with_a_spread_runs_its_seeds_and_writes_the_spread(
    tmp_path: Path, h200, slow_recur
) -> None:
    """A fit with --seeds 2 simulates each launch twice an evaluation, is repeatable, and
    its overlay keeps the spread its costs were fitted beside."""
    _truth, tr = slow_recur
    prof = _spread(h200)
    kw = {"budget": 2, "cost_passes": 1, "progress": False}
    nominal = fit_profile(prof, [tr], **kw)
    res = fit_profile(prof, [tr], seeds=2, **kw)
    assert res.launches == 2 * nominal.launches
    assert fit_profile(prof, [tr], seeds=2, **kw).history == res.history
    assert res.history != nominal.history
    d = fitted_overlay(res, prof, [tr], out=tmp_path / "fit.json")
    write_overlay(d, tmp_path / "fit.json")
    assert load_profile(str(tmp_path / "fit.json")).cta_spread == prof.cta_spread


def test_calibrate_refuses_seeds_it_cannot_use(tmp_path: Path, capsys) -> None:
    """--seeds above the bound is refused before any trace is read; --seeds with a profile
    without a spread names what is missing; both exit 2 and write nothing."""
    from kda_sim.cli import main

    trace = Path(__file__).parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
    out = tmp_path / "fit.json"
    base = ["calibrate", str(trace), "--out", str(out), "--budget", "0", "--no-progress"]
    assert main([*base, "--seeds", str(MAX_SEEDS + 1)]) == 2
    assert "--seeds 65: 0 to 64" in capsys.readouterr().err
    assert main([*base, "--gpu", "h200-k1", "--seeds", "2"]) == 2
    assert "sets no cta_spread" in capsys.readouterr().err
    assert not out.exists()


def test_calibrate_says_a_spread_without_seeds_is_fitted_nominal(tmp_path: Path, capsys) -> None:
    """A start with a spread and no --seeds: the fit runs nominal launches, and says so;
    with --seeds it does not."""
    from kda_sim.cli import main

    k1 = load_profile("h200-k1")
    start = tmp_path / "start.json"
    costs = {k: list(v) for k, v in k1.costs.items()}
    start.write_text(
        json.dumps({"kernel": "k1", "gpu": "h200", "costs": costs, "cta_spread": {"gemv0": 0.03}})
    )
    trace = Path(__file__).parents[2] / "traces" / "k1_h200_R1_L1.json.gz"
    argv = ["calibrate", str(trace), "--profile", str(start), "--budget", "0"]
    argv += ["--cost-passes", "0", "--no-progress", "--force", "--out"]
    main([*argv, str(tmp_path / "a.json")])
    assert "without --seeds the fit runs nominal launches" in capsys.readouterr().err
    main([*argv, str(tmp_path / "b.json"), "--seeds", "1"])
    assert "without --seeds" not in capsys.readouterr().err
    assert load_profile(str(tmp_path / "b.json")).cta_spread == {"gemv0": 0.03}


def test_a_fit_with_a_front_writes_the_front(tmp_path: Path, h200, slow_recur) -> None:
    """A fit from a start with a k.recur front fits its costs beside it, and its overlay
    keeps it (as it keeps the spread): a profile read from it runs the same front."""
    _truth, tr = slow_recur
    prof = replace(h200, compute_front={"k.recur": 0.5})
    res = fit_profile(prof, [tr], budget=2, cost_passes=1, progress=False)
    d = fitted_overlay(res, prof, [tr], out=tmp_path / "fit.json")
    write_overlay(d, tmp_path / "fit.json")
    assert d["compute_front"] == {"k.recur": 0.5}
    assert load_profile(str(tmp_path / "fit.json")).compute_front == {"k.recur": 0.5}


@pytest.mark.parametrize(
    ("start", "name", "value"),
    [
        (  # where its front opens, with its front
            {"compute_front": {"k.recur": 0.5}, "compute_front_from": {"k.recur": 1e3}},
            "compute_front_from",
            {"k.recur": 1e3},
        ),
        (  # where its skew applies, with its skew
            {
                "unit_shared": ("gemv",),
                "unit_share": 0.1,
                "unit_share_skew": 0.2,
                "unit_share_skew_from": 4.0,
            },
            "unit_share_skew_from",
            4.0,
        ),
        (  # the earlier sharer's first task's factor, with the share
            {
                "unit_shared": ("gemv",),
                "unit_share": 0.1,
                "unit_share_skew": 0.2,
                "unit_share_first_task": {"k.stage": 1.2},
            },
            "unit_share_first_task",
            {"k.stage": 1.2},
        ),
    ],
)
def test_a_fit_keeps_where_its_start_applies_a_figure(
    tmp_path: Path, h200, slow_recur, start: dict, name: str, value: object
) -> None:
    """A start's ``compute_front_from``, ``unit_share_skew_from`` or
    ``unit_share_first_task`` goes into the fit's overlay with the figure it goes with, and
    a profile read from it has it."""
    _truth, tr = slow_recur
    prof = replace(h200, **start)
    res = fit_profile(prof, [tr], budget=2, cost_passes=1, progress=False)
    d = fitted_overlay(res, prof, [tr], out=tmp_path / "fit.json")
    write_overlay(d, tmp_path / "fit.json")
    assert d[name] == value
    assert getattr(load_profile(str(tmp_path / "fit.json")), name) == value


def _score_by_definition(tr, sim):
    """The score as the loss defines it, each figure by its own pass over the run: the
    reference ``score``'s single pass must agree with to the last bit."""
    import math

    import numpy as np

    from kda_sim.compare.calibrate import Score, stage_error

    w = tr.stage_weight
    if sim.makespan is None:
        return Score(10.0, 10.0, 10.0, 0, None, 10.0, w)
    o = sim.origin
    spans = {(c.cta, s.name, s.task): s.start - o for c in sim.ctas for s in sim.ctas[c.cta].stages}
    idx = [i for i, k in enumerate(tr.keys) if k in spans]
    if not idx:
        return Score(10.0, 10.0, 10.0, 0, sim.makespan, 10.0, w)
    f = np.abs(tr.start[idx] - np.array([spans[tr.keys[i]] for i in idx])) / tr.makespan
    durs: dict[str, list[float]] = {}
    for c in sim.ctas:
        for s in c.stages:
            durs.setdefault(s.name, []).append(s.end - s.start)
    sim_kinds = {k: float(np.median(v)) for k, v in durs.items()}
    assert all(math.isfinite(v) for v in sim_kinds.values())
    return Score(
        (sim.makespan - tr.makespan) / tr.makespan,
        float(np.median(f)),
        float(np.percentile(f, 90)),
        len(idx),
        sim.makespan,
        stage_error(tr.kind_dur, sim_kinds),
        w,
    )


def test_a_score_is_its_figures_by_definition(h200, slow_recur) -> None:
    """``score`` reads a run in one pass: the same Score, bit for bit, as each figure
    computed by itself; on a run of another shape (few stages match), on a run whose
    tracks are out of CTA order, with a stage weight, and on a deadlocked run."""
    from copy import deepcopy

    from kda_sim.compare.calibrate import score

    _truth, tr = slow_recur
    tr = replace(tr, stage_weight=0.5)
    runs = [simulate(LaunchConfig(r, 2), h200, seed=s).timeline for r, s in ((1, 3), (2, None))]
    moved = deepcopy(runs[0])
    moved.ctas = moved.ctas[::-1]  # each track keyed by its CTA, not its place
    stuck = deepcopy(runs[0])
    stuck.ctas[5].end = None
    for sim in [*runs, moved, stuck]:
        want = _score_by_definition(tr, sim)
        assert score(tr, sim) == want
    assert score(tr, runs[0]).matched == len(tr.keys)
    assert score(tr, stuck).sim_makespan is None
