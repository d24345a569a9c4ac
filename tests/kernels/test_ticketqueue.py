"""The ticket-queue example: it finishes at every residency from one CTA up and the
check says why; a wait on a larger ticket is a deadlock with its chain, in the check and
in the engine."""

from __future__ import annotations

import dataclasses
import json

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.examples.ticketqueue import TicketQueueConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import from_chrome, to_chrome


def _slots(gpu: str, n: int):
    return dataclasses.replace(load_profile(gpu, kernel="ticketqueue"), units=n, xcds=1)


@pytest.mark.parametrize("gpu", ["h200", "mi355x"])
@pytest.mark.parametrize("resident", [1, 2, 3, 4])
def test_finishes_at_every_residency(gpu: str, resident: int) -> None:
    tl = simulate(TicketQueueConfig(), _slots(gpu, resident), occupancy=1).timeline
    assert not tl.deadlock
    items = sorted(s.task for c in tl.ctas for s in c.stages)
    assert items == list(range(12))  # every item ran once, whichever CTA took it
    ran = {c.cta for c in tl.ctas if c.stages}
    assert len(ran) == min(resident, 4) if resident < 4 else len(ran) >= 1
    # item i's wait passed only once item i - 1 had set its flag
    end = {s.task: s.end for c in tl.ctas for s in c.stages}
    polls = {p.task: p for c in tl.ctas for p in c.polls}
    for i in range(1, 12):
        assert polls[i].satisfied is not None and polls[i].put_time is not None
        assert polls[i].put_time <= polls[i].satisfied <= end[i]


def test_one_cta_runs_every_item_in_ticket_order() -> None:
    tl = simulate(TicketQueueConfig(), _slots("h200", 1), occupancy=1).timeline
    assert [s.task for s in tl.ctas[0].stages] == list(range(12))
    assert all(not c.stages for c in tl.ctas[1:])  # they took tickets >= 12 and left


def test_bad_wait_hangs_in_the_engine_with_the_word_awaited() -> None:
    tl = simulate(TicketQueueConfig(bad_wait=True), _slots("h200", 1), occupancy=1).timeline
    assert tl.deadlock
    first = tl.stuck[0]
    assert (first.cta, first.region, first.index) == (0, "DONE", 1)
    assert "until DONE[1] == 1: it reads 0" in first.reason and "item 0" in first.reason
    assert all("never became resident" in s.reason for s in tl.stuck[1:])


def test_chrome_export() -> None:
    tl = simulate(
        TicketQueueConfig(ctas=2, items=4), load_profile("h200", kernel="ticketqueue")
    ).timeline
    data = to_chrome(tl)
    names = [e["args"]["name"] for e in data["traceEvents"] if e.get("name") == "process_name"]
    assert names == ["worker CTAs"]
    assert any(e.get("cat") == "handoff" for e in data["traceEvents"])
    back = from_chrome(json.loads(json.dumps(data)))
    assert back.meta == tl.meta and back.ctas == tl.ctas


def test_check(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kernel", "ticketqueue", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "at any residency of at least 1 CTA" in out and "PASS" in out
    assert "does not reason about" in out  # the static analysis says it cannot decide
    argv = ["check", "--kernel", "ticketqueue", "--seeds", "1", "--bad-wait", "true"]
    assert main(argv) == 1
    out = capsys.readouterr().out
    assert "item 0 (held by resident CTA 1 of 1) waits on DONE[1] == 1" in out
    assert "written by item 1 (a larger ticket); item 1 is not taken" in out
    assert "engine at residency 1" in out and "DEADLOCKS" in out
    assert main([*argv, "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    assert rep["tickets"][0]["hangs_at"] == [1, 2, 3, 4]
    assert rep["tickets"][0]["engine_at_hang_residency"] == {"residency": 1, "finishes": False}
    assert main(["check", "--kernel", "ticketqueue", "--items", "0"]) == 2


def test_a_word_outside_its_region_is_invalid_input(tmp_path, capsys) -> None:
    from pathlib import Path

    from kda_sim.kernels.examples import ticketqueue

    f = tmp_path / "tq_bad.py"
    src = Path(ticketqueue.__file__).read_text()
    src = src.replace('name="ticketqueue"', 'name="tq-bad"')
    src = src.replace("Atomic(DONE, done[i], AtomicKind.EXCH, 1)", "Atomic(TICKET, done[i])")
    f.write_text(src)
    assert main(["simulate", "--kernel", str(f)]) == 2
    assert "is not in TICKET" in capsys.readouterr().err
    assert main(["check", "--kernel", str(f), "--seeds", "0"]) == 2
    assert "item 0 (op 3): cell 1 is not in TICKET" in capsys.readouterr().err
