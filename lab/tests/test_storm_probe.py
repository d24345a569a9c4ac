"""The storm probe runs the K1's own ``_put`` and ``_poll``: each experiment must compile
against their current signatures (sm_90, here without a GPU) with the polls and back-off
it claims and the stores ahead of its put, and its readers must read the stamps it
writes."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("triton")

from lab import storm_probe as sp
from lab.handoff_probe import quantiles
from lab.ptx import sm90_ptx

SIGS = {
    "storm_probe": {
        "scratch": "*i64",
        "stamps": "*i64",
        "tag": "i32",
        "lead_ns": "i32",
        "wgt0": "i32",
        "flag0": "i32",
    },
    "stores_probe": {
        "scratch": "*i64",
        "work": "*fp32",
        "stamps": "*i64",
        "tag": "i32",
        "n_prod": "i32",
        "lead_ns": "i32",
    },
    "ring_probe": {
        "scratch": "*i64",
        "work": "*fp32",
        "stamps": "*i64",
        "tag": "i32",
        "n": "i32",
        "lead_ns": "i32",
    },
}


def _ptx(name: str, **cx: int) -> str:
    return sm90_ptx(getattr(sp, name), SIGS[name], cx)


@pytest.mark.parametrize(("wgt", "flags"), sp.BACKDROPS)
def test_storm_polls_what_each_backdrop_claims(wgt: int, flags: int) -> None:
    ptx = _ptx("storm_probe", ROUNDS=8, S=4, WGT=wgt, FLAGS=flags)
    # the consumer's PART poll ([64, 32]: 8 slots) and the producers' ready poll (1 slot),
    # first try and retries; WGT's [16, 16] poll 1 slot; the spinners' 256 lanes 1 slot
    slots = 8 + 1 + wgt + flags
    assert ptx.count("bar.red.popc") == 2 * slots
    # only the spinners back off, as the gemv CTAs' XRDY poll does
    assert ("nanosleep.u32 128" in ptx) == bool(flags)


def test_stores_issue_before_the_put() -> None:
    ptx = _ptx("stores_probe", ROUNDS=8, STORE_W=2048)
    first = ptx.index("st.global.b32")
    # every store (2048 words over 256 threads), then the put's stamp, then its pairs
    assert ptx.count("st.global.b32") == 2048 // 256
    stamp = ptx.index("%globaltimer;", first)
    assert stamp < ptx.index("st.global.b64", first)
    assert "st.global.b32" not in ptx[stamp:]


@pytest.mark.parametrize("p", [1, 8])
def test_ring_stores_puts_then_polls_p_pairs(p: int) -> None:
    ptx = _ptx("ring_probe", ROUNDS=8, STORE_W=2048, P=p)
    assert ptx.count("bar.red.popc") == 2 * p  # its one poll: first try and retries
    assert ptx.count("st.global.b32") == 2048 // 256
    first = ptx.index("st.global.b32")
    assert first < ptx.index("st.global.b64", first) < ptx.index("ld.relaxed", first)


def _stamps(rounds: int, rows: dict[int, list[tuple[int, int, int, int]]]) -> np.ndarray:
    s = np.zeros((sp.GRID, 4 * rounds), np.int64)
    for cta, recs in rows.items():
        s[cta] = np.asarray(recs, np.int64).ravel()
    return s


def test_storm_reader_takes_the_last_put_and_wgt() -> None:
    rounds, s = 3, 2
    rows: dict[int, list[tuple[int, int, int, int]]] = {}
    for p in range(sp.NPROD):  # producer p puts at 1000 + p, issued 10 ns later
        rows[p] = [(900, 1000 + p, 1010 + p, 3000 + p)] * rounds
    for c in range(s):  # consumer c sees PART at 2000 + c, puts WGT by 2500 + c
        rows[sp.CONSUMER0 + c] = [(0, 2000 + c, 3, 2500 + c)] * rounds
    got = sp.read_storm(_stamps(rounds, rows), rounds, s, True, skip=1)
    last = 1010 + sp.NPROD - 1
    assert got["last_put_to_seen"] == [2000 - last, 2000 - last, 2001 - last, 2001 - last]
    assert got["producer_skew"] == [sp.NPROD - 1] * 2
    assert min(got["wgt_put_to_seen"]) == 3000 - 2501
    assert "wgt_put_to_seen" not in sp.read_storm(_stamps(rounds, rows), rounds, s, False)


def test_stores_reader_pairs_consumer_and_producer() -> None:
    rounds, n = 3, 2
    rows: dict[int, list[tuple[int, int, int, int]]] = {}
    for p in range(n):  # stores 100 ns, then the put issued 20 ns later
        rows[p] = [(0, 500, 600 + p, 620 + p)] * rounds
        rows[sp.CONSUMER0 + p] = [(0, 1500 + 10 * p, 1, 0)] * rounds
    got = sp.read_stores(_stamps(rounds, rows), rounds, n, skip=1)
    assert sorted(set(got["put_to_seen"])) == [880, 889]
    assert set(got["store_issue"]) == {100, 101}
    assert set(got["put_issue"]) == {20}


def test_ring_reader_pairs_each_cta_with_the_next() -> None:
    rounds, n = 3, 3
    # CTA i stores from 100 i, its put issued at 100 i + 40, sees the next one's at 1000 + i
    # after i retries
    rows = {i: [(100 * i, 100 * i + 40, 1000 + i, i)] * rounds for i in range(n)}
    got = sp.read_ring(_stamps(rounds, rows), rounds, n, skip=1)
    assert got["span"][:2] == [960, 960]  # CTA 0: seen 1000, its own put 40
    # CTA 0 polls CTA 1's (put 140), CTA 1 CTA 2's (240); CTA 2's poll began after CTA 0's
    # put (40), so it does not count
    assert got["put_to_seen"] == [860, 860, 761, 761]
    assert got["per_try"][2:4] == [861 / 2, 861 / 2]  # CTA 1: 861 ns over 2 tries
    assert got["once"] == [960, 960]  # CTA 0 passed at once
    assert set(got["store_put_issue"]) == {40}


def test_report_reads_a_run_and_refuses_other_files(tmp_path, capsys) -> None:
    doc = {
        "env": {"gpu": "x"},
        "rounds": 4,
        "launches": 1,
        "rows": [
            {
                "experiment": "storm",
                "tokens": 16,
                "wgt": 1,
                "flags": 1,
                "last_put_to_seen": quantiles([2000.0, 2100.0], 1),
                "span": quantiles([3000.0], 1),
                "retries": quantiles([4.0], 1),
                "producer_skew": quantiles([64.0], 1),
                "wgt_put_to_seen": quantiles([700.0], 1),
            },
            {
                "experiment": "ring",
                "kib": 32,
                "pairs": 8,
                "ctas": 192,
                "span": quantiles([1500.0], 1),
                "put_to_seen": quantiles([1200.0], 1),
                "retries": quantiles([2.0], 1),
                "per_try": quantiles([500.0], 1),
                "once": quantiles([900.0], 1),
                "store_put_issue": quantiles([450.0], 1),
            },
            {
                "experiment": "stores",
                "kib": 32,
                "producers": 192,
                "put_to_seen": quantiles([1400.0], 1),
                "store_issue": quantiles([300.0], 1),
                "put_issue": quantiles([30.0], 1),
            },
        ],
    }
    f = tmp_path / "run.json"
    f.write_text(json.dumps(doc))
    assert sp.main(["--report", str(f)]) == 0
    out = capsys.readouterr().out
    assert "16, wgt+flags | 2050.0 | 3000.0 | 4.0 | 64.0 | 700.0" in out
    assert "32, 8, 192 | 900.0 (900.0) | 500.0 | 1200.0 | 2.0 | 450.0" in out
    assert "32, 192 | 1400.0 (1400.0..1400.0) | 300.0 | 30.0" in out
    bad = tmp_path / "other.json"
    bad.write_text("{}")
    assert sp.main(["--report", str(bad)]) == 2
    assert "not a storm_probe run" in capsys.readouterr().err


def test_refuses_bad_arguments_and_keeps_an_existing_out(tmp_path, capsys) -> None:
    out = tmp_path / "probe.json"
    out.write_text("mine")
    assert sp.main(["--out", str(out), "--rounds", "3"]) == 2
    assert sp.main(["--out", str(out)]) == 2
    assert out.read_text() == "mine"
    assert "exists" in capsys.readouterr().err
