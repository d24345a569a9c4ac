"""``kda-sim variants`` as a user runs it: report, table and figure, nothing overwritten,
and a file that is not a kernel bench with variants exit 2 naming it."""

from __future__ import annotations

import json
from pathlib import Path

from kda_sim.cli import main
from kda_sim.kernels.k1.config import LaunchConfig

ROWS = [
    {"R": 1, "L": 1, "variant": {}, "us": 42.3},
    {"R": 1, "L": 1, "variant": {"nw_first": False}, "us": 42.6},
]
ROWS[0]["config"] = LaunchConfig(1, 1, nw_first=True, onw_first=True).to_dict()
ROWS[1]["config"] = LaunchConfig(1, 1, onw_first=True).to_dict()


def bench_file(tmp_path: Path, doc: dict) -> Path:
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(doc))
    return path


def test_the_command_writes_report_and_plot_and_keeps_what_is_there(tmp_path: Path, capsys) -> None:
    bench = bench_file(tmp_path, {"env": {}, "variants": ROWS, "rows": []})
    out, png = tmp_path / "r.json", tmp_path / "r.png"
    argv = ["variants", str(bench), "--profile", "mi355x", "--predict", "h200"]
    assert main([*argv, "--out", str(out), "--png", str(png)]) == 0
    report = json.loads(out.read_text())
    assert report["profile"] == "mi355x" and report["predict"] == "h200"
    assert [(r["R"], r["variant"]) for r in report["rows"]] == [(1, {"nw_first": False})]
    assert png.read_bytes()[:4] == b"\x89PNG"
    cap = capsys.readouterr()
    assert json.loads(cap.out) == report and "+0.30" in cap.err
    said = report["costs"]
    assert said["mi355x"].startswith("k1 stock costs for mi355x: the seed's build")
    assert said["h200"].startswith("k1 costs fitted on h200") and "costs of h200: " in cap.err
    out.write_text("mine")
    assert main(["variants", str(bench), "--out", str(out)]) == 2
    assert out.read_text() == "mine" and "--force" in capsys.readouterr().err


def test_bad_files_exit_2_naming_what_is_wrong(tmp_path: Path, capsys) -> None:
    bad = bench_file(tmp_path, {"rows": []})
    assert main(["variants", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kda-sim variants: ") and "bench.json: not a kernel_bench file" in err
    old = bench_file(
        tmp_path, {"variants": [{k: v for k, v in r.items() if k != "config"} for r in ROWS]}
    )
    assert main(["variants", str(old)]) == 2
    err = capsys.readouterr().err
    assert "no 'config'" in err and "--add-configs" in err and "Traceback" not in err
    assert main(["variants", str(tmp_path / "absent.json")]) == 2
    assert "absent.json" in capsys.readouterr().err
