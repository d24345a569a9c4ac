"""The spill reading: a price a spill from the capped static builds, per L, and the
ticket build's difference set against the model's and against that price."""

from __future__ import annotations

import json

import pytest

from lab import spill_cost as sc


def _row(R: int, L: int, variant: dict, us: float, spills: int, regs: int = 128) -> dict:
    return {"R": R, "L": L, "variant": variant, "us": us, "spills": spills, "regs": regs}


def _bench(tmp_path, rows: list[dict]):
    f = tmp_path / "kernel_bench_spill.json"
    f.write_text(json.dumps({"variants": rows}))
    return f


def _shape(R: int, L: int, ns_a_spill: float, tickets_us: float, tickets_spills: int):
    base = 40.0 + R + L
    return [
        _row(R, L, {}, base, 0, 123),
        _row(R, L, {"maxnreg": 112}, base + 20 * ns_a_spill / 1e3, 20, 112),
        _row(R, L, {"maxnreg": 96}, base + 60 * ns_a_spill / 1e3, 60, 96),
        _row(R, L, {"kda_tickets": True, "ticket_unroll": 3}, base + tickets_us, tickets_spills),
    ]


def test_prices_a_spill_per_l_and_reads_the_ticket_build() -> None:
    rows = _shape(1, 1, 10.0, 1.5, 30) + _shape(2, 1, 10.0, 2.0, 30) + _shape(1, 2, 25.0, 3.0, 70)
    shapes = sc.by_shape(rows, "x")
    res = sc.analyse(shapes, {(1, 1): 0.25, (1, 2): 0.5})
    assert res["us_a_spill"][1] == pytest.approx(0.010)
    assert res["us_a_spill"][2] == pytest.approx(0.025)
    r11, r21, r12 = res["rows"]  # sorted: (1, 1), (1, 2), (2, 1)... by (R, L)
    assert (r11["R"], r11["L"]) == (1, 1)
    assert r11["measured_us"] == pytest.approx(1.5)
    assert r11["unexplained_us"] == pytest.approx(1.25)
    assert r11["spill_priced_us"] == pytest.approx(0.30)
    assert (r21["R"], r21["L"]) == (1, 2) and r21["spill_priced_us"] == pytest.approx(1.75)
    assert "model_us" not in r12  # the model was not asked about 2 x 1 here
    text = sc.table(res)
    assert (
        "| 1 x 1 | 42.00 (0) | +0.20 (20) | +0.60 (60) | +1.50 (30) | +0.25 | +1.25 | +0.30 |"
        in text
    )
    assert "L = 1: 10.0 ns" in text and "L = 2: 25.0 ns" in text


def test_names_builds() -> None:
    assert sc.build_name({}) == "static"
    assert sc.build_name({"maxnreg": 128}) == "static"
    assert sc.build_name({"maxnreg": 96}) == "cap96"
    assert sc.build_name({"kda_tickets": True, "ticket_unroll": 3}) == "tickets"


def test_no_spills_no_price() -> None:
    assert sc.slope([(0.0, 0.3)]) is None


def test_refuses_a_bench_without_the_builds(tmp_path, capsys) -> None:
    rows = _shape(1, 1, 10.0, 1.5, 30)[:2]  # no ticket build
    assert sc.main(["--bench", str(_bench(tmp_path, rows)), "--no-model"]) == 2
    assert "1x1" in capsys.readouterr().err
    other = tmp_path / "other.json"
    other.write_text("[]")
    assert sc.main(["--bench", str(other), "--no-model"]) == 2
    assert "not a kernel_bench file" in capsys.readouterr().err


def test_main_prints_the_table(tmp_path, capsys) -> None:
    out = tmp_path / "res.json"
    rc = sc.main(
        ["--bench", str(_bench(tmp_path, _shape(1, 1, 10.0, 1.5, 30))), "--json", str(out)]
    )
    assert rc == 0
    assert "| 1 x 1 |" in capsys.readouterr().out
    res = json.loads(out.read_text())
    assert res["rows"][0]["model_us"] == pytest.approx(0.26, abs=0.05)  # the model's take
