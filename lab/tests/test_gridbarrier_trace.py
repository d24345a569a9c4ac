"""lab/gridbarrier_trace.py: the grid barrier probe's stamps as a measured gridbarrier
timeline that ``kda-sim compare`` and ``kda-sim calibrate`` read, and stamps that are
not a whole launch of their configuration refused, named."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kda_sim.cli import main as kda_sim
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import read_chrome
from kda_sim.timeline.model import Timeline
from lab import gridbarrier_trace as gt

T0 = 1_700_000_000_000  # a globaltimer reading: ns since an epoch, far from 0
SMS = 132


def _stamps(tl: Timeline, rounds: int) -> np.ndarray:
    """A simulated launch's records as the probe's kernel stamps them."""
    ctas = len(tl.ctas)
    s = np.zeros((ctas, gt.record_words(rounds)), np.int64)
    puts = sorted((p.time, c.cta, p.task) for c in tl.ctas for p in c.puts)
    old = {}  # (cta, round) -> what its add returned: the adds in their order
    for r in range(rounds):
        for n, (_, c, _) in enumerate(x for x in puts if x[2] == r):
            old[(c, r)] = r * ctas + n
    for c in tl.ctas:
        row = s[c.cta]
        row[gt.SMID] = c.unit
        sp = {(st.name, st.task): st for st in c.stages}
        for r in range(rounds + 1):
            w = gt.work_slot(r)
            row[w : w + 2] = T0 + sp[("work", r)].start, T0 + sp[("work", r)].end
        for p in c.polls:
            r, b = p.task, gt.barrier_slot(rounds, p.task)
            row[b + gt.B_BEGIN] = T0 + sp[("barrier", r)].start
            row[b + gt.B_OLD] = old[(c.cta, r)]
            row[b + gt.B_FIRST] = T0 + p.first_issue
            row[b + gt.B_SAT] = T0 + p.satisfied
            row[b + gt.B_TRIES] = p.retries + 1
            row[b + gt.B_END] = T0 + sp[("barrier", r)].end
    return s


def _near(got: list, want: list) -> None:
    np.testing.assert_allclose(np.asarray(got, float), np.asarray(want, float), atol=1.0)


@pytest.fixture(scope="module")
def sim() -> Timeline:
    return simulate(
        GridBarrierConfig(ctas=8, rounds=2), load_profile("h100", "gridbarrier")
    ).timeline


def test_a_simulated_launch_round_trips(sim: Timeline) -> None:
    tl = gt.timeline_of(_stamps(sim, 2), 8, 2, gpu="NVIDIA H100 80GB HBM3", sms=SMS)
    assert tl.meta.kernel == "gridbarrier" and tl.meta.source == "measured"
    assert tl.meta.params == {"ctas": 8, "rounds": 2, "broken": False, "last_resets": False}
    assert tl.meta.measured_build() is None  # not taken for our K1's trace
    # the stamps are whole ns (the simulation's times are not): 1 ns apart at most
    for a, b in zip(sim.ctas, tl.ctas, strict=True):
        assert [(s.name, s.task) for s in a.stages] == [(s.name, s.task) for s in b.stages]
        _near([(s.start, s.end) for s in b.stages], [(s.start, s.end) for s in a.stages])
        assert [(p.label, p.retries, p.producer) for p in a.polls] == [
            (p.label, p.retries, p.producer) for p in b.polls
        ]
        waits = [(p.first_issue, p.satisfied, p.put_time) for p in a.polls]
        _near([(p.first_issue, p.satisfied, p.put_time) for p in b.polls], waits)
        _near([b.unit, b.start, b.end], [a.unit, a.start, a.end])
    assert tl.makespan == pytest.approx(sim.makespan, abs=1)


def _launch(c: int, r: int, seed: int) -> np.ndarray:
    """A launch's records, from a simulated launch on a profile with its own costs (not
    the one compare simulates on), with jitter (CTAs apart)."""
    prof = load_profile("h100", "gridbarrier").with_params(**{"cost_gb.work": (1800.0, 0.0)})
    sim = simulate(GridBarrierConfig(ctas=c, rounds=r), prof, seed=seed, jitter=0.1).timeline
    return _stamps(sim, r)


def _doc(launches: int = 2) -> dict:
    """A probe run's document (what ``lab.gridbarrier_probe --out`` writes)."""
    rows = []
    for c, r in ((8, 2), (12, 3)):
        st = [_launch(c, r, 10 * c + i).tolist() for i in range(launches + 1)]
        rows.append({"ctas": c, "rounds": r, "compile_launch": st[0], "launches": st[1:]})
    env = {"gpu": "NVIDIA H100 80GB HBM3", "sms": SMS, "triton": "3.6.0"}
    return {"env": env, "work_iters": 512, "nbytes": 32768, "max_tries": 1 << 22, "rows": rows}


def test_compare_and_calibrate_read_the_traces(tmp_path: Path, capsys) -> None:
    doc = _doc()
    run = tmp_path / "run.json"
    run.write_text(json.dumps(doc))
    assert gt.main([str(run), "--dir", str(tmp_path)]) == 0
    names = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("gridbarrier_*"))
    assert names == [
        "cold/gridbarrier_ctas12_rounds3_0.json",
        "cold/gridbarrier_ctas8_rounds2_0.json",
        "gridbarrier_ctas12_rounds3_0.json",
        "gridbarrier_ctas12_rounds3_1.json",
        "gridbarrier_ctas8_rounds2_0.json",
        "gridbarrier_ctas8_rounds2_1.json",
    ]
    tl = read_chrome(tmp_path / names[-1])
    assert tl.meta.gpu == "NVIDIA H100 80GB HBM3" and tl.meta.extra["sms"] == SMS
    assert tl.meta.extra["after_compile"] is False and tl.meta.measured_build() is None
    capsys.readouterr()
    # compare: the trace's GPU's profile (h100), every stage matched, the same kinds of
    # steps on the critical path, conforming
    trace = tmp_path / "gridbarrier_ctas8_rounds2_1.json"
    assert kda_sim(["compare", str(trace), "--kernel", "gridbarrier", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["kernel"] == "gridbarrier" and d["sim"] == "simulated on h100"
    assert d["conformance"]["conforms"]
    cmp = d["comparison"]
    assert cmp["matched"] == 8 * (2 * 2 + 1) and cmp["only_real"] == cmp["only_sim"] == 0
    assert cmp["critical_path"]["kinds"]["agree"]
    # calibrate: the work's cost found from the traces (1800 ns each), one held out
    fit = tmp_path / "fit.json"
    train = [str(tmp_path / "gridbarrier_ctas8_rounds2_0.json"), str(trace)]
    held = str(tmp_path / "gridbarrier_ctas12_rounds3_0.json")
    argv = ["calibrate", *train, "--kernel", "gridbarrier", "--gpu", "h100", "--out", str(fit)]
    assert kda_sim([*argv, "--holdout", held, "--budget", "4", "--no-progress"]) == 0
    work = json.loads(fit.read_text())["costs"]["gb.work"]
    assert 1600 < work[0] < 2000 and work[1] == 0.0  # the default is 1000
    capsys.readouterr()
    # compare with the fit: the makespan within 10 %
    assert (
        kda_sim(["compare", held, "--kernel", "gridbarrier", "--profile", str(fit), "--json"]) == 0
    )
    assert abs(json.loads(capsys.readouterr().out)["comparison"]["makespan_err"]) < 0.10


def test_the_report_shows_each_configuration_and_the_cold_launch_apart() -> None:
    rows = gt.summarize(_doc(launches=3))
    assert [(r["ctas"], r["rounds"], r["cold"], r["launches"]) for r in rows] == [
        (8, 2, True, 1),
        (8, 2, False, 3),
        (12, 3, True, 1),
        (12, 3, False, 3),
    ]
    assert all(1500 < r["work"] < 2100 and r["tries"] >= 1 for r in rows)
    assert "| 8 | 2 (first after compile) | 1 |" in gt.report(_doc(launches=1))


def _bad(s: np.ndarray, what: str, said: str, ctas: int = 8) -> None:
    with pytest.raises(InvalidInput, match=said) as e:
        gt.timeline_of(s, ctas, 2, gpu="H100", sms=SMS, where="t.json")
    assert e.value.what == what and str(e.value).startswith("t.json: ")


def test_stamps_that_disagree_with_the_configuration_are_refused(sim: Timeline) -> None:
    s = _stamps(sim, 2)
    _bad(s[:7], "ctas", "7 CTA records, the configuration has ctas = 8")
    _bad(s, "ctas", "8 CTA records, the configuration has ctas = 9", ctas=9)
    _bad(s[:, : gt.record_words(1)], "rounds", "words a CTA")
    b1 = gt.barrier_slot(2, 1)
    t = s.copy()
    t[3, b1 + gt.B_END] = 0  # round 1's barrier of CTA 3 never ended
    _bad(t, "rounds", "CTA 3: barrier 1 end not stamped")
    t = s.copy()
    t[3, gt.work_slot(2)] = t[3, b1 + gt.B_BEGIN] - 1  # the last work before the barrier
    _bad(t, "order", "CTA 3: work 2 begin")
    t = s.copy()
    t[5, b1 + gt.B_OLD] = t[6, b1 + gt.B_OLD]  # two CTAs' adds returned one count
    _bad(t, "counter", "round 1: the adds returned")
    t = s.copy()
    t[2, gt.GAVE_UP] = 1
    _bad(t, "gave up", "CTA 2 gave up 1 wait")
    t = s.copy()
    t[2, gt.SMID] = SMS
    _bad(t, "smid", f"CTA 2: SM {SMS}, the GPU has {SMS}")


def test_a_run_with_a_refused_launch(tmp_path: Path, capsys) -> None:
    doc = _doc(launches=1)
    doc["rows"][0]["launches"][0][1][gt.GAVE_UP] = 1
    run = tmp_path / "run.json"
    run.write_text(json.dumps(doc))
    assert gt.main([str(run), "--dir", str(tmp_path)]) == 2  # nothing written
    assert "CTA 1 gave up" in capsys.readouterr().err
    assert not list(tmp_path.rglob("gridbarrier_*"))
    assert "refused: gridbarrier_ctas8_rounds2_0.json: CTA 1 gave up" in gt.report(doc)
    assert gt.main([str(run), "--dir", str(tmp_path), "--skip-bad"]) == 0
    assert "left out gridbarrier_ctas8_rounds2_0.json" in capsys.readouterr().err
    assert len(list(tmp_path.rglob("gridbarrier_*"))) == 3
    # nothing overwritten: a second conversion into the same folder is refused
    assert gt.main([str(run), "--dir", str(tmp_path), "--skip-bad"]) == 2
    assert "exists" in capsys.readouterr().err
    run.write_text("{}")
    assert gt.main([str(run), "--dir", str(tmp_path)]) == 2
    assert "not a gridbarrier_probe run" in capsys.readouterr().err
