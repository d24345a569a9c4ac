"""``kda-sim check`` and ``kda-sim sweep`` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_sim.cli import main


def test_check_failing_launch_is_exit_1_with_the_chain_and_fix(capsys) -> None:
    argv = ["check", "--gpu", "h200-stock", "--R", "4", "--L", "2", "--seeds", "1"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "CTA 0 waits in k.conv (task 0) on PROJ[" in out and "not resident" in out
    assert "fix: more occupancy" in out and out.rstrip().endswith("FAIL: deadlock")
    assert out.splitlines()[1].startswith("  costs: k1 stock costs for h200: the seed's build")


def test_check_on_the_h200_as_we_ship_k1_agrees_with_its_trace_and_says_so(capsys) -> None:
    """The bundled H200 trace of 4x2 finished 256/256; so does its check on ``--gpu h200``
    (K1's fitted costs and resources, 2 CTAs an SM), and the report says which costs."""
    from kda_sim.timeline.chrome import read_chrome

    real = read_chrome(Path(__file__).parents[2] / "traces" / "k1_h200_R4_L2.json.gz")
    assert (real.meta.R, real.meta.L, real.meta.source) == (4, 2, "measured")
    assert all(c.end is not None for c in real.ctas) and len(real.ctas) == 256
    assert main(["check", "--gpu", "h200", "--R", "4", "--L", "2", "--seeds", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "occupancy 2 (264 slots, by registers)" in out[0]
    assert out[1].startswith("  costs: k1 costs fitted on h200 by kda-sim calibrate (")
    assert "the Triton K1 we ship" in out[1]


def test_check_passing_launch_is_exit_0_and_json(capsys) -> None:
    assert main(["check", "--gpu", "mi355x", "--R", "1", "--L", "1", "--seeds", "1", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["ok"] and d["deadlock"]["static"]["finishes"] and d["deadlock"]["engine"]["finishes"]
    assert d["deadlock"]["any_order"]["finishes"] is True
    assert d["role_rule"]["accepted"] == 197 and d["visibility"]["ok"]


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "--R", "17"],
        ["check", "--gpu", "a100"],
        ["check", "--jitter", "1.5"],
        ["check", "--tags", "--shapes", "20x1"],
        ["check", "--tags", "--shapes", "8y1"],
        ["check", "--tags", "--slots", "2", "--nb-per-slot", "1,2"],
        ["check", "--tags", "--epoch-bits", "40"],
        ["check", "--tags", "--nb-per-slot", "1,x"],
        ["sweep", "--gpu", "a100"],
    ],
)
def test_invalid_input_is_exit_2(argv: list[str], capsys) -> None:
    with pytest.raises(SystemExit) as e:
        raise SystemExit(main(argv))
    assert e.value.code == 2


def test_tags_never_zeroed_fails_zeroed_passes(capsys) -> None:
    base = ["check", "--tags", "--shapes", "8x1,1x1", "--nb-per-slot", "1,1,2,8"]
    assert main([*base, "--policy", "never-zeroed"]) == 1
    out = capsys.readouterr().out
    assert "PART[" in out and "4194303 steps of shape 1x1" in out and "zeroed-per-step" in out
    assert main([*base, "--policy", "zeroed-per-step", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["safe"] and d["nb_per_slot"] == [1, 1, 2, 8]


def test_tag_faults_from_the_command_line(capsys) -> None:
    assert main(["check", "--tags", "--nb-per-slot", "1,8", "--fault", "frozen-epoch"]) == 1
    assert "epoch frozen" in capsys.readouterr().out
    assert main(["check", "--tags", "--slots", "2", "--tag-slots", "1024", "--json"]) == 1
    d = json.loads(capsys.readouterr().out)
    assert any(f["category"] == "overflow" for f in d["findings"])
    # layer + 1 is safe without zeroing only while every slot writes the same pairs
    assert main(["check", "--tags", "--slots", "4", "--scheme", "layer+1"]) == 0
    lp = ["check", "--tags", "--nb-per-slot", "1,8", "--scheme", "layer+1"]
    assert main(lp) == 1
    assert main([*lp, "--policy", "zeroed-per-step"]) == 0


def test_sweep_json_png_and_table(tmp_path: Path, capsys) -> None:
    png = tmp_path / "map.png"
    assert main(["sweep", "--gpu", "h200-stock", "--png", str(png), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["gpu"] == "h200-stock" and d["costs"].startswith("k1 stock costs for h200: the seed")
    assert png.stat().st_size > 0
    cells = {(c["R"], c["L"]): c for c in d["cells"]}
    assert len(cells) == 32 and all(c["agree"] for c in cells.values())
    assert cells[(4, 2)]["verdict"] == "deadlocks" and cells[(1, 1)]["verdict"] == "finishes"
    assert cells[(1, 1)]["time_ns"] > 0 and "not resident" in cells[(4, 2)]["reason"]
    assert cells[(8, 4)]["verdict"] == "invalid" and "S = " in cells[(8, 4)]["reason"]
    assert main(["sweep", "--gpu", "h200-stock", "--png", str(png)]) == 2  # exists, no --force
    from kda_sim.checks.sweep import Cell, format_table

    table = format_table([Cell(**c) for c in d["cells"]], "h200")
    assert "DEADLOCK" in table and "invalid" in table and " us" in table


def test_a_mutant_from_the_command_line_fails_with_its_category(capsys) -> None:
    argv = ["check", "--R", "1", "--L", "1", "--seeds", "1", "--mutant", "publish-without-drain"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "mutant publish-without-drain" in out and "FAIL: visibility" in out
    assert main(["check", "--mutant", "frozen-epoch"]) == 1
    assert "[stale]" in capsys.readouterr().out


def test_check_of_another_kernel_refuses_every_k1_flag_given(capsys) -> None:
    """Shape, variant and schedule flags alike: K1's, named in the order they are declared."""
    argv = ["check", "--kernel", "pingpong", "--nb", "3", "--gate-local", "--kda-tickets"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert "--nb, --gate-local, --kda-tickets: K1's, not pingpong's flags" in err
    assert "Traceback" not in err


def test_sweep_prints_the_same_map_with_one_job_or_two(capsys) -> None:
    """``kda-sim sweep --gpu h200`` (issue 40's benchmark) byte for byte: the shapes run
    in this process alone, or shared with a worker."""
    assert main(["sweep", "--gpu", "h200", "--jobs", "1"]) == 0
    one = capsys.readouterr().out
    assert main(["sweep", "--gpu", "h200", "--jobs", "2"]) == 0
    assert capsys.readouterr().out == one and "25 finish, 0 deadlock, 7 invalid" in one
