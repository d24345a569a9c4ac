"""The mono MoE ticket kernel: it finishes at every residency from one CTA up and the
check says why; every wait is met by the item the design names; the last ticket's taker
clears the counters; ``bad_order`` is a deadlock with its chain, ``no_clear`` says what
the next launch would see; simulate, timeline, Perfetto export and the app's figures."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kda_sim.cli import main
from kda_sim.engine import simulate
from kda_sim.kernels.monomoe.config import MonoMoeConfig
from kda_sim.kernels.monomoe.protocol import Layout, experts_of, routes
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import from_chrome, to_chrome
from kda_sim.timeline.model import Timeline

CFG = MonoMoeConfig()


def _slots(gpu: str, n: int):
    return dataclasses.replace(load_profile(gpu, kernel="monomoe"), units=n, xcds=1)


def _run(cfg: MonoMoeConfig = CFG, gpu: str = "h200", resident: int | None = None) -> Timeline:
    if resident is None:
        return simulate(cfg, load_profile(gpu, kernel="monomoe")).timeline
    return simulate(cfg, _slots(gpu, resident), occupancy=1).timeline


def test_layout_follows_the_design_order() -> None:
    lay = Layout.of(CFG)
    assert (lay.route, lay.sort, lay.shared_gu, lay.gemm1, lay.shared_down, lay.gemm2) == (
        0, 4, 5, 7, 15, 17,
    )  # fmt: skip
    assert lay.items == CFG.items == 25
    assert [lay.kind(i)[0] for i in (3, 4, 6, 14, 16, 24)] == [
        "route", "sort", "shared_gu", "gemm1", "shared_down", "gemm2",
    ]  # fmt: skip
    bad = Layout.of(dataclasses.replace(CFG, bad_order=True))
    assert (bad.gemm2, bad.gemm1, bad.shared_down) == (7, 15, 23)
    assert experts_of(CFG, 1) == (2, 3) and routes(CFG) == [2, 2, 2, 2]


@pytest.mark.parametrize("gpu", ["h200", "mi355x"])
@pytest.mark.parametrize("resident", [1, 2, 3, 4, 6])
def test_finishes_at_every_residency(gpu: str, resident: int) -> None:
    tl = _run(gpu=gpu, resident=resident)
    assert not tl.deadlock
    assert sorted(s.task for c in tl.ctas for s in c.stages) == list(range(25))
    by_label: dict[str, list] = {}
    for c in tl.ctas:
        for p in c.polls:
            by_label.setdefault(p.label, []).append(p)
    puts: dict[tuple[str, int], list[float]] = {}
    for c in tl.ctas:
        for p in c.puts:
            puts.setdefault((p.region, p.first), []).append(p.time)
    # the sort (ticket 4) passed TOPK >= 4 only after the 4th top-k's add
    (sort,) = by_label["TOPK"]
    assert sort.task == 4 and sort.satisfied >= sorted(puts[("TOPK", 0)])[3]
    # every gemm1 tile polled the routed flag after the sort put it (its only put)
    (routed,) = puts[("ROUTED", 0)]
    assert sorted(p.task for p in by_label["ROUTED"]) == list(range(7, 15))
    assert all(p.satisfied > routed for p in by_label["ROUTED"])
    # gemm2 of expert e polled both its gemm1 tiles, H1[2e] and H1[2e + 1]
    for e in range(4):
        h1 = max(puts[("H1", 2 * e)] + puts[("H1", 2 * e + 1)])
        assert sorted(p.task for p in by_label[f"H1[{e}]"]) == [17 + 2 * e, 18 + 2 * e]
        assert all(p.satisfied > h1 for p in by_label[f"H1[{e}]"])


def test_one_cta_runs_every_item_in_ticket_order() -> None:
    tl = _run(resident=1)
    assert [s.task for s in tl.ctas[0].stages] == list(range(25))
    assert all(not c.stages for c in tl.ctas[1:])


def test_the_last_tickets_taker_clears_the_counters() -> None:
    tl = _run()
    cleared = {"TICKET", "TOPK", "COUNT"}
    last: dict[tuple[str, int], tuple[float, int]] = {}  # word -> (time, CTA) of its last write
    for c in tl.ctas:
        for p in c.puts:
            key = (p.region, p.first)
            if p.region in cleared and (key not in last or p.time >= last[key][0]):
                last[key] = (p.time, c.cta)
    assert set(last) == {("TICKET", 0), ("TOPK", 0)} | {("COUNT", e) for e in range(4)}
    takers = {cta for _, cta in last.values()}
    assert len(takers) == 1  # one CTA cleared them all: the one that took ticket 25 + 4 - 1
    # its zeroes land after every item ended
    assert min(t for t, _ in last.values()) >= max(s.end for c in tl.ctas for s in c.stages)


def test_check_says_why_it_finishes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check", "--kernel", "monomoe", "--gpu", "h200", "--seeds", "1"]) == 0
    out = capsys.readouterr().out
    assert "every wait of its 25 items names a smaller ticket" in out
    assert "at any residency of at least 1 CTA" in out and "PASS" in out
    assert "ABA (a counter reused while awaited): none" in out
    assert "every word zeroed by the launch (TICKET[0], TOPK[0], COUNT[0..3])" in out
    assert main(["check", "--kernel", "monomoe", "--seeds", "1", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["tickets"][0]["finishes_at_any_residency"] is True
    assert all(w["value"] == 0 and w["cleared"] for w in rep["leftover"])


def test_bad_order_is_a_deadlock_with_its_chain(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--kernel", "monomoe", "--gpu", "h200", "--seeds", "1"]
    assert main([*argv, "--bad-order", "true"]) == 1
    out = capsys.readouterr().out
    assert "item 7 polls H1[0], written by item 15 (a larger ticket)" in out
    assert "item 7 (held by resident CTA 1 of 1) polls H1[0]" in out
    assert "item 15 is not taken" in out and "engine at residency 1" in out
    assert main([*argv, "--bad-order", "true", "--ctas", "12", "--json"]) == 1
    rep = json.loads(capsys.readouterr().out)
    # 8 gemm2 tiles ahead of their gemm1 tiles: 8 CTAs can all hold gemm2 items; a 9th
    # takes the gemm1 tiles one by one and frees them
    assert rep["tickets"][0]["hangs_at"] == list(range(1, 9))
    assert not _run(dataclasses.replace(CFG, bad_order=True, ctas=12), resident=9).deadlock
    assert _run(dataclasses.replace(CFG, bad_order=True, ctas=12), resident=8).deadlock


def test_no_clear_says_what_the_next_launch_sees(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["check", "--kernel", "monomoe", "--gpu", "h200", "--seeds", "1", "--no-clear", "true"]
    assert main(argv) == 0  # one launch is correct; relaunching it is not simulated
    out = capsys.readouterr().out
    assert "the second launch not run" in out
    assert "TICKET[0] = 29, TOPK[0] = 4, COUNT[0..3] = 2" in out
    assert "the first take returns 29, past the 25 items: no item runs" in out
    assert "item 4 (op 1) passes TOPK[0] >= 4 at once, before its writers" in out


def test_bad_sizes_are_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    for flags, what in (
        (["--top-k", "5"], "top_k = 5 > experts = 4"),
        (["--ctas", "0"], "ctas = 0: 1 to 4096"),
        (["--tiles", "4096", "--experts", "4"], "items"),
        (["--tile-bytes", "-1"], "tile_bytes = -1"),
    ):
        assert main(["simulate", "--kernel", "monomoe", *flags]) == 2
        assert what in capsys.readouterr().err


def test_simulate_timeline_and_perfetto(tmp_path: Path, capsys) -> None:
    out, png = tmp_path / "mm.json", tmp_path / "mm.png"
    argv = ["simulate", "--kernel", "monomoe", "--gpu", "h200", "--out", str(out)]
    assert main([*argv, "--png", str(png), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["kernel"] == "monomoe" and not summary["deadlock"]
    assert [s["stage"] for s in summary["stages"]] == [
        "route", "sort", "shared_gu", "gemm1", "shared_down", "gemm2",
    ]  # fmt: skip
    assert png.stat().st_size > 0
    data = json.loads(out.read_text())
    names = [e["args"]["name"] for e in data["traceEvents"] if e.get("name") == "process_name"]
    assert names == ["worker CTAs"]
    assert any(e.get("cat") == "handoff" for e in data["traceEvents"])
    tl = _run()
    back = from_chrome(json.loads(json.dumps(to_chrome(tl))))
    assert back.meta == tl.meta and back.ctas == tl.ctas


def test_app_figures_show_its_roles_and_stages() -> None:
    from kda_sim.app.bands import grouped_figure, roles_of
    from kda_sim.app.figures import Filter, Layer, timeline_figure

    tl = _run()
    stages = ("route", "sort", "shared_gu", "gemm1", "shared_down", "gemm2")
    flt = Filter(roles=("worker",), stages=stages)
    fig = timeline_figure((Layer("simulated", tl, False),), flt)
    named = [t.name for t in fig.data if t.name in stages]
    assert named == list(stages)  # the kernel's display order
    colors = {t.name: t.marker.color for t in fig.data if t.name in stages}
    assert colors["gemm1"] == "#ff7f0e" and colors["gemm2"] == "#d62728"
    ys = {y for t in fig.data if t.name in stages for y in t.y}
    assert len(ys) == 4  # a row a CTA
    assert roles_of(tl) == ["worker"]
    grouped = grouped_figure((Layer("simulated", tl, False),), flt)
    assert {t.name for t in grouped.data} >= set(stages)
