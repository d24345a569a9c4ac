"""The poll probe runs the K1's own ``_put`` and ``_poll``: each experiment must compile
against their current signatures (sm_90, here without a GPU) with the loads, counts and
sleeps it claims, the traffic ahead of its timed poll, and its readers must read the
stamps it writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("triton")

from lab import poll_probe as pp
from lab.handoff_probe import quantiles
from lab.ptx import sm90_ptx

SIGS = {
    "try_probe": {"scratch": "*i64", "stamps": "*i64", "tag": "i32"},
    "retry_probe": {"scratch": "*i64", "stamps": "*i64", "tag": "i32", "delay_ns": "i32"},
    "traffic_probe": {
        "scratch": "*i64",
        "work": "*fp32",
        "stamps": "*i64",
        "weights": "*fp32",
        "n_chunks": "i32",
        "tag": "i32",
    },
    "fanin_probe": {
        "scratch": "*i64",
        "stamps": "*i64",
        "weights": "*fp32",
        "n_chunks": "i32",
        "tag": "i32",
        "n_prod": "i32",
        "lead_ns": "i32",
    },
}


def _ptx(name: str, **cx: int) -> str:
    return sm90_ptx(getattr(pp, name), SIGS[name], {"ROUNDS": 8} | cx)


@pytest.mark.parametrize("p", [1, 8])
def test_try_polls_p_pairs_a_thread(p: int) -> None:
    ptx = _ptx("try_probe", ROUNDS=8, P=p)
    # the first try and the retry loop: one relaxed load and one CTA-wide count a slot
    assert ptx.count("ld.relaxed.gpu.global.b64") == 2 * p
    assert ptx.count("bar.red.popc") == 2 * p


@pytest.mark.parametrize("sleep", [0, 128])
def test_retry_sleeps_only_when_asked(sleep: int) -> None:
    ptx = _ptx("retry_probe", ROUNDS=8, P=2, SLEEP_NS=sleep)
    # the poller's 2 slots and the releaser's go poll (1 slot), first try and retries
    assert ptx.count("ld.relaxed.gpu.global.b64") == 2 * 2 + 2
    assert ("nanosleep.u32 128" in ptx) == (sleep == 128)


def test_traffic_issues_its_loads_before_the_timed_poll() -> None:
    ptx = _ptx("traffic_probe", ROUNDS=8, STORE_W=0, LOAD_W=4096, STREAM=0)
    loop = ptx[ptx.index("Loop Header") :]
    first_poll = loop.index("ld.relaxed.gpu.global.b64")
    assert loop.index("ld.global") < loop.index("%globaltimer;") < first_poll
    assert loop[:first_poll].count("ld.global") >= 4096 // 256  # every load, not some


def test_traffic_issues_its_stores_before_the_timed_poll() -> None:
    ptx = _ptx("traffic_probe", ROUNDS=8, STORE_W=4096, LOAD_W=0, STREAM=0)
    loop = ptx[ptx.index("Loop Header") :]
    assert loop.index("st.global") < loop.index("%globaltimer;") < loop.index("ld.relaxed")


def test_fanin_consumer_polls_part_shape() -> None:
    ptx = _ptx("fanin_probe", ROUNDS=8, S=4, STREAM=0)
    # [64 producers, 32 pairs] is 8 slots; the producer's ready poll 1
    assert ptx.count("bar.red.popc") == 2 * 8 + 2
    assert "atom" not in ptx  # no stop flag without streaming CTAs


@pytest.mark.parametrize("name", ["traffic_probe", "fanin_probe"])
def test_streaming_ctas_load_weights_until_stopped(name: str) -> None:
    cx = {"STORE_W": 4096, "LOAD_W": 0} if name == "traffic_probe" else {"S": 4}
    ptx = _ptx(name, ROUNDS=8, STREAM=1, **cx)
    assert ptx.count("atom.global.gpu.release.exch.b64") == 1  # the one stop
    assert "ld.volatile.global.b64" in ptx  # the streams re-read the stop cell
    assert "ld.global.v4" in ptx or ptx.count("ld.global.b32") >= 16  # the 16 KB chunks


def _stamps(rounds: int, rows: dict[int, list[tuple[int, int, int, int]]]) -> np.ndarray:
    s = np.zeros((pp.GRID, 4 * rounds), np.int64)
    for cta, recs in rows.items():
        s[cta] = np.asarray(recs, np.int64).ravel()
    return s


def test_retry_reader_and_fit() -> None:
    rounds = 4
    # poller i starts round r at 10000 r, retries r + 1 times at 400 ns each after a
    # 500 ns first try; its releaser put issued 300 ns before the poll was satisfied
    rows: dict[int, list[tuple[int, int, int, int]]] = {}
    for i in range(pp.NPOLL):
        rows[i] = [(10000 * r, 10000 * r + 500 + 400 * (r + 1), r + 1, 0) for r in range(rounds)]
        rows[pp.RELEASER0 + i] = [
            (10000 * r + 200, 10000 * r + 600 + 400 * r, 10000 * r + 600 + 400 * r, 0)
            for r in range(rounds)
        ]
    got = pp.read_retry(_stamps(rounds, rows), rounds)
    assert got["span"][:2] == [1700, 2100]  # rounds 2 and 3 of poller 0
    assert set(got["put_to_seen"]) == {300}
    assert pp.retry_cost(got["span"], got["retries"]) == {"per_retry": 400.0, "intercept": 500.0}
    assert pp.retry_cost([1.0, 2.0], [1, 1]) is None  # no spread in retries: no slope


def test_fanin_reader_takes_the_last_put() -> None:
    rounds, n, s = 3, 3, 2
    rows: dict[int, list[tuple[int, int, int, int]]] = {}
    for p in range(n):  # producer p begins its put at 1000 + 100 p, issued 50 ns later
        rows[p] = [(900, 1000 + 100 * p, 1050 + 100 * p, 0)] * rounds
    for c in range(s):
        rows[pp.CONSUMER0 + c] = [(0, 2000 + c, 2, 0)] * rounds
    got = pp.read_fanin(_stamps(rounds, rows), rounds, n, s, skip=1)
    assert got["last_put_to_seen"] == [750, 750, 751, 751]
    assert got["producer_skew"] == [200, 200]
    assert set(got["put_issue"]) == {50}


def test_report_reads_a_run_and_refuses_other_files(tmp_path, capsys) -> None:
    doc = {
        "env": {"gpu": "x"},
        "rounds": 4,
        "launches": 1,
        "rows": [
            {"experiment": "try", "pairs": 1, "span": quantiles([500.0, 520.0], 1)},
            {"experiment": "traffic", "kind": "stores", "kib": 8, "span": quantiles([900.0], 1)},
        ],
    }
    f = tmp_path / "run.json"
    f.write_text(json.dumps(doc))
    assert pp.main(["--report", str(f)]) == 0
    out = capsys.readouterr().out
    assert "  1 | 510.0" in out and "stores 8, idle | 900.0" in out
    bad = tmp_path / "other.json"
    bad.write_text("{}")
    assert pp.main(["--report", str(bad)]) == 2
    assert "not a poll_probe run" in capsys.readouterr().err


def test_refuses_without_a_gpu_and_keeps_an_existing_out(tmp_path, capsys) -> None:

    out = tmp_path / "probe.json"
    out.write_text("mine")
    assert pp.main(["--out", str(out)]) == 2
    assert out.read_text() == "mine"
    err = capsys.readouterr().err
    assert "exists" in err  # refused before the GPU is looked for


def test_launch_row_warms_once_then_reads_each_launch(monkeypatch) -> None:
    import itertools

    import torch

    monkeypatch.setattr(torch.cuda, "synchronize", lambda: None)  # the CPU stands in
    scratch = torch.ones(8, dtype=torch.int64)
    stamps = torch.zeros(2, 4, dtype=torch.int64)
    seen: list[tuple[int, int]] = []

    def call(tag: int) -> None:  # a "launch": stamps its tag, notes what the scratch held
        seen.append((tag, int(scratch.sum())))
        stamps.fill_(tag)

    row, acc = pp.launch_row(
        {"experiment": "x"},
        call,
        lambda h: {"v": [float(h[0, 0])]},
        launches=3,
        scratch=scratch,
        stamps=stamps,
        tags=itertools.count(2),
        prefill=lambda tag: scratch.__setitem__(0, tag),
    )
    # four launches, a tag each; the scratch zeroed then prefilled before each
    assert seen == [(2, 2), (3, 3), (4, 4), (5, 5)]
    assert acc == {"v": [3.0, 4.0, 5.0]}  # the first launch (it compiles) is not read
    assert row["experiment"] == "x" and row["v"]["median"] == 4.0 and row["v"]["n"] == 3
