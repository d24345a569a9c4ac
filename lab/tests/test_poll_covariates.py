"""The poll covariate reader: each site's code facts as kernel/triton writes them, a try's
cost read against the polls that passed at once, the regression, and one bundled trace
read whole."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from lab import poll_covariates as pc

TRACE = Path(__file__).resolve().parents[2] / "traces" / "k1_h200_R1_L1.json.gz"


def test_site_code_reads_the_kernels_poll_tensors_and_back_off() -> None:
    assert pc.site_code("gate", "PART", 1008, 1) == ("gate PART", 8, 0)
    assert pc.site_code("k.conv", "PROJ", 48, 1) == ("k.conv PROJ", 1, pc.SLEEP_NS)
    assert pc.site_code("k.gates", "PROJ", 512, 4) == ("k.gates PROJ f_a", 8, pc.SLEEP_NS)
    assert pc.site_code("k.gates", "PROJ", 4, 4) == ("k.gates PROJ beta", 1, 0)
    # [2 LP, 128]: one lane a thread at L = 1, four at L = 4
    assert pc.site_code("k.gates", "QK", 256, 1)[1] == 1
    assert pc.site_code("k.gates", "QK", 1024, 4)[1] == 4
    # [64, next_pow2(4 L)]: replicated at L = 1, four pairs a thread at L = 4
    assert pc.site_code("mix", "MSQ", 56, 1)[1] == 1
    assert pc.site_code("mix", "MSQ", 896, 4)[1] == 4


def _row(shape: str, site: str, span: float, retries: int, **kw: float) -> dict:
    return {"shape": shape, "site": site, "span": span, "retries": retries} | kw


def test_a_try_is_read_against_the_polls_of_its_site_and_trace_that_passed_at_once() -> None:
    rows = [
        _row("1x1", "a", 400, 0),
        _row("1x1", "a", 600, 0),  # base 500
        _row("1x1", "a", 1700, 2),  # (1700 - 500) / 2
        _row("2x2", "a", 1500, 2),  # no base in 2x2: pooled, every trace's (400, 600, 1100)
        _row("3x3", "a", 1100, 0),
        _row("3x3", "a", 2300, 1),  # its own trace's: 1100
        _row("1x1", "b", 900, 1),  # no base for b in any trace: left out
    ]
    assert [t["try_ns"] for t in pc.try_costs(rows, pooled=True)] == [600.0, 450.0, 1200.0]
    # the prices' reading keeps to the poll's own trace: 2x2's has no base there
    assert [t["try_ns"] for t in pc.try_costs(rows)] == [600.0, 1200.0]


def test_r2_is_one_on_a_line_and_finds_its_coefficients() -> None:
    x = np.arange(10.0)
    fit, coef = pc.r2(3.0 + 2.0 * x, [x])
    assert fit == pytest.approx(1.0)
    assert coef == pytest.approx([3.0, 2.0])
    noise = np.array([1.0, -1.0] * 5)
    assert pc.r2(noise, [x])[0] < 0.1


def test_one_bundled_trace_every_poll_with_its_covariates() -> None:
    rows = pc.poll_rows(TRACE)
    from kda_sim.compare.counterpart import read_k1_trace

    tl = read_k1_trace(TRACE)
    assert len(rows) == sum(len(c.polls) for c in tl.ctas)
    gemv_ctas = sum(1 for c in tl.ctas if any(s.name == "gemv0" for s in c.stages))
    for r in rows:
        assert r["span"] >= 0 and r["retries"] >= 0
        assert 0 <= r["gemv_streaming"] <= gemv_ctas
        assert 0 <= r["sm_mate_streaming"] <= 1  # two CTAs an SM
        assert r["same_label_polls"] >= 1  # itself
    # XRDY polls start before any gemv streams; the kda tasks' polls on attn CTAs run
    # while the gemv CTAs stream
    assert all(r["gemv_streaming"] == 0 for r in rows if r["site"] == "load_x XRDY")
    assert any(r["gemv_streaming"] > 0 for r in rows if r["site"] == "k.conv PROJ")
    waited = [r for r in rows if r["retries"] > 0 and r["put_to_seen"] is not None]
    assert waited and all(r["put_to_seen"] > 0 for r in waited)
    sites = {s["site"]: s for s in pc.site_table(rows)}
    assert sites["k.conv PROJ"]["sleep_ns"] == pc.SLEEP_NS
    assert sites["mix WGT"]["try_ns"] is not None


def test_prices_recover_a_try_and_a_back_off_laid_into_the_polls() -> None:
    # tries of 350 ns a round trip, 30 ns a pair a thread past the first, 250 ns a back-off
    rows = []
    for shape in ("1x1", "2x2"):
        for site, lanes, sleep in (("a", 1, 0), ("b", 8, 0), ("c", 1, 128), ("d", 8, 128)):
            lat = 350 + 30 * (lanes - 1)
            gap = 250 if sleep else 0
            common = {"lanes": lanes, "sleep_ns": sleep}
            rows.append(_row(shape, site, lat, 0, **common))
            for n in (1, 2, 5):
                rows.append(_row(shape, site, lat + n * (lat + gap), n, **common))
    p = pc.try_prices(rows)
    assert p["poll"] == pytest.approx(350)
    assert p["poll_lane"] == pytest.approx(30)
    assert p["backoff"] == pytest.approx(250)
