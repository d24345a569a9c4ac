"""A variant's measured effect beside the model's (kda_sim.compare.variants): a variant
that runs another launch configuration is modelled, one that changes only code the model
does not see is said as such, and a row without its configuration is named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.compare import variants as vm
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig


def cfg(R: int, L: int, **v: bool) -> dict:
    return LaunchConfig(R, L, **v).to_dict()


# as a kernel_bench of the Triton K1 writes them: its default build at L = 1 asks for in_nw
# with the slice and for on_w in k.stage; nw_first False is the seed's order for in_nw
ROWS = [
    {"R": 1, "L": 1, "variant": {}, "us": 42.3, "config": cfg(1, 1, nw_first=True, onw_first=True)},
    {
        "R": 1,
        "L": 1,
        "variant": {"nw_first": False},
        "us": 42.6,
        "config": cfg(1, 1, onw_first=True),
    },
    {
        "R": 1,
        "L": 1,
        "variant": {"sleep_ns": 0},
        "us": 42.2,
        "config": cfg(1, 1, nw_first=True, onw_first=True),
    },
    # no default row at 2x2: left out
    {"R": 2, "L": 2, "variant": {"nw_first": False}, "us": 54.0, "config": cfg(2, 2)},
]


def bench_file(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps({"env": {}, "variants": rows, "rows": []}))
    return path


def test_a_config_variant_is_modelled_and_a_code_variant_is_not(tmp_path: Path) -> None:
    report = vm.compare(vm.load_rows(bench_file(tmp_path, ROWS)), "mi355x", "h200")
    assert len(report["rows"]) == 2
    nw, sleep = report["rows"]
    assert nw["default_config"] == ("nw_first", "onw_first")
    assert nw["variant_config"] == ("onw_first",)
    assert nw["measured_delta_us"] == pytest.approx(0.3)
    assert nw["model_delta_us"] > 0 and nw["model_variant_us"] > nw["model_default_us"]
    assert nw["model_delta_us"] == pytest.approx(nw["model_variant_us"] - nw["model_default_us"])
    assert "h200_delta_us" in nw and "h200_default_us" in nw
    assert "no counterpart" in sleep["model"] and "model_delta_us" not in sleep
    table = vm.table(report).splitlines()
    assert "h200 (model)" in table[0] and "model: mi355x" in table[0]
    assert table[1].split()[:3] == ["1x1", '{"nw_first":false}', "+0.30"]
    assert table[2].split()[-1] == "-"  # no model figure for a code-only variant


def test_rows_missing_a_field_are_left_out_and_a_non_bench_file_is_named(tmp_path: Path) -> None:
    rows = vm.load_rows(bench_file(tmp_path, [*ROWS, {"R": 1, "L": 1, "us": 1.0}]))
    assert len(rows) == len(ROWS)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"rows": []}))
    with pytest.raises(InvalidInput, match=r"bad\.json: not a kernel_bench file"):
        vm.load_rows(bad)
    bad.write_text(json.dumps({"variants": ROWS}).replace('"us": ', '"us": NaN, "x": ', 1))
    with pytest.raises(InvalidInput, match=r"bad\.json: variants\[0\]\.us: NaN is not a number"):
        vm.load_rows(bad)
    bad.write_text("[" * 100_000)
    with pytest.raises(InvalidInput, match=r"bad\.json: JSON nested too deeply"):
        vm.load_rows(bad)


@pytest.mark.parametrize(
    ("config", "said"),
    [
        (None, "no 'config'"),
        ({"R": 1, "L": 1, "no_such": True}, "no_such"),
        (cfg(2, 1), "R=2 L=1, not the row's shape"),
        ({"R": 1, "L": 1, "nb": 0}, "nb = 0"),
    ],
)
def test_a_row_without_a_usable_config_is_named(config: dict | None, said: str) -> None:
    row = {"R": 1, "L": 1, "variant": {"tb": 2}, "us": 1.0}
    if config is not None:
        row["config"] = config
    with pytest.raises(InvalidInput, match=said) as e:
        vm.config_of(row)
    assert 'R=1 L=1 variant {"tb": 2}' in str(e.value)


def test_the_figure_is_drawn_for_the_modelled_rows(tmp_path: Path) -> None:
    report = vm.compare(vm.load_rows(bench_file(tmp_path, ROWS[:2])), "mi355x", "h200")
    out = tmp_path / "v.png"
    vm.plot(report, out)
    assert out.read_bytes()[:4] == b"\x89PNG"
