"""``--kernel`` on every command: another kernel's launch runs where the command can take
it, its own flags after it, and a kernel that lacks what the command needs is refused by
name (exit 2, no traceback)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kda_sim.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "isa" / "fixtures"

# pingpong with the two sweep axes it lacks, as a user's kernel file: its own
# configuration type (a kernel is found by its configuration's type)
SWEPT = """
from dataclasses import dataclass, fields

from kda_sim.kernels.examples import pingpong
from kda_sim.kernels.spec import Kernel


@dataclass(frozen=True)
class SweptConfig(pingpong.PingPongConfig):
    pass


@dataclass(frozen=True)
class Swept(Kernel):
    sweep_axes: tuple = ("rounds", "nbytes")


base = {f.name: getattr(pingpong.KERNEL, f.name) for f in fields(Kernel)}
KERNEL = Swept(**{**base, "name": "swept", "config_type": SweptConfig})
"""


def refused(argv: list[str], capsys: pytest.CaptureFixture[str], *said: str) -> str:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"kda-sim {argv[0]}: " in err and "Traceback" not in err
    for s in said:
        assert s in err, err
    return err


@pytest.fixture
def swept(tmp_path: Path) -> str:
    path = tmp_path / "swept.py"
    path.write_text(SWEPT)
    return str(path)


@pytest.fixture
def pingpong_trace(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    out = tmp_path / "pp.json"
    assert main(["simulate", "--kernel", "pingpong", "--out", str(out)]) == 0
    capsys.readouterr()
    return out


# -- sweep -------------------------------------------------------------------------------------
def test_sweep_refuses_a_kernel_without_axes_by_name(capsys) -> None:
    refused(["sweep", "--kernel", "pingpong"], capsys, "pingpong defines no sweep_axes")
    refused(["sweep", "--kernel", "ticketqueue"], capsys, "ticketqueue defines no sweep_axes")


def test_sweep_maps_a_kernel_with_axes_over_them(swept: str, capsys) -> None:
    argv = ["sweep", "--kernel", swept, "--json", "--rounds", "3", "--nbytes", "4096"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kernel"] == "swept" and report["axes"] == ["rounds", "nbytes"]
    cells = report["cells"]
    assert len(cells) == 8 * 4 and {c["verdict"] for c in cells} == {"finishes"}
    by = {(c["R"], c["L"]): c["time_ns"] for c in cells}
    assert by[(8, 1)] > by[(1, 1)]  # more rounds take longer: the axis reached the launch
    assert main(["sweep", "--kernel", swept]) == 0
    assert "rounds \\ nbytes" in capsys.readouterr().out


def test_a_kernel_files_sweep_in_worker_processes_is_the_serial_one(swept: str, capsys) -> None:
    """The workers load the file again: its configurations unpickle and its name resolves
    there."""
    argv = ["sweep", "--kernel", swept, "--json", "--rounds", "2", "--nbytes", "1024"]
    outs = []
    for jobs in ("1", "2"):
        assert main([*argv, "--jobs", jobs]) == 0
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1] and len(json.loads(outs[0])["cells"]) == 8 * 4


def test_sweep_refuses_k1_flags_for_another_kernel(swept: str, capsys) -> None:
    refused(["sweep", "--kernel", swept, "--nb", "2"], capsys, "--nb: K1's, not swept's")


# -- floor -------------------------------------------------------------------------------------
def test_floor_prices_another_kernels_launch(tmp_path: Path, capsys) -> None:
    out = tmp_path / "floor.json"
    assert main(["floor", "--kernel", "pingpong", "--rounds", "3", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["config"].startswith("pingpong rounds=3")
    assert report["rows"][0]["step"] == "the profile (h200)"  # the GPU, pingpong's costs
    ms = [r["makespan_us"] for r in report["rows"]]
    assert ms[0] > ms[-1] > 0  # taking costs away shortens it


def test_floor_of_a_launch_that_reads_no_hbm_has_no_bound(tmp_path: Path, capsys) -> None:
    out = tmp_path / "floor.json"
    assert main(["floor", "--kernel", "ticketqueue", "--out", str(out)]) == 0
    report = json.loads(out.read_text())
    assert report["rows"][0]["x_bound"] is None and "rows[0].x_bound" in report["non_finite"]
    assert "(no HBM bytes)" in capsys.readouterr().err


def test_floor_refuses_k1_flags_and_bad_kernel_flags(capsys) -> None:
    refused(["floor", "--kernel", "pingpong", "--R", "2"], capsys, "--R: K1's, not pingpong's")
    refused(["floor", "--kernel", "pingpong", "--rounds", "x"], capsys, "--rounds")


# -- compare, calibrate ------------------------------------------------------------------------
def test_compare_takes_the_kernel_the_trace_names(pingpong_trace: Path, capsys) -> None:
    assert main(["compare", str(pingpong_trace), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kernel"] == "pingpong" and report["config"]["rounds"] == 1
    assert main(["compare", str(pingpong_trace), "--kernel", "pingpong"]) == 0
    assert "configuration: pingpong rounds=1" in capsys.readouterr().out


def test_compare_refuses_a_kernel_the_trace_did_not_run(pingpong_trace: Path, capsys) -> None:
    refused(
        ["compare", str(pingpong_trace), "--kernel", "ticketqueue"],
        capsys,
        "a pingpong launch, not one of --kernel ticketqueue",
    )
    refused(["compare", str(pingpong_trace), "--kernel", "k1"], capsys, "not one of --kernel k1")
    refused(["compare", str(pingpong_trace), "--rounds", "2"], capsys, "unrecognized arguments")


def test_a_stamp_file_needs_the_kernels_decoders(tmp_path: Path, capsys) -> None:
    stamps = tmp_path / "s.npy"
    stamps.write_bytes(b"")
    argv = ["compare", str(stamps), "--kernel", "pingpong", "--R", "1", "--L", "1"]
    refused(argv, capsys, "pingpong defines no trace_decoders")


def test_calibrate_fits_another_kernels_costs(pingpong_trace: Path, tmp_path: Path, capsys) -> None:
    out = tmp_path / "fit.json"
    argv = ["calibrate", str(pingpong_trace), "--out", str(out), "--budget", "2", "--json"]
    assert main([*argv, "--cost-passes", "1", "--no-progress"]) == 0
    overlay = json.loads(out.read_text())
    assert overlay["kernel"] == "pingpong" and set(overlay["costs"]) == {
        "pp.produce",
        "pp.consume",
    }
    row = json.loads(capsys.readouterr().out)["rows"][0]
    assert row["shape"] == "rounds=1 nbytes=65536" and row["rounds"] == 1
    refused(
        ["calibrate", str(pingpong_trace), "--out", str(tmp_path / "b.json"), "--kernel", "k1"],
        capsys,
        "a pingpong launch, not one of --kernel k1",
    )


# -- spread, variants --------------------------------------------------------------------------
def test_spread_and_variants_need_the_kernels_axes(tmp_path: Path, capsys) -> None:
    refused(["spread", str(tmp_path), "--kernel", "pingpong"], capsys, "no sweep_axes")
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"variants": []}))
    refused(["variants", str(bench), "--kernel", "ticketqueue"], capsys, "no sweep_axes")


def test_spread_reads_a_kernels_launches_by_its_axes(swept: str, tmp_path: Path, capsys) -> None:
    folder = tmp_path / "launches"
    folder.mkdir()
    for i in range(2):
        out = folder / f"swept_rounds2_nbytes4096_{i}.json"
        argv = ["simulate", "--kernel", swept, "--rounds", "2", "--nbytes", "4096"]
        assert main([*argv, "--seed", str(i + 1), "--out", str(out)]) == 0
    capsys.readouterr()
    assert main(["spread", str(folder), "--kernel", swept]) == 0
    report = json.loads(capsys.readouterr().out)
    assert list(report) == ["2x4096"]
    assert report["2x4096"]["between_launches"]["launches"] == 2
    # a launch of another kernel under the kernel's name is refused
    assert main(["simulate", "--kernel", "pingpong", "--out", str(folder / "p.json")]) == 0
    for i in range(2):
        shutil.copy(folder / "p.json", folder / f"swept_rounds1_nbytes1_{i}.json")
    capsys.readouterr()
    refused(["spread", str(folder), "--kernel", swept], capsys, "a pingpong launch, not one of")


def test_variants_take_a_kernels_configurations(swept: str, tmp_path: Path, capsys) -> None:
    cfg = {"rounds": 2, "nbytes": 4096}
    rows = [
        {"R": 2, "L": 4096, "variant": {}, "us": 5.0, "config": cfg},
        {"R": 2, "L": 4096, "variant": {"tile": 2}, "us": 5.5, "config": cfg},
    ]
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps({"variants": rows}))
    assert main(["variants", str(bench), "--kernel", swept, "--profile", "h200"]) == 0
    (row,) = json.loads(capsys.readouterr().out)["rows"]
    assert row["measured_delta_us"] == 0.5 and "no counterpart" in row["model"]
    rows[1]["config"] = {"rounds": 3, "nbytes": 4096}
    bench.write_text(json.dumps({"variants": rows}))
    refused(["variants", str(bench), "--kernel", swept], capsys, "not the row's shape")


# -- isa, kernel -------------------------------------------------------------------------------
def test_isa_presets_come_from_the_kernel(capsys) -> None:
    path = str(FIXTURES / "gfx942" / "poll_clear.s")
    refused(["isa", path, "--kernel", "pingpong", "--preset", "k1"], capsys, "no isa_presets")
    refused(["isa", path, "--preset", "nope"], capsys, "k1 has no ISA preset 'nope'")
    assert main(["isa", path, "--kernel", "pingpong"]) == main(["isa", path]) == 0


def test_kernel_run_refuses_a_kernel_without_backends(capsys) -> None:
    refused(["kernel", "run", "--kernel", "pingpong"], capsys, "pingpong has no real backends")
