"""The growth benchmark on a tiny ladder: its tables' structure, events that grow with R,
the CTAs and the launches, its figure; bad input refused before any simulation (it
asserts no timing: speed targets live in the benchmarks)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from bench import growth_bench as B

HEAD = "| " + " | ".join(B.HEAD) + " |"


@pytest.fixture(scope="module")
def quick(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str, Path]:
    out = tmp_path_factory.mktemp("growth")
    # K1's fixed shape (the L axis's R, the launches') the smallest, to keep this short
    mp = pytest.MonkeyPatch()
    mp.setattr(B, "K1_R", 1)
    mp.setattr(B, "K1_L", 1)
    argv = ["--quick", "--R", "1,2", "--L", "2", "--ctas", "2,8", "--launches", "1,2"]
    argv += ["--markdown", "--json", str(out / "g.json"), "--plot", str(out / "g.png")]
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            B.main(argv)
    finally:
        mp.undo()
    return json.loads((out / "g.json").read_text()), buf.getvalue(), out / "g.png"


def _series(data: dict, series: str) -> list[dict]:
    return sorted((r for r in data["rows"] if r["series"] == series), key=lambda r: r["x"])


def test_every_axis_has_its_table_and_every_row_its_measures(quick) -> None:
    data, text, _ = quick
    assert text.count(HEAD) == 4  # R, L, CTAs, launches
    assert text.count("### ") == 4
    assert {r["axis"] for r in data["rows"]} == set(B.AXES)
    for r in data["rows"]:
        ev = r["events"]
        assert set(ev) == {"unfolded", "scheduled", "calls"}
        assert ev["unfolded"] >= ev["scheduled"] > 0
        assert r["wall_s"] > 0 and r["cpu_s"] > 0 and r["peak_bytes"] > 0
        assert r["us_per_event"] == pytest.approx(r["wall_s"] * 1e6 / ev["unfolded"])
    assert data["repeat"] == 1 and data["linear"] == B.LINEAR
    series = {g["series"] for g in data["growth"]}
    assert series == {r["series"] for r in data["rows"]}
    for g in data["growth"]:
        assert g["verdict"] in text


def test_events_grow_with_r_the_ctas_and_the_launches(quick) -> None:
    data, _, _ = quick
    r1, r2 = _series(data, "K1 R")
    assert (r1["x"], r2["x"]) == (1, 2) and r1["ctas"] == r2["ctas"] == 256
    assert r2["events"]["unfolded"] > r1["events"]["unfolded"]
    for ex in B.EXAMPLES:
        small, large = _series(data, ex.name)
        assert (small["ctas"], large["ctas"]) == (2, 8)
        assert large["events"]["unfolded"] > small["events"]["unfolded"]
    for series in ("K1 launches", "splitk launches"):
        one, two = _series(data, series)
        assert (one["launches"], two["launches"]) == (1, 2)
        assert two["events"]["unfolded"] > one["events"]["unfolded"]


def test_the_figure_is_a_small_png(quick) -> None:
    _, _, png = quick
    head = png.read_bytes()[:8]
    assert head == b"\x89PNG\r\n\x1a\n" and png.stat().st_size < 150_000


def test_a_kernel_that_needs_every_cta_resident_stops_at_the_slots() -> None:
    a = B.parse_args(["--axes", "ctas", "--ctas", "2,4096"])
    planned = B.plan(a)
    skipped = {s.series: s.why for s in planned if isinstance(s, B.Skipped)}
    assert set(skipped) == {ex.name for ex in B.EXAMPLES if ex.all_resident}
    assert all("needs every CTA resident at once" in w for w in skipped.values())
    run = {(c.series, c.x) for c in planned if isinstance(c, B.Case)}
    assert ("ticketqueue", 4096) in run and ("splitk", 4096) in run


def test_a_slope_needs_events_spread_over_twice() -> None:
    assert B._slope([100, 150], [1.0, 1.5]) is None
    assert B._slope([100, 400], [1.0, 4.0]) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--gpu", "nope"], "--gpu: unknown GPU 'nope'"),
        (["--examples-gpu", "nope"], "--examples-gpu: unknown GPU 'nope'"),
        (["--R", "9"], "--R"),
        (["--L", "0"], "--L"),
        (["--ctas", "1,2"], "--ctas"),
        (["--launches", "x"], "--launches"),
        (["--repeat", "0"], "--repeat"),
        (["--plot", "{file}/g.png"], "--plot"),
        (["--plot", "{tmp}/g.svg"], "--plot"),
        (["--json", "{tmp}"], "--json"),
    ],
)
def test_bad_input_exits_2_before_any_simulation(
    argv: list[str], says: str, tmp_path: Path, monkeypatch, capsys
) -> None:
    (tmp_path / "f").write_text("")
    argv = [a.format(file=tmp_path / "f", tmp=tmp_path) for a in argv]

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("simulated before refusing")

    monkeypatch.setattr(B.Case, "run", refused)
    if "--plot" not in argv:  # never the tree's figure
        argv += ["--plot", str(tmp_path / "p.png")]
    with pytest.raises(SystemExit) as e:
        B.main(argv)
    assert e.value.code == 2
    assert says in capsys.readouterr().err
