"""The ticket experiment's report (lab/ticket_probe_report.py), on a bundled real trace and
copies of it changed where the report must see it (no GPU): k.stage of a CTA's first task
by role, the gemv CTAs' busy time, the takes, and the untraced times by build."""

from __future__ import annotations

import json
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline import Timeline
from lab.ticket_k1_report import bench_us as k1_bench_us
from lab.ticket_probe_report import (
    BUILDS,
    after_mix_ns,
    bench_us,
    build_of,
    busy_ns,
    effects,
    first_kstage_ns,
    main,
    report,
    tables,
)

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R2_L2.json.gz"
ktrace = pytest.importorskip("kda_kernel.triton.trace")  # the writer (needs numpy only)


def _slower_first_kstage(tl: Timeline, ns: float) -> Timeline:
    """``tl`` with each CTA's first k.stage ``ns`` longer (its end later) and one take of
    300 ns before it: what a build whose item waits on a take would show."""
    takes = []
    for c in tl.ctas:
        ks = [s for s in c.stages if s.name == "k.stage"]
        if not ks:
            continue
        first = min(ks, key=lambda s: s.start)
        c.stages[c.stages.index(first)] = replace(first, end=first.end + ns)
        takes.append([c.cta, int(first.start) - 300, int(first.start), first.task])
    tl.meta.extra["ticket_takes"] = takes
    return tl


def _run_dir(tmp_path: Path) -> Path:
    s = tmp_path / "s"
    for name in ("static", "static_take"):
        d = s / name / "warm"
        d.mkdir(parents=True)
        for i in range(2):
            tl = read_kernel_trace(TRACE)
            if name == "static_take":
                tl = _slower_first_kstage(tl, 400.0)
            ktrace.write(tl, d / f"k1_R2_L2_{i}.json")
    return s


def test_first_kstage_and_busy_are_read_by_role() -> None:
    tl = read_kernel_trace(TRACE)
    ks = first_kstage_ns(tl)
    # 2x2: 192 tasks on CTAs 0..191, so every attn CTA (0..55) and CTAs 56..191 of the gemv
    assert len(ks["attn"]) == 56 and len(ks["gemv"]) == 136
    assert all(x > 0 for x in ks["attn"] + ks["gemv"])
    gemv0 = busy_ns(tl, "gemv0")
    assert len(gemv0) == 197  # CTAs 56..252
    spans = [s.end - s.start for c in tl.ctas for s in c.stages if s.name == "gemv0"]
    assert all(b <= s for b, s in zip(gemv0, spans, strict=True))  # waits come off
    load_x = busy_ns(tl, "load_x")
    raw = [s.end - s.start for c in tl.ctas for s in c.stages if s.name == "load_x"]
    assert sum(load_x) < sum(raw)  # the XRDY poll's wait is taken out


def test_report_sets_the_builds_apart_shape_by_shape(tmp_path: Path) -> None:
    s = _run_dir(tmp_path)
    bench = tmp_path / "kernel_bench_probe.json"
    times = {"static": 57.8, "static_take": 58.1, "tickets": 60.1, "tickets_static": 59.0}
    rows = [{"R": 2, "L": 2, "variant": BUILDS[b], "us": us} for b, us in times.items()]
    rows.append({"R": 2, "L": 2, "variant": {"nw_first": False}, "us": 1.0})  # not a build
    bench.write_text(json.dumps({"variants": rows}))
    assert bench_us(bench) == {(2, 2, b): us for b, us in times.items()}
    rep = report(s, bench)
    r = rep["shapes"]["2x2"]
    st, tk = r["static"], r["static_take"]
    assert st["launches"] == tk["launches"] == 2
    for role in ("attn", "gemv"):
        assert tk[f"kstage_{role}_ns"] == pytest.approx(st[f"kstage_{role}_ns"] + 400.0)
    assert st["gemv0_busy_us"] == tk["gemv0_busy_us"]
    assert st["take_ns"] is None and tk["take_ns"] == 300.0
    want = statistics.median(first_kstage_ns(read_kernel_trace(TRACE))["attn"])
    assert st["kstage_attn_ns"] == want
    assert r["tickets"] == {"untraced_us": 60.1}  # timed, not traced
    out = tables(rep)
    assert "| 2 x 2 | 57.80 | 58.10 | 60.10 | 59.00 |" in out
    assert f"| 2 x 2 | {want:.0f} | {want + 400:.0f} | - | - |" in out
    # the readings: the take's (static_take - static), the placement's (tickets -
    # tickets_static: timed only, so k.stage has none)
    assert effects(r, "kstage_attn_ns") == {"take": pytest.approx(400.0), "placement": None}
    assert effects(r, "untraced_us") == pytest.approx({"take": 0.3, "placement": 1.1})
    assert "| 2 x 2 | +0.30 / +1.10 | +400 / - |" in out


def test_the_k1_report_leaves_the_probe_rows_out(tmp_path: Path) -> None:
    bench = tmp_path / "b.json"
    rows = [
        {"R": 1, "L": 1, "variant": BUILDS[b], "us": us}
        for b, us in (
            ("static", 50.0),
            ("static_take", 50.4),
            ("tickets", 51.2),
            ("tickets_static", 50.9),
        )
    ]
    bench.write_text(json.dumps({"variants": rows}))
    assert k1_bench_us(bench) == {(1, 1, "static"): 50.0, (1, 1, "kda_tickets"): 51.2}
    assert build_of({"kda_tickets": True}) is None


def test_bad_input_exits_2_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--dir", str(tmp_path)]) == 2
    assert "no traces" in capsys.readouterr().err
    bad = tmp_path / "bench.json"
    bad.write_text("{}")
    assert main(["--dir", str(tmp_path), "--bench", str(bad)]) == 2
    assert "kernel_bench" in capsys.readouterr().err
    s = _run_dir(tmp_path)
    out = tmp_path / "rep.json"
    assert main(["--dir", str(s), "--json", str(out)]) == 0
    assert json.loads(out.read_text())["shapes"]["2x2"]["static"]["launches"] == 2
    assert main(["--dir", str(s), "--json", str(out)]) == 2  # not overwritten


def test_the_time_after_mix_counts_what_runs_before_the_stage() -> None:
    tl = read_kernel_trace(TRACE)
    base = after_mix_ns(tl)
    assert len(base) == 56 and all(x > 0 for x in base)
    slower = after_mix_ns(_slower_first_kstage(read_kernel_trace(TRACE), 400.0))
    assert [b - a for a, b in zip(base, slower, strict=True)] == [400.0] * 56
