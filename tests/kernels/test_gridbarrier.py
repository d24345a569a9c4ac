"""The grid-barrier example: every CTA passes each barrier after the last arrival; the
broken variant's reset is an ABA hazard the check reports and the engine hangs on."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import from_chrome, to_chrome


@pytest.mark.parametrize("gpu", ["h200", "mi355x"])
def test_every_cta_passes_after_the_last_arrival(gpu: str) -> None:
    tl = simulate(
        GridBarrierConfig(ctas=8, rounds=3), load_profile(gpu, kernel="gridbarrier")
    ).timeline
    assert not tl.deadlock
    for r in range(3):
        arrivals = [c.puts[r].time for c in tl.ctas]  # each CTA's r-th add
        for c in tl.ctas:
            assert c.polls[r].satisfied > max(arrivals)
            assert c.polls[r].label == f"ARRIVE>={8 * (r + 1)}"


def test_the_barrier_needs_every_cta_resident() -> None:
    few = dataclasses.replace(load_profile("h200", kernel="gridbarrier"), units=4, xcds=1)
    tl = simulate(GridBarrierConfig(ctas=8), few, occupancy=1).timeline
    assert tl.deadlock
    waits = [s for s in tl.stuck if s.region == "ARRIVE"]
    assert len(waits) == 4 and "until ARRIVE[0] >= 8: it reads 4" in waits[0].reason


def test_broken_reset_hangs_under_some_timing() -> None:
    prof = load_profile("h200", kernel="gridbarrier")
    runs = [
        simulate(GridBarrierConfig(broken=True), prof, seed=s, jitter=0.9).timeline
        for s in range(1, 6)
    ]
    hung = [tl for tl in runs if tl.deadlock]
    assert hung  # the reset overtook a waiter's read of the full count
    assert any("ARRIVE[0] >= 8" in s.reason for s in hung[0].stuck)
    ok = [simulate(GridBarrierConfig(), prof, seed=s, jitter=0.9).timeline for s in range(1, 6)]
    assert not any(tl.deadlock for tl in ok)


def test_chrome_export() -> None:
    tl = simulate(GridBarrierConfig(ctas=4), load_profile("mi355x")).timeline
    data = to_chrome(tl)
    assert any(e.get("cat") == "handoff" for e in data["traceEvents"])
    back = from_chrome(json.loads(json.dumps(data)))
    assert back.ctas == tl.ctas


def test_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kernel", "gridbarrier", "--seeds", "1"]) == 0
    assert "ABA (a counter reused while awaited): none" in capsys.readouterr().out
    argv = ["check", "--kernel", "gridbarrier", "--seeds", "1", "--broken", "true", "--json"]
    assert main(argv) == 1
    rep = json.loads(capsys.readouterr().out)
    races = [f for f in rep["findings"] if f["category"] == "reset-race"]
    assert races and races[0]["details"]["clearer"]["cta"] == 0
    assert races[0]["details"]["clearer"]["op"] == 7
    assert {w["cta"] for w in races[0]["details"]["waiters"]} == set(range(1, 8))
    assert main(["check", "--kernel", "gridbarrier", "--ctas", "0"]) == 2


def test_the_last_arrivers_reset_is_one_hazard_a_round(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--kernel", "gridbarrier", "--seeds", "1", "--last-resets", "true", "--json"]
    assert main(argv) == 1
    rep = json.loads(capsys.readouterr().out)
    races = [f for f in rep["findings"] if f["category"] == "reset-race"]
    assert [f["details"]["clearer"]["op"] for f in races] == [5, 12]  # each round's branch
    assert all(f["details"]["ctas"] == 8 for f in races)  # whichever of the 8 arrives last
    assert "if old == 7: last arriver" in races[0]["message"]
