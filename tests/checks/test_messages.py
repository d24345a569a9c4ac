"""The checks' messages say what they count, in words that need no decoding."""

from __future__ import annotations

import re

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile


def test_a_deadlock_says_how_many_ctas_wait_and_how_many_never_dispatched(capsys) -> None:
    assert main(["check", "--gpu", "h200-stock", "--R", "4", "--L", "2"]) == 1
    out = capsys.readouterr().out
    # 132 slots on the H200 at one CTA an SM (the seed's build): 132 hold them and wait,
    # 124 never start
    assert "256 CTAs never finish (132 resident and waiting, 124 never dispatched" in out
    assert "it is 21st in the dispatch queue" in out
    assert not re.search(r"\d\. in the dispatch queue", out)


def test_the_engine_names_a_ctas_place_in_the_dispatch_queue() -> None:
    tl = simulate(LaunchConfig(4, 2), load_profile("h200-stock")).timeline
    reasons = [s.reason for s in tl.stuck if s.stage == "dispatch"]
    assert reasons and all(re.search(r"\d+(st|nd|rd|th) in the dispatch queue", r) for r in reasons)
    assert not any(re.search(r"\d\. in the dispatch queue", r) for r in reasons)


def test_a_stale_pass_gives_its_probability_as_a_plain_number(capsys) -> None:
    assert main(["check", "--tags", "--shapes", "8x1,1x1"]) == 1
    out = capsys.readouterr().out
    m = re.search(r"with probability (\S+)", out)
    assert m and re.fullmatch(r"\d(\.\d)?e-\d+|[\d.]+", m.group(1)), m.group(1)
    assert "1 scenario in all" in out


def test_a_witness_at_a_negative_epoch_says_how_far_away_that_is(capsys) -> None:
    argv = ["check", "--tags", "--policy", "zeroed-per-step", "--tag-slots", "1"]
    assert main([*argv, "--epoch-bits", "31"]) == 1
    out = capsys.readouterr().out
    assert "at epoch -1 (where the 32-bit counter wraps to: 4,294,967,295 steps from epoch 0" in out
    assert "4.97 days at 100 us a step" in out


def test_a_kda0_outside_the_launch_names_the_range(capsys) -> None:
    assert main(["simulate", "--kda0", "300"]) == 2
    assert "kda0 = 300: must be a CTA of the launch, 0..255" in capsys.readouterr().err


def test_the_sweep_table_shows_each_cells_slots_and_why_a_cell_is_invalid() -> None:
    from kda_sim.checks.sweep import DEADLOCK, FINISHES, INVALID, Cell, format_table

    cells = [
        Cell(1, 1, FINISHES, 24_600.0, slots=264),
        Cell(1, 2, DEADLOCK, None, "CTA 0 waits", slots=132),
        Cell(2, 1, INVALID, reason="S = 16: x rows take too much LDS"),
        Cell(2, 2, INVALID, reason="S = 16: x rows take too much LDS"),
    ]
    out = format_table(cells, "h200")
    slots = out[out.index("slots (") :].splitlines()
    assert slots[1].split() == ["R=1", "264", "132"] and slots[2].split() == ["R=2", "-", "-"]
    assert "  2x1, 2x2: S = 16: x rows take too much LDS" in out.splitlines()


def test_an_occupancy_past_what_the_build_allows_is_refused(capsys) -> None:
    # the seed's build stages its x rows in LDS: one CTA an SM at S = 14
    for cmd in ("check", "simulate", "floor"):
        argv = [cmd, "--gpu", "h200-stock", "--R", "7", "--L", "2", "--occupancy", "2"]
        assert main(argv) == 2, cmd
        err = capsys.readouterr().err
        assert "--occupancy 2: this build's LDS allow 1 CTA(s) a SM on h200-stock" in err
        assert "at R=7 L=2" in err and "B of LDS a CTA of the unit's" in err
    # what the build holds is taken, and the build we ship holds two at 7x2
    assert main(["check", "--gpu", "h200-stock", "--R", "1", "--L", "1", "--occupancy", "2"]) == 0
    assert main(["check", "--gpu", "h200", "--R", "7", "--L", "2", "--occupancy", "2"]) == 0
    capsys.readouterr()


def test_a_sweep_marks_the_cells_an_occupancy_does_not_fit_invalid() -> None:
    from kda_sim.checks.sweep import INVALID, sweep_cell
    from kda_sim.machine.profile import load_profile

    prof = load_profile("h200-stock")
    cell = sweep_cell(prof, 7, 2, occupancy=2)
    assert cell.verdict == INVALID and "--occupancy 2: this build's LDS allow 1" in cell.reason
    assert sweep_cell(prof, 1, 1, occupancy=2).verdict != INVALID


def test_a_deadlock_limited_by_resources_is_fixed_by_a_build_not_the_flag(capsys) -> None:
    assert main(["check", "--gpu", "h200-stock", "--R", "4", "--L", "2"]) == 1
    fix = next(ln for ln in capsys.readouterr().out.splitlines() if "fix:" in ln)
    assert "limited by LDS" in fix and "a build whose LDS allow it" in fix
    assert "--occupancy" not in fix  # the flag would be refused there
    assert main(["check", "--gpu", "h200", "--R", "4", "--L", "2", "--occupancy", "1"]) == 1
    fix = next(ln for ln in capsys.readouterr().out.splitlines() if "fix:" in ln)
    assert "limited by --occupancy: --occupancy 2" in fix
