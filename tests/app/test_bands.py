"""The timeline grouped by role: rows, bands, filters, the critical path and the window."""

from __future__ import annotations

import numpy as np
import pytest
from apphelp import measured_like

from kda_sim.app.bands import BAND_H, LANE, group_rows, grouped_figure, row_of_cta, stage_bands
from kda_sim.app.figures import Filter, Layer
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.critical import critical_path
from kda_sim.timeline.model import Timeline


@pytest.fixture(scope="module")
def real() -> Timeline:
    return measured_like("h200", 2, 2)


@pytest.fixture(scope="module")
def sim() -> Timeline:
    return simulate(LaunchConfig(2, 2), load_profile("h200")).timeline


def _roles(tl: Timeline) -> list[str]:
    return sorted({c.role for c in tl.ctas})


def test_256_ctas_collapse_to_a_row_a_role(real: Timeline) -> None:
    assert len(real.ctas) == 256
    rows = group_rows(real, Filter())
    assert sorted(r.role for r in rows) == _roles(real)
    assert sum(len(r.ctas) for r in rows) == 256
    fig = grouped_figure([Layer("real", real, False)], Filter())
    assert list(fig.layout.yaxis.ticktext) == [r.label for r in rows]


def test_filtering_to_a_role_leaves_only_its_ctas(real: Timeline) -> None:
    rows = group_rows(real, Filter(roles=("attn",)), expand=("attn",))
    attn = [c.cta for c in real.ctas if c.role == "attn"]
    assert [r.cta for r in rows] == attn
    fig = grouped_figure([Layer("real", real, False)], Filter(roles=("attn",)), expand=("attn",))
    assert list(fig.layout.yaxis.ticktext) == [f"CTA {c}" for c in attn]
    ys = {float(y) for tr in fig.data if tr.type == "bar" for y in tr.y}
    assert len(ys) == len(attn)  # a row a CTA, nothing of the other roles


def test_a_cta_range_and_an_expanded_role_mix_bands_and_ctas(real: Timeline) -> None:
    flt = Filter(cta_lo=0, cta_hi=100)
    rows = group_rows(real, flt, expand=("gemv",))
    gemv = [c.cta for c in real.ctas[:101] if c.role == "gemv"]
    assert [r.cta for r in rows if r.role == "gemv"] == gemv
    assert all(r.cta is None for r in rows if r.role != "gemv")
    assert all(c <= 100 for r in rows for c in r.ctas)


def test_bands_are_min_median_max_of_the_spans(real: Timeline) -> None:
    gemv = [c.cta for c in real.ctas if c.role == "gemv"]
    band = next(b for b in stage_bands(real, gemv, ("gemv0",)) if b.stage == "gemv0")
    durs = [s.dur for i in gemv for s in real.ctas[i].stages if s.name == "gemv0"]
    assert band.n == len(durs)
    assert band.dur == pytest.approx((min(durs), float(np.median(durs)), max(durs)))
    assert band.start[0] <= band.start[1] <= band.start[2]


def test_real_and_simulated_take_separate_lanes(real: Timeline, sim: Timeline) -> None:
    fig = grouped_figure([Layer("real", real, False), Layer("simulated", sim, True)], Filter())
    real_y = {float(y) for tr in fig.data if "(real)" in tr.name for y in tr.y}
    sim_y = {float(y) for tr in fig.data if "(simulated)" in tr.name for y in tr.y}
    assert real_y and sim_y and not real_y & sim_y
    # the simulated medians are outlines below each row's centre, the real ones filled above
    centres = set(row_of_cta(group_rows(real, Filter())).values())
    hollow = [tr for tr in fig.data if tr.type == "bar" and tr.marker.color == "rgba(0,0,0,0)"]
    assert hollow
    for tr in hollow:
        assert all(any(float(y) - c == pytest.approx(LANE * BAND_H) for c in centres) for y in tr.y)
    assert max(real_y) < max(sim_y)


def test_the_critical_path_walks_between_role_rows(real: Timeline) -> None:
    cp = critical_path(real)
    assert cp is not None
    rows = group_rows(real, Filter())
    fig = grouped_figure([Layer("real", real, False)], Filter(), critical=cp)
    line = next(tr for tr in fig.data if tr.name == "critical path")
    centres = set(row_of_cta(rows).values())
    assert {float(y) for y in line.y if y is not None} <= centres
    assert len(fig.layout.yaxis.tickvals) == len(rows)
    assert fig.layout.yaxis.range[0] == pytest.approx(BAND_H * len(rows))


def test_a_time_window_opens_the_chart_on_it(real: Timeline) -> None:
    fig = grouped_figure([Layer("real", real, False)], Filter(), window_us=(2.0, 5.0))
    assert list(fig.layout.xaxis.range) == [2.0, 5.0]
