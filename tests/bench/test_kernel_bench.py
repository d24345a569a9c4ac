"""The benchmark's command line without a GPU: the shape list ("" asks for no full
comparison, variants only), and an older result's variant rows given the launch
configuration each build runs (what ``kda-sim variants`` simulates)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("torch")


def test_shapes_parse_and_may_be_empty() -> None:
    from bench.kernel_bench import parse_shapes

    assert parse_shapes("1x1,2x4") == [(1, 1), (2, 4)]
    assert parse_shapes("") == []


def test_add_configs_gives_each_variant_its_builds_launch_configuration() -> None:
    from bench.kernel_bench import add_configs
    from kda_sim.kernels.k1.config import LaunchConfig

    doc = {
        "variants": [
            {"R": 1, "L": 1, "variant": {}, "us": 42.3},
            {"R": 1, "L": 1, "variant": {"nw_first": False}, "us": 42.6},
            {"R": 1, "L": 4, "variant": {}, "us": 60.0},
            {"R": 1, "L": 1, "variant": {}, "us": 1.0, "config": {"R": 1, "L": 1}},
        ]
    }
    rows = add_configs(doc)["variants"]
    cfgs = [LaunchConfig.from_dict(r["config"]) for r in rows[:3]]
    # the default build asks for in_nw with the slice where some S runs it by token (L < 4);
    # every build asks for on_w in k.stage
    assert cfgs[0].variants() == ("nw_first", "onw_first")
    assert cfgs[1].variants() == ("onw_first",)
    assert cfgs[2].variants() == ("onw_first",)
    assert rows[3]["config"] == {"R": 1, "L": 1}  # a row that has one keeps it


def test_add_configs_names_a_variant_that_is_no_build(tmp_path: Path, capsys) -> None:
    from bench.kernel_bench import main

    old, new = tmp_path / "old.json", tmp_path / "new.json"
    old.write_text(json.dumps({"variants": [{"R": 1, "L": 1, "variant": {"no_such": 1}}]}))
    assert main(["--add-configs", str(old), "--out", str(new)]) == 2
    assert "no_such" in capsys.readouterr().err and not new.exists()
    old.write_text(json.dumps({"variants": [{"R": 1, "L": 1, "variant": {}, "us": 1.0}]}))
    assert main(["--add-configs", str(old), "--out", str(new)]) == 0
    assert json.loads(new.read_text())["variants"][0]["config"]["nw_first"] is True
    assert main(["--add-configs", str(old), "--out", str(new)]) == 2  # kept: no --force
    assert "--force" in capsys.readouterr().err
