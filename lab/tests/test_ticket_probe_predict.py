"""The experiment's builds as the model runs them (lab/ticket_probe_predict.py): the take
probe's launch (a take before each static task), the static placement's takes, and the
four builds predicted from a run folder laid out of a bundled real trace (no GPU)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.engine import simulate
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.kda import tasks_of
from kda_sim.kernels.k1.tickets import TICKET_NAME
from kda_sim.machine import load_profile
from kda_sim.protocol.counters import Atomic
from kda_sim.protocol.ops import Begin
from kda_sim.protocol.tickets import TicketLoop
from lab.ticket_probe_predict import main, run, static_takes, take_before_each_task
from lab.ticket_probe_report import BUILDS

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R2_L2.json.gz"
ktrace = pytest.importorskip("kda_kernel.triton.trace")  # the writer (needs numpy only)
TICKETS = LaunchConfig(2, 2, kda_tickets=True, ticket_unroll=3)


def test_the_take_probe_takes_once_before_each_static_task() -> None:
    launch = take_before_each_task(TICKETS)
    for prog in launch.programs:
        assert not any(isinstance(op, TicketLoop) for op in prog.ops)
        takes = [k for k, op in enumerate(prog.ops) if isinstance(op, Atomic)]
        assert len(takes) == len(tasks_of(prog.cta, TICKETS))
        for k, task in zip(takes, tasks_of(prog.cta, TICKETS), strict=True):
            assert prog.ops[k + 1] == Begin("k.stage", task)  # the task follows its take
    # each task's k.stage loads wait for its take: the atomic's return (half a round trip
    # after its serialization, the put on TICKET) plus the item's prologue
    prof = load_profile("h200-k1").with_params(ticket_item=64.0)
    prof = replace(prof, latency_ns={**prof.latency_ns, "atomic": 500.0})
    tl = simulate(TICKETS, prof, occupancy=2, launch=launch).timeline
    for c in tl.ctas:
        takes_at = sorted(p.time for p in c.puts if p.region == TICKET_NAME)
        loads = [ld for ld in c.loads if ld.stage == "k.stage"]
        assert len(takes_at) == len({ld.task for ld in loads})
        for ld in loads:
            assert ld.issue == pytest.approx(max(s for s in takes_at if s < ld.issue) + 314.0)
    static = simulate(LaunchConfig(2, 2), prof, occupancy=2).timeline
    assert tl.makespan > static.makespan + 250.0  # a task's take delays its chain


def test_the_static_placements_takes_are_a_run_of_the_loop() -> None:
    cfg = LaunchConfig(4, 1, kda_tickets=True, ticket_unroll=3)
    takes = static_takes(cfg)
    assert takes[0] == (0, 256, 384) and takes[255] == (255, 384 + 255)
    replace(cfg, placed=takes).validate()  # every item once, each CTA ends past them


def _run_dir(tmp_path: Path) -> tuple[Path, Path]:
    s = tmp_path / "s"
    for name in BUILDS:
        d = s / name / "warm"
        d.mkdir(parents=True)
        tl = read_kernel_trace(TRACE)
        if name != "static":  # takes of 400 ns, each 64 ns before a task's first stage
            takes = []
            for c in tl.ctas:
                for st in (st for st in c.stages if st.name == "k.stage"):
                    takes.append([c.cta, st.start - 464, st.start - 64, st.task])
            tl.meta.extra["ticket_takes"] = takes
        ktrace.write(tl, d / "k1_R2_L2_0.json")
    bench = tmp_path / "kernel_bench_probe.json"
    times = {"static": 57.8, "static_take": 58.1, "tickets": 60.1, "tickets_static": 59.0}
    rows = [{"R": 2, "L": 2, "variant": BUILDS[b], "us": us} for b, us in times.items()]
    bench.write_text(json.dumps({"variants": rows}))
    return s, bench


def test_the_four_builds_are_predicted_and_read(tmp_path: Path) -> None:
    s, bench = _run_dir(tmp_path)
    rep = run(s, bench, "h200-k1")
    assert rep["atomic_ns"] == 400.0 and rep["ticket_item_ns"] == 64.0  # measured
    (row,) = rep["rows"]
    pred = row["predicted_us"]
    assert row["take_predicted_us"] == pytest.approx(pred["static_take"] - pred["static"])
    assert row["take_predicted_us"] > 0.4  # at least one take and prologue on the chain
    assert row["take_measured_us"] == pytest.approx(0.3)
    assert row["placement_measured_us"] == pytest.approx(1.1)
    assert row["code_measured_us"] == pytest.approx(0.9)
    nominal = run(s, bench, "h200-k1", nominal_take=True)
    assert nominal["atomic_ns"] != 400.0
    assert nominal["rows"][0]["take_predicted_us"] < row["take_predicted_us"]


def test_bad_input_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bench = tmp_path / "b.json"
    bench.write_text("{}")
    assert main(["--dir", str(tmp_path), "--bench", str(bench)]) == 2
    assert "static_take/warm: not a folder" in capsys.readouterr().err
    s, good = _run_dir(tmp_path)
    assert main(["--dir", str(s), "--bench", str(bench)]) == 2
    assert "kernel_bench" in capsys.readouterr().err
    untaken = s / "static_take" / "warm" / "k1_R2_L2_0.json"
    ktrace.write(read_kernel_trace(TRACE), untaken)  # a trace without its takes
    assert main(["--dir", str(s), "--bench", str(good)]) == 2
    assert "no take recorded" in capsys.readouterr().err
