"""The 2-CTA example kernel: it simulates on a GPU profile, exports to Chrome JSON and
back, finishes whenever the producer gets a slot and deadlocks when it cannot."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.pingpong import KERNEL, PingPongConfig
from kda_sim.machine import load_profile
from kda_sim.protocol.handoffs import derive
from kda_sim.timeline.chrome import from_chrome, read_chrome, to_chrome
from kda_sim.timeline.summary import stage_stats


def test_the_hand_off_graph() -> None:
    ho = derive(KERNEL.build(PingPongConfig(rounds=3)))
    assert [ref for ref, _ in ho.polls] == [(1, 1), (1, 5), (1, 9)]
    assert ho.producers[(1, 1)] == ((0, 4),)
    assert not any(ho.unput.values())


@pytest.mark.parametrize("gpu", ["h200", "mi355x"])
def test_it_simulates_and_the_consumer_waits_for_the_put(gpu: str) -> None:
    res = simulate(PingPongConfig(rounds=2), load_profile(gpu, kernel="pingpong"))
    tl = res.timeline
    assert not tl.deadlock and tl.makespan is not None and tl.makespan > 0
    assert tl.meta.kernel == "pingpong" and tl.meta.blocks == 2
    assert tl.meta.config() == PingPongConfig(rounds=2)
    prod, cons = tl.ctas
    assert (prod.role, cons.role) == ("producer", "consumer")
    for poll, put in zip(cons.polls, prod.puts, strict=True):
        assert poll.producer == 0 and poll.satisfied >= put.time
    assert [s.stage for s in stage_stats(tl)] == ["produce", "consume"]


def test_chrome_export_has_a_process_a_role_and_reads_back() -> None:
    tl = simulate(PingPongConfig(), load_profile("h200", kernel="pingpong")).timeline
    data = to_chrome(tl)
    names = [e["args"]["name"] for e in data["traceEvents"] if e.get("name") == "process_name"]
    assert names == ["producer CTAs", "consumer CTAs"]
    assert any(e.get("cat") == "handoff" for e in data["traceEvents"])
    back = from_chrome(json.loads(json.dumps(data)))
    assert back.meta == tl.meta and back.ctas == tl.ctas


def test_deadlock_when_the_consumer_holds_the_only_slot() -> None:
    one = dataclasses.replace(load_profile("h200", kernel="pingpong"), units=1, xcds=1)
    ok = simulate(PingPongConfig(), one, occupancy=1, order=[0, 1]).timeline
    assert not ok.deadlock
    stuck = simulate(PingPongConfig(), one, occupancy=1, order=[1, 0]).timeline
    assert stuck.deadlock
    wait = next(s for s in stuck.stuck if s.cta == 1)
    assert (wait.region, wait.index, wait.producer) == ("VAL", 0, 0)
    assert "not resident" in wait.reason


def test_invalid_config() -> None:
    with pytest.raises(InvalidInput, match="rounds"):
        simulate(PingPongConfig(rounds=0), load_profile("h200", kernel="pingpong"))


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pp.json"
    argv = ["simulate", "--kernel", "pingpong", "--gpu", "h200", "--rounds", "2"]
    assert main([*argv, "--out", str(out)]) == 0
    assert "pingpong rounds=2" in capsys.readouterr().out
    assert read_chrome(out).meta.kernel == "pingpong"
    assert main(["simulate", "--kernel", "pingpong", "--rounds", "0"]) == 2
    assert main(["simulate", "--kernel", "pingpong", "--R", "2"]) == 2
    assert main(["simulate", "--kernel", "pingpong", "--no-such-flag", "1"]) == 2


def test_cli_by_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from kda_sim.kernels.examples import pingpong

    f = tmp_path / "mine.py"
    f.write_text(Path(pingpong.__file__).read_text().replace('name="pingpong"', 'name="mine"'))
    assert main(["simulate", "--kernel", str(f), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["kernel"] == "mine"
    bad = tmp_path / "bad.py"
    bad.write_text("KERNEL = 1 / 0\n")
    assert main(["simulate", "--kernel", str(bad)]) == 2
    assert f"{bad.resolve()}:1" in capsys.readouterr().err


def test_check(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kernel", "pingpong", "--gpu", "h200", "--seeds", "1"]) == 0
    assert "PASS" in capsys.readouterr().out
    one = load_profile("h200", kernel="pingpong").to_dict() | {
        "units": 1,
        "xcds": 1,
        "name": "one-sm",
    }
    prof = tmp_path / "one_sm.json"
    prof.write_text(json.dumps(one))
    argv = ["check", "--kernel", "pingpong", "--profile", str(prof), "--occupancy", "1"]
    # finishes in order, deadlocks when the consumer is dispatched first: K1's rule, a note
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kernel"] == "pingpong" and report["config"] == {"rounds": 1, "nbytes": 65536}
    dl = report["deadlock"]
    assert dl["static"]["finishes"] is True and dl["any_order"]["finishes"] is False
    assert dl["any_order"]["witness_order"] == [1, 0]
    assert dl["any_order"]["engine_on_witness_finishes"] is False
    assert [f["severity"] for f in report["findings"]] == ["note"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "CTA 1 waits in consume on VAL[0]" in out
    assert "tags (--tags): not available for pingpong" in out
    assert main(["check", "--kernel", "pingpong", "--tags"]) == 2


def test_critical_path_and_poll_sources() -> None:
    from kda_sim.timeline.critical import critical_path, poll_sources

    tl = simulate(PingPongConfig(rounds=2), load_profile("h200", kernel="pingpong")).timeline
    path = critical_path(tl)
    assert path is not None and path.handoffs and {0, 1} <= set(path.ctas)
    assert [(s.cta, s.put_index) for s in poll_sources(tl, 1, 1)] == [(0, 1)]
    tl.meta.kernel = "not-registered"  # no protocol to read: the record's own producer
    assert [(s.cta, s.put_index, s.last) for s in poll_sources(tl, 1, 1)] == [(0, 1, True)]
