"""The ticket what-if's measured side, on a bundled real trace (no GPU): a kda task's own
time is its stages' spans less its polls' waits, the untraced times are read by schedule,
and the report puts both on the shape they ran."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kda_sim.importers.chrome import read_kernel_trace
from lab.ticket_k1_report import bench_us, kda_own_ns, report, table, takes_ns

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R2_L2.json.gz"


def test_own_time_is_the_spans_less_the_waits() -> None:
    tl = read_kernel_trace(TRACE)
    own = kda_own_ns(tl)
    spans = sum(s.end - s.start for c in tl.ctas for s in c.stages if s.name.startswith("k."))
    assert len(own) == 96 * 2  # one figure a kda task: 96 R tasks
    assert all(x > 0 for x in own)
    assert sum(own) < spans  # the k.conv waits on PROJ are taken out
    assert takes_ns(tl) == []  # a static launch takes no ticket


def test_report_puts_traces_and_times_on_their_shape(tmp_path: Path) -> None:
    d = tmp_path / "s" / "static" / "warm"
    d.mkdir(parents=True)
    for i in range(2):
        shutil.copy(TRACE, d / f"k1_R2_L2_{i}.json")
    bench = tmp_path / "bench.json"
    row = {"R": 2, "L": 2, "us": 53.9}
    bench.write_text(
        json.dumps(
            {
                "variants": [
                    {**row, "variant": {}},
                    {**row, "variant": {"kda_tickets": True}, "us": 60.2},
                ]
            }
        )
    )
    assert bench_us(bench) == {(2, 2, "static"): 53.9, (2, 2, "kda_tickets"): 60.2}
    rep = report(tmp_path / "s", bench)
    r = rep["shapes"]["2x2"]
    assert r["static_warm_makespan_us"] == read_kernel_trace(TRACE).makespan / 1e3
    assert "| 2 x 2 | 53.90 | 60.20 | +6.30 |" in table(rep)


def test_bench_picks_the_ticket_build_by_its_copies(tmp_path: Path) -> None:
    bench = tmp_path / "bench.json"
    row = {"R": 1, "L": 1}
    builds = [
        ({}, 50.0),
        ({"kda_tickets": True, "ticket_unroll": 3}, 51.3),
        ({"kda_tickets": True}, 51.2),
    ]
    bench.write_text(
        json.dumps({"variants": [{**row, "variant": v, "us": us} for v, us in builds]})
    )
    assert bench_us(bench, 3)[(1, 1, "kda_tickets")] == 51.3
    assert bench_us(bench, 0)[(1, 1, "kda_tickets")] == 51.2
    assert bench_us(bench, 3)[(1, 1, "static")] == 50.0
    with pytest.raises(ValueError, match=r"ticket_unroll \[0, 3\]"):
        bench_us(bench)
