"""The unrolled ticket build's code share fitted to untraced times, each shape held out
(lab/ticket_code_fit.py), on a bench the model itself "measured" with a known share: the
held-out predictions meet it and the fit finds the share; the bench's other builds are
left out and a shape without both builds is refused; on a linear stand-in for the model
whose shapes hardly tell two terms apart, the fit keeps every term a cost (>= 0)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from kda_kernel.triton.defaults import default_config
from kda_sim.engine import simulate
from kda_sim.kernels.k1.code_share import with_code_share
from kda_sim.machine import load_profile
from lab.ticket_code_fit import DEFAULT_FORM, FORMS, fit, main, run, table, untraced
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


class LinearModel:
    """A stand-in for ``Model``: the difference (us) linear in the share (ns), ``f0 + jac
    share``, one row a shape, one column a term of the default form."""

    def __init__(self, jac: np.ndarray, f0: np.ndarray) -> None:
        self.jac, self.f0 = jac, f0
        self.terms = [next(iter(d)) for d in FORMS[DEFAULT_FORM]]

    def diff(self, shape: tuple[int, int], share: dict[str, float]) -> float:
        i = SHAPES.index(shape)
        return float(self.f0[i] + self.jac[i] @ np.array([share[t] for t in self.terms]))


F0 = np.array([0.26, 0.54, 0.27, 0.31])
TRUE = np.array([300.0, 500.0, 900.0])


def _near_singular() -> tuple[np.ndarray, np.ndarray]:
    """A Jacobian (us a ns) whose gemv and L = 1 item columns differ by 1 % of a shape's
    response, and a measurement off the true share by 0.4 us along that difference: the
    unbounded solve sets the two terms tens of microseconds apart (as the refit h200-k1's
    L = 2 folds did, issue 38)."""
    gemv = np.full(4, 1e-3)
    apart = np.array([1.0, -1.0, 1.0, -1.0])
    jac = np.column_stack([gemv, gemv * (1 + 0.01 * apart), np.array([0.0, 0.0, 1e-3, 1e-3])])
    return jac, F0 + jac @ TRUE + 0.4 * apart


def test_a_near_singular_fit_keeps_every_term_a_cost() -> None:
    jac, y = _near_singular()
    free = np.linalg.lstsq(jac, y - F0, rcond=None)[0]
    assert free.min() < -1e4  # unbounded, a term is tens of us below zero
    meas = dict(zip(SHAPES, y, strict=True))
    theta = fit(LinearModel(jac, F0), FORMS[DEFAULT_FORM], list(SHAPES), meas)
    assert (theta >= 0).all()
    best = lsq_linear(jac, y - F0, bounds=(0, np.inf))
    assert theta == pytest.approx(best.x, abs=1e-6)
    residual = np.linalg.norm(jac @ theta - (y - F0))
    assert residual == pytest.approx(np.linalg.norm(best.fun), rel=1e-9)
    assert residual < np.linalg.norm(jac @ np.maximum(free, 0) - (y - F0))  # not a clip


def test_a_fit_already_non_negative_is_the_unbounded_one() -> None:
    jac, y = _near_singular()
    y = F0 + jac @ TRUE  # no noise: the unbounded solution is the true share
    meas = dict(zip(SHAPES, y, strict=True))
    theta = fit(LinearModel(jac, F0), FORMS[DEFAULT_FORM], list(SHAPES), meas)
    assert theta == pytest.approx(np.linalg.lstsq(jac, y - F0, rcond=None)[0], abs=1e-9)
    assert theta == pytest.approx(TRUE, abs=1e-6)
