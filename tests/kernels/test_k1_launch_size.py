"""K1's ``launch_size`` hook: the ops of its build, counted from the configuration alone
(kda_sim/kernels/k1/spec.py), so that a launch of 10^7 CTAs is refused before it is
built."""

from __future__ import annotations

import time

import pytest

from kda_sim.cli import main
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.registry import get
from kda_sim.kernels.spec import MAX_LAUNCH_OPS
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import walk

SPEC = get("k1")
# static, each variant, both schedules, shapes with S below and at 16, more CTAs
CONFIGS = [
    LaunchConfig(1, 1),
    LaunchConfig(2, 2, gate_local=True),
    LaunchConfig(4, 4, nb=1, nw_first=True, onw_first=True),
    LaunchConfig(1, 2, blocks=300, kda0=299),
    LaunchConfig(2, 1, kda_tickets=True),
    LaunchConfig(1, 2, gemv_tickets=True, onw_first=True, blocks=253),
    LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=3, take_ahead=True),
    LaunchConfig(1, 1, gemv_tickets=True, take_ahead=True),
]


def counted(launch: Launch) -> int:
    """The ops a launch holds: every program's, the ticket loop's bodies once."""
    walked: set[int] = set()
    return sum(1 for prog in launch.programs for _ in walk(prog, walked))


def cta_programs(cfg: LaunchConfig) -> int:
    """What the hook counts beyond the ops: every CTA of a static launch (a program is
    built for it, ops or none); a ticket launch's CTAs each hold the loop, an op."""
    return 0 if cfg.tickets and not cfg.placed else cfg.blocks


@pytest.mark.parametrize("cfg", CONFIGS, ids=lambda c: f"{c.label()} blocks={c.blocks}")
def test_the_size_is_the_count_the_build_makes(cfg: LaunchConfig) -> None:
    ops, fields = SPEC.launch_size(cfg)
    assert ops == counted(SPEC.build(cfg)) + cta_programs(cfg)
    assert fields == ("R", "L")  # at 256 CTAs the work is the most of it


@pytest.mark.parametrize("schedule", ["kda_tickets", "gemv_tickets"])
def test_a_placed_launch_counts_its_takes(schedule: str) -> None:
    cfg = LaunchConfig(1, 1, **{schedule: True})
    items = cfg.n_tasks + (393 if cfg.gemv_tickets else 0)
    # tickets dealt round the CTAs: each ends on one past the items, as a run's do
    takes = tuple(tuple(range(c, items + cfg.blocks, cfg.blocks)) for c in range(cfg.blocks))
    placed = SPEC.place_takes(cfg, takes)
    assert SPEC.launch_size(placed)[0] == counted(SPEC.build(placed)) + cta_programs(placed)


def test_a_launch_of_ten_million_ctas_is_refused_before_it_is_built(capsys) -> None:
    big = LaunchConfig(1, 1, blocks=10**7)
    start = time.perf_counter()
    with pytest.raises(InvalidInput, match=r"blocks = 10000000: a launch of about") as e:
        SPEC.build(big)
    assert e.value.what == "blocks"
    # the command line's way to it: a host sequence's launch with its own blocks
    argv = ["check", "--kernel", "k1", "--gpu", "h200", "--R", "1", "--L", "1"]
    assert main([*argv, "--sequence", "launch blocks=10000000"]) == 2
    assert time.perf_counter() - start < 10  # building it takes minutes and GBs
    err = capsys.readouterr().err
    assert "blocks = 10000000: a launch of about 10,00" in err
    assert f"past the bound of {MAX_LAUNCH_OPS:,}" in err
    SPEC.validate(LaunchConfig(1, 1, blocks=MAX_LAUNCH_OPS // 2))  # large, in bound: taken
