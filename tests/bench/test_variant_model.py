"""bench/variant_model.py: a variant's measured effect beside the model's, and variants
the model cannot see said as such."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench import variant_model as vm


def _bench(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"env": {}, "variants": rows, "rows": []}))
    return path


ROWS = [
    {"R": 1, "L": 1, "variant": {}, "us": 42.3},
    {"R": 1, "L": 1, "variant": {"nw_first": False}, "us": 42.6},
    {"R": 1, "L": 1, "variant": {"sleep_ns": 0}, "us": 42.2},
    {"R": 2, "L": 2, "variant": {"nw_first": False}, "us": 54.0},  # no default row: left out
]


def test_a_config_variant_is_modelled_and_a_code_variant_is_not(tmp_path: Path) -> None:
    report = vm.compare(vm.load_rows(_bench(tmp_path, ROWS)), "mi355x", "h200")
    nw, sleep = report["rows"]
    assert len(report["rows"]) == 2
    # the default build at L = 1 asks for in_nw with the slice: turning it off is the seed's order
    # (every Triton build asks for on_w in k.stage: onw_first on both sides)
    assert nw["default_config"] == ("nw_first", "onw_first")
    assert nw["variant_config"] == ("onw_first",)
    assert nw["measured_delta_us"] == pytest.approx(0.3)
    assert nw["model_delta_us"] > 0 and nw["model_variant_us"] > nw["model_default_us"]
    assert "h200_delta_us" in nw
    assert "no counterpart" in sleep["model"] and "model_delta_us" not in sleep
    assert "+0.30" in vm.table(report)


def test_the_command_writes_report_and_plot_and_keeps_what_is_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bench, out, png = _bench(tmp_path, ROWS[:2]), tmp_path / "r.json", tmp_path / "r.png"
    assert vm.main([str(bench), "--profile", "mi355x", "--out", str(out), "--png", str(png)]) == 0
    assert json.loads(out.read_text())["rows"][0]["R"] == 1
    assert png.read_bytes()[:4] == b"\x89PNG"
    out.write_text("mine")
    assert vm.main([str(bench), "--out", str(out)]) == 2
    assert out.read_text() == "mine" and "--force" in capsys.readouterr().err


def test_a_file_without_variant_rows_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": []}))
    assert vm.main([str(bad)]) == 2
    err = capsys.readouterr().err
    assert "bad.json" in err and "not a kernel_bench file" in err


def test_an_unknown_build_field_is_named(tmp_path: Path) -> None:
    rows = [ROWS[0], {"R": 1, "L": 1, "variant": {"no_such": 1}, "us": 1.0}]
    with pytest.raises(vm.InvalidInput, match="no_such"):
        vm.compare(vm.load_rows(_bench(tmp_path, rows)), "mi355x", None)
