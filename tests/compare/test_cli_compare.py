"""``kda-sim compare`` and ``kda-sim calibrate`` as a user runs them: exit codes 0 / 1 / 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.timeline.chrome import write_chrome


@pytest.fixture(scope="module")
def files(tmp_path_factory, h200, skew) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("cli")
    sim = simulate(LaunchConfig(1, 1), h200, seed=2).timeline
    real, _ = skew(sim, 4)
    out = {"real": d / "real_R1L1.json", "sim": d / "sim_R1L1.json", "bad": d / "bad.json"}
    write_chrome(real, out["real"])
    write_chrome(simulate(LaunchConfig(1, 1), h200).timeline, out["sim"])
    c = real.ctas[80]
    sp = {s.name: s for s in c.stages}
    sp["k.norm"].start, sp["k.recur"].start = sp["k.recur"].start, sp["k.norm"].start
    write_chrome(real, out["bad"])
    real2, _ = skew(simulate(LaunchConfig(1, 2), h200, seed=3).timeline, 5)
    out["real2"] = d / "real_R1L2.json"
    write_chrome(real2, out["real2"])
    return out


def test_compare_simulates_the_same_configuration(files, capsys) -> None:
    assert main(["compare", str(files["real"]), "--gpu", "h200-stock"]) == 0
    out = capsys.readouterr().out
    assert "conforms" in out and "makespan" in out and "critical path" in out
    assert "configuration: R=" in out  # which configuration the model ran, variants named


def test_compare_json_with_a_given_simulation(files, capsys) -> None:
    assert main(["compare", str(files["real"]), "--sim", str(files["sim"]), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["conformance"]["conforms"] and d["comparison"]["matched"] > 500
    assert abs(d["comparison"]["makespan_err"]) < 0.1


def test_compare_altered_stage_order_exits_1(files, capsys) -> None:
    assert main(["compare", str(files["bad"]), "--gpu", "h200-stock", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert d["conformance"]["counts"]["stage_order"] >= 1


def test_compare_invalid_inputs_exit_2(tmp_path: Path, capsys) -> None:
    np.save(tmp_path / "s.npy", np.zeros((256, 15), np.int64))
    assert main(["compare", str(tmp_path / "s.npy")]) == 2
    assert "--R and --L" in capsys.readouterr().err
    (tmp_path / "x.json").write_text("{")
    assert main(["compare", str(tmp_path / "x.json")]) == 2
    assert "not JSON" in capsys.readouterr().err


def test_calibrate_writes_and_refuses_to_overwrite(files, tmp_path: Path, capsys) -> None:
    out = tmp_path / "fit.json"
    args = ["calibrate", str(files["real"]), "--out", str(out), "--holdout", str(files["real2"])]
    rc = main([*args, "--budget", "0", "--cost-passes", "1", "--json"])
    assert rc in (0, 1)
    d = json.loads(capsys.readouterr().out)
    assert {r["set"] for r in d["rows"]} == {"fit", "held out"} and out.exists()
    assert d["holdout_ok"] == (rc == 0)
    # every row's stage-duration error, before the fit and after
    assert all(r["stage_err"] >= 0 and r["stage_err_before"] > 0 for r in d["rows"])
    # the traces' GPU (simulated on the seed's build): the fit starts there, and says so
    assert d["base"] == "h200-stock"
    assert d["base_costs"].startswith("k1 stock costs for h200: the seed's build")
    assert main([*args, "--budget", "0"]) == 2
    assert "--force" in capsys.readouterr().err
    written = json.loads(out.read_text())  # an overlay on the traces' GPU, not a profile
    assert written["gpu"] == "h200" and "units" not in written and "provenance" in written
    capsys.readouterr()
    assert main(["simulate", "--profile", str(out), "--R", "1", "--L", "1"]) == 0
    assert "costs: k1 costs fitted on h200 by kda-sim calibrate (" in capsys.readouterr().err


def test_calibrate_bad_budget_exits_2(files, tmp_path: Path, capsys) -> None:
    with pytest.raises(SystemExit) as e:  # refused by its argparse type
        main(["calibrate", str(files["real"]), "--out", str(tmp_path / "p.json"), "--budget", "-1"])
    assert e.value.code == 2 and "--budget" in capsys.readouterr().err


def test_calibrate_pins_a_measured_parameter(files, tmp_path: Path, capsys) -> None:
    out = tmp_path / "pinned.json"
    args = [
        "calibrate",
        str(files["real"]),
        "--out",
        str(out),
        "--budget",
        "4",
        "--cost-passes",
        "0",
        "--json",
        "--pin",
        "hbm_bytes_per_ns=3720",
    ]
    assert main(args) in (0, 1)
    assert json.loads(capsys.readouterr().out)["pins"] == {"hbm_bytes_per_ns": 3720.0}
    fitted = json.loads(out.read_text())
    # the search left it where it was pinned: an override of the GPU's 4800
    assert fitted["overrides"]["hbm_bytes_per_ns"] == 3720.0
    assert "hbm_bytes_per_ns = 3720" in fitted["provenance"]["detail"]


@pytest.mark.parametrize(
    ("pin", "said"),
    [
        ("cost_gemv=1", "cannot pin"),
        ("poll", "finite"),
        ("poll=x", "NAME=VALUE"),
        ("poll=-3", ">= 0"),
        ("hbm_bytes_per_ns=5000", "above the datasheet's 4800"),
        ("poll=0", "latency_ns.poll"),  # a divisor of the engine
        ("hbm_bytes_per_ns=0", "hbm_bytes_per_ns"),
        ("poll=nan", "finite"),
        ("retry=inf", "finite"),
    ],
)
def test_calibrate_bad_pin_exits_2(files, tmp_path: Path, capsys, pin: str, said: str) -> None:
    args = ["calibrate", str(files["real"]), "--out", str(tmp_path / "p.json"), "--pin", pin]
    assert main(args) == 2
    assert said in capsys.readouterr().err


def test_calibrate_searches_a_parameter_on_request(files, tmp_path: Path, capsys) -> None:
    args = ["calibrate", str(files["real"]), "--budget", "0", "--cost-passes", "0", "--json"]
    searched = {}
    for extra in ([], ["--search", "poll_lane", "--search", "poll_lane"]):
        out = tmp_path / f"fit{len(extra)}.json"
        assert main([*args, "--out", str(out), *extra]) in (0, 1)
        searched[len(extra)] = json.loads(capsys.readouterr().out)["search"]
    # left out by default (read from the traces' polls and pinned), searched on request, once
    assert "poll_lane" not in searched[0] and "poll" in searched[0]
    assert searched[4] == [*searched[0], "poll_lane"]


@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--search", "bogus"], "unknown search parameter(s) ['bogus']"),
        (["--search", "poll_lane", "--pin", "poll_lane=26"], "pinned and searched"),
    ],
)
def test_calibrate_bad_search_exits_2(files, tmp_path: Path, capsys, flags, said) -> None:
    out = tmp_path / "p.json"
    assert main(["calibrate", str(files["real"]), "--out", str(out), *flags]) == 2
    assert said in capsys.readouterr().err and not out.exists()


@pytest.mark.parametrize(
    ("edit", "said"),
    [
        (lambda d: d["costs"].__setitem__("gemv", [float("nan"), 1.0]), r"costs\.gemv\[0\]"),
        (lambda d: d["costs"].__setitem__("bogus", [1.0, 1.0]), r"costs\.bogus: not a cost key"),
        (lambda d: d.__setitem__("overrides", {"units": 4}), r"overrides: Additional"),
    ],
)
def test_calibrate_never_writes_an_overlay_the_loader_refuses(tmp_path: Path, edit, said) -> None:
    from kda_sim.compare.calibrate import write_overlay
    from kda_sim.errors import InvalidInput
    from kda_sim.machine.profile import load_profile

    costs = {k: list(v) for k, v in load_profile("h200-stock").costs.items()}
    d = {"kernel": "k1", "gpu": "h200", "costs": costs}
    edit(d)
    with pytest.raises(InvalidInput, match=said):
        write_overlay(d, tmp_path / "fit.json")
    assert not (tmp_path / "fit.json").exists()


def test_compare_shows_kda_stages_by_task_slot_where_ctas_run_two(capsys) -> None:
    traces = Path(__file__).resolve().parents[2] / "traces"
    assert main(["compare", str(traces / "k1_h200_R4_L1.json.gz"), "--json"]) == 0
    slots = json.loads(capsys.readouterr().out)["by_task_slot"]
    second = {r["stage"]: r for r in slots if r["slot"] == 1}
    assert set(second) == {"k.stage", "k.conv", "k.gates", "k.recur", "k.norm"}
    assert all(r["dur_real_median_ns"] > 0 and r["dur_sim_median_ns"] > 0 for r in slots)
    assert main(["compare", str(traces / "k1_h200_R4_L1.json.gz")]) == 0
    assert "by task slot" in capsys.readouterr().out
    assert main(["compare", str(traces / "k1_h200_R1_L1.json.gz"), "--json"]) == 0
    assert "by_task_slot" not in json.loads(capsys.readouterr().out)  # one task a CTA


def test_compare_shows_role_stages_by_what_shares_the_unit(capsys) -> None:
    traces = Path(__file__).resolve().parents[2] / "traces"
    assert main(["compare", str(traces / "k1_h200_R2_L1.json.gz"), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["by_unit_partner"]
    gemv0 = {r["partners"]: r for r in rows if r["stage"] == "gemv0"}
    # measured and simulated side by side, for the gemv CTAs that share an SM with another
    assert gemv0["gemv"]["real_count"] > 100 and gemv0["gemv"]["sim_count"] > 100
    assert gemv0["gemv"]["dur_real_max_ns"] >= gemv0["gemv"]["dur_real_median_ns"] > 0
    assert main(["compare", str(traces / "k1_h200_R2_L1.json.gz")]) == 0
    assert "by what shares the CTA's unit" in capsys.readouterr().out


def test_calibrate_unit_share_of_no_such_stage_exits_2(files, tmp_path: Path, capsys) -> None:
    out = tmp_path / "p.json"
    args = ["calibrate", str(files["real"]), "--out", str(out), "--unit-share", "nope"]
    assert main(args) == 2
    assert "no such stage cost" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("extra", [["--unit-share", "gemv"], []])
def test_calibrate_unit_share_from_bad_or_alone_exits_2(
    files, tmp_path: Path, capsys, extra: list[str]
) -> None:
    out = tmp_path / "p.json"
    frm = "-1" if extra else "2"  # negative; or given without --unit-share
    args = ["calibrate", str(files["real"]), "--out", str(out), *extra, "--unit-share-from", frm]
    assert main(args) == 2
    assert "--unit-share-from" in capsys.readouterr().err
    assert not out.exists()


@pytest.mark.parametrize("w", ["-1", "nan", "x"])
def test_calibrate_bad_stage_weight_exits_2(files, tmp_path: Path, capsys, w: str) -> None:
    out = tmp_path / "p.json"
    with pytest.raises(SystemExit) as e:
        main(["calibrate", str(files["real"]), "--out", str(out), "--stage-weight", w])
    assert e.value.code == 2
    assert "--stage-weight" in capsys.readouterr().err
    assert not out.exists()


def test_calibrate_unit_share_by_order_alone_exits_2(files, tmp_path: Path, capsys) -> None:
    out = tmp_path / "p.json"
    args = ["calibrate", str(files["real"]), "--out", str(out), "--unit-share-by-order"]
    assert main(args) == 2
    assert "--unit-share-by-order: with --unit-share" in capsys.readouterr().err
    assert not out.exists()


def test_compare_prints_human_units_and_the_critical_path_as_a_table(capsys) -> None:
    traces = Path(__file__).resolve().parents[2] / "traces"
    assert main(["compare", str(traces / "k1_h200_R1_L1.json.gz")]) == 0
    out = capsys.readouterr().out
    # a number standing alone, not a path's characters (a temporary checkout "ci.0t5n")
    assert not re.search(r"(?<![\w/.])\d+n\b", out), "a duration in raw ns ('2304n')"
    assert re.search(r"\d+\.\d\d us\b", out) and re.search(r"\b\d+ ns\b", out)
    assert "{'" not in out and "'kind'" not in out  # no Python dicts
    table = out[out.index("critical path:") :].splitlines()
    assert re.match(r"\s+length\s+\d+\.\d\d us\s+\d+\.\d\d us$", table[2])
    assert any(re.search(r"^\s+1\s+CTA \d+ runs, ", line) for line in table)


def test_compare_splits_each_stage_and_reads_the_path_by_kind(capsys) -> None:
    traces = Path(__file__).resolve().parents[2] / "traces"
    assert main(["compare", str(traces / "k1_h200_R2_L1.json.gz"), "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["comparison"]
    conv = c["stage_split"]["k.conv"]
    assert conv["real_n"] == conv["sim_n"] == 192
    assert conv["real_load_ns"] is None and conv["sim_load_ns"] is not None
    assert 0 < conv["real_wait_ns"] < conv["real_dur_ns"]
    err = (conv["sim_dur_ns"] - conv["real_dur_ns"]) / conv["real_dur_ns"]
    assert conv["dur_err"] == pytest.approx(err)
    kinds = c["critical_path"]["kinds"]
    assert kinds["real"][0] == "slice" and kinds["sim"][-1] == "k.norm"
    assert not any(k.isdigit() for k in kinds["real"] + kinds["sim"])  # no CTA numbers
    assert isinstance(kinds["agree"], bool) and kinds["common_tail"] >= 1
    assert main(["compare", str(traces / "k1_h200_R2_L1.json.gz")]) == 0
    out = capsys.readouterr().out
    assert "what each stage's time is made of" in out
    assert re.search(r"^k\.conv\s+\d+\.\d\d us\s+\d+ ns\s+[+-]\d+\.\d%", out, re.M)
    assert "by kind, real: slice" in out and "stage kinds " in out


def test_a_ticket_launch_is_compared_on_its_takes(tmp_path, capsys) -> None:
    """K1 with its kda tasks from a ticket counter: compare places each item on the CTA
    its run took it (the takes the timeline records); without them it says so (exit 2),
    instead of an IndexError."""
    from kda_sim.cli import main

    out = tmp_path / "kt.json"
    argv = ["simulate", "--gpu", "h200-k1", "--R", "1", "--L", "1", "--kda-tickets"]
    assert main([*argv, "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["compare", str(out), "--gpu", "h200-k1"]) == 0
    text = capsys.readouterr().out
    assert "kda_tickets placed" in text
    # the same launch: apart only by what the clock fit moves (a few hundred ns)
    real, sim = map(float, re.search(r"makespan: real ([\d.]+) us, sim ([\d.]+) us", text).groups())
    assert sim == pytest.approx(real, rel=0.01)
    assert re.search(r"^k\.conv\s+96\s", text, re.M)  # every task matched on its CTA
    d = json.loads(out.read_text())
    del d["otherData"]["meta"]["extra"]["ticket_takes"]
    out.write_text(json.dumps(d))
    assert main(["compare", str(out), "--gpu", "h200-k1"]) == 2
    assert "records which CTA took which ticket" in capsys.readouterr().err
