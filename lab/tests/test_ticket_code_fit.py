"""The unrolled ticket build's code share fitted to untraced times, each shape held out
(lab/ticket_code_fit.py), on a bench the model itself "measured" with a known share: the
held-out predictions meet it and the fit finds the share; the bench's other builds are
left out and a shape without both builds is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kda_kernel.triton.defaults import default_config
from kda_sim.engine import simulate
from kda_sim.kernels.k1.code_share import with_code_share
from kda_sim.machine import load_profile
from lab.ticket_code_fit import main, run, table, untraced
from lab.ticket_unroll_predict import OCCUPANCY, UNROLL

SHARE = {"gemv_group": 300.0, "kda_item_l1": 500.0, "kda_item_l2": 900.0}
# both L regimes, one and two items on a CTA (R = 4): the three terms apart
SHAPES = ((1, 1), (4, 1), (1, 2), (4, 2))
TICKETS = {"kda_tickets": True, "ticket_unroll": UNROLL}


def _us(cfg, prof) -> float:
    return simulate(cfg, prof, occupancy=OCCUPANCY).timeline.makespan / 1e3


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Path:
    base = load_profile("h200-k1")
    slow = with_code_share(base, SHARE)
    rows = []
    for R, L in SHAPES:
        rows.append({"R": R, "L": L, "variant": {}, "us": _us(default_config(R, L, 8), base)})
        cfg = default_config(R, L, 8, kda_tickets=True, ticket_unroll=UNROLL)
        rows.append({"R": R, "L": L, "variant": TICKETS, "us": _us(cfg, slow)})
        rows.append({"R": R, "L": L, "variant": {"maxnreg": 96}, "us": 1e6})  # not a build here
    path = tmp_path_factory.mktemp("run") / "bench.json"
    path.write_text(json.dumps({"variants": rows}))
    return path


def test_held_out_shapes_meet_a_share_the_bench_was_made_with(bench: Path) -> None:
    rep = run(bench, log=lambda _m: None)
    assert [(r["R"], r["L"]) for r in rep["rows"]] == sorted(SHAPES)
    for r in rep["rows"]:
        assert r["within"] and abs(r["error_us"]) < 0.05
        assert r["protocol_diff_us"] < r["meas_diff_us"] - 0.5  # the share is the rest
    for term, ns in SHARE.items():
        assert rep["share_all_ns"][term] == pytest.approx(ns, rel=0.1)  # the terms trade a little
    text = table(rep["rows"], "held out")
    assert "4 of 4 within the bar (0 of 4 on the protocol alone)" in text


def test_the_bench_rows_are_read_by_build(bench: Path, tmp_path: Path) -> None:
    got = untraced(bench)
    assert sorted(got) == sorted(SHAPES) and all(t > s for s, t in got.values())
    rows = json.loads(bench.read_text())["variants"]
    (tmp_path / "b.json").write_text(json.dumps({"variants": [r for r in rows if r["variant"]]}))
    assert main(["--bench", str(tmp_path / "b.json")]) == 2
    assert main(["--bench", str(bench), "--form", "nope"]) == 2
