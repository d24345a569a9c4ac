"""lab.cta_spread: each CTA's stage factors against its class, and a shape's summary."""

from __future__ import annotations

import gzip
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.spec import STAGES
from lab.cta_spread import (
    ANCHOR,
    factors,
    main,
    path_shape,
    pooled_by_shape,
    resampled,
    same_kind,
    seeded_comparison,
    shares,
    spread_map,
    summary,
    verdict_draws,
)

ROOT = Path(__file__).resolve().parents[2]
TRACE = ROOT / "traces" / "k1_h200_R2_L2.json.gz"


def test_a_gemv_ctas_factors_centre_on_one() -> None:
    tl = read_k1_trace(TRACE)
    f = factors(tl)
    gemv = [c.cta for c in tl.ctas if c.role == "gemv"]
    assert all(ANCHOR in f[c] and "gemv1" in f[c] for c in gemv)
    # each class's median is 1 by construction, so the pooled median is near it
    assert abs(float(np.median([f[c][ANCHOR] for c in gemv])) - 1.0) < 0.02
    assert all(v > 0 for fc in f.values() for v in fc.values())


def _launch(scale: dict[int, float], other: dict[int, float]) -> dict[int, dict[str, float]]:
    return {c: {ANCHOR: s, "gemv1": s, "k.stage": other[c]} for c, s in scale.items()}


def test_one_factor_a_cta_and_a_repeat() -> None:
    rng = np.random.default_rng(0)
    drawn = {c: float(np.exp(0.1 * rng.standard_normal())) for c in range(40)}
    noise = [{c: float(rng.uniform(0.5, 1.5)) for c in range(40)} for _ in range(3)]
    rep = summary([_launch(drawn, n) for n in noise])
    assert rep["rho with gemv0"]["gemv1"] == 1.0  # the same factor: rank correlation 1
    assert abs(rep["rho with gemv0"]["k.stage"]) < 0.5  # drawn apart: none to speak of
    assert rep["repeat by cta"] == 1.0  # the same CTAs each launch
    assert 0.05 < rep["spread"][ANCHOR]["sd_log"] < 0.2
    fresh = summary(
        [
            _launch({c: float(np.exp(0.1 * rng.standard_normal())) for c in range(40)}, n)
            for n in noise
        ]
    )
    assert abs(fresh["repeat by cta"]) < 0.5  # drawn afresh each launch


def test_no_such_folder_exits_2(tmp_path: Path) -> None:
    assert main(["measure", f"x={tmp_path / 'none'}"]) == 2


def test_paths_shares_overlap_and_cover() -> None:
    a, b, c = ("x", "k.conv"), ("x", "k.stage", "k.conv"), ("x", "k.gates")
    real = [b] * 6 + [a] * 2

    class _C:  # the fields of a Comparison path_shape reads
        def __init__(self, p: tuple[str, ...]) -> None:
            self.sim_kinds, self.makespan_err, self.matched = list(p), 0.01, []

    sim = [_C(a)] * 5 + [_C(b)] * 2 + [_C(c)]
    rep = path_shape(real, sim)  # type: ignore[arg-type]
    assert rep["modal"] == "no"  # the model's most-taken is a, the launches' b
    assert rep["overlap"] == pytest.approx(2 / 8 + 2 / 8)  # min over a and b
    assert rep["launches_covered"] == 1.0  # a and b each at >= 1/8 of the runs
    assert shares(real) == {b: 0.75, a: 0.25}


def test_a_shapes_launches_pool_over_folders_in_their_order(tmp_path: Path) -> None:
    """Two runs of one build: a shape's launches are the first folder's then the
    second's, a shape in one folder alone is kept, other files are left out."""
    a, b = tmp_path / "run_a", tmp_path / "run_b"
    for d, names in ((a, ["k1_R2_L2_0.json", "k1_R2_L2_1.json", "notes.json"]),
                     (b, ["k1_R2_L2_0.json", "k1_R1_L4_0.json"])):  # fmt: skip
        d.mkdir()
        for n in names:
            (d / n).write_text("{}")
    got = pooled_by_shape([a, b])
    assert list(got) == [(1, 4), (2, 2)]
    assert got[(2, 2)] == [a / "k1_R2_L2_0.json", a / "k1_R2_L2_1.json", b / "k1_R2_L2_0.json"]
    assert got[(1, 4)] == [b / "k1_R1_L4_0.json"]
    with pytest.raises(InvalidInput, match="not a folder"):
        pooled_by_shape([a, tmp_path / "none"])


def test_only_launches_of_one_build_and_card_pool() -> None:
    """Another card, another build option or a warm launch among cold ones is named; the
    same launch twice passes."""
    h200 = read_k1_trace(TRACE)
    h100 = read_k1_trace(ROOT / "traces" / "k1_h100_R2_L2.json.gz")
    files = [Path("a.json"), Path("b.json")]
    same_kind([h200, h200], files)
    with pytest.raises(InvalidInput, match=r"b\.json: not the launch of a\.json \(gpu NVIDIA H100"):
        same_kind([h200, h100], files)
    built = replace(h200, meta=replace(h200.meta, extra=h200.meta.extra | {"build": {"x": 1}}))
    with pytest.raises(InvalidInput, match="build"):
        same_kind([h200, built], files)
    warm = replace(h200, meta=replace(h200.meta, extra=h200.meta.extra | {"warmup": 3}))
    with pytest.raises(InvalidInput, match="warmup 3 against 0"):
        same_kind([h200, warm], files)


def test_paths_refuses_before_any_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Exit 2 naming the file: launches of two cards pooled, a shape with no fold, a
    negative count of draws."""
    a, b, folds = tmp_path / "a", tmp_path / "b", tmp_path / "folds"
    for d, gpu in ((a, "h200"), (b, "h100")):
        d.mkdir()
        src = ROOT / "traces" / f"k1_{gpu}_R2_L2.json.gz"
        (d / "k1_R2_L2_0.json").write_bytes(gzip.decompress(src.read_bytes()))
    folds.mkdir()
    base = ["--spread", "0.02", "--seeds", "1"]
    assert main(["paths", str(a), str(b), "--profile", "h200-k1", *base]) == 2
    assert f"{b / 'k1_R2_L2_0.json'}: not the launch of" in capsys.readouterr().err
    assert main(["paths", str(a), "--folds", str(folds), *base]) == 2
    assert "fold_R2_L2.json: no fold for this shape" in capsys.readouterr().err
    assert main(["paths", str(a), "--profile", "h200-k1", *base, "--bootstrap", "-1"]) == 2
    assert "--bootstrap: -1: 0 draws or more" in capsys.readouterr().err


def test_the_verdict_resampled() -> None:
    """A verdict both sides hold in every draw stays; an even split on the launches'
    side turns in some draws; a seeded generator draws the same again; the count of "yes"
    shapes over the draws."""
    a, b = ("x", "k.conv"), ("x", "k.gates")
    assert set(verdict_draws([a] * 8, [a] * 32, 50, np.random.default_rng(0))) == {"yes"}
    even = verdict_draws([a] * 4 + [b] * 4, [a] * 32, 400, np.random.default_rng(0))
    assert {"yes", "tie", "no"} <= set(even)  # a, the tie and b each win some draws
    assert even == verdict_draws([a] * 4 + [b] * 4, [a] * 32, 400, np.random.default_rng(0))
    r = resampled([["yes", "no", "yes"], ["yes", "yes", "tie"]])
    assert r["draws"] == 3 and r["yes_median"] == 1.0
    assert r["yes_at_least"] == [1.0, 1.0, pytest.approx(1 / 3)]  # draw 0 alone has two


def test_a_seeded_run_with_the_spread_moves_and_without_it_does_not() -> None:
    tl = read_k1_trace(TRACE)
    flat = [seeded_comparison(tl, "h200-k1", {}, s).sim_makespan for s in (1, 2)]
    assert flat[0] == flat[1]
    spread = [seeded_comparison(tl, "h200-k1", spread_map(0.05), s).sim_makespan for s in (1, 2)]
    assert spread[0] != spread[1]


def test_paths_refuses_no_runs() -> None:
    with pytest.raises(SystemExit) as e:
        main(
            [
                "paths",
                str(ROOT / "traces"),
                "--profile",
                "h200-k1",
                "--spread",
                "0.02",
                "--seeds",
                "0",
            ]
        )
    assert e.value.code == 2


def test_the_spread_names_its_stage_kinds() -> None:
    """--spread on --stages: those kinds only; without --stages every K1 kind; 0 none; a
    kind the K1 lacks or a sd out of the profile's range refused (exit 2 from the CLI)."""
    assert spread_map(0.05, ("gemv0", "gemv1")) == {"gemv0": 0.05, "gemv1": 0.05}
    assert spread_map(0.02) == dict.fromkeys(STAGES, 0.02)
    assert spread_map(0.0, ("gemv0",)) == {}
    with pytest.raises(InvalidInput, match="gemv2"):
        spread_map(0.05, ("gemv2",))
    with pytest.raises(InvalidInput, match="--spread"):
        spread_map(-0.1)
    argv = ["paths", str(ROOT / "traces"), "--profile", "h200-k1", "--spread", "0.02"]
    assert main([*argv, "--stages", "gemv0,gemv2", "--seeds", "1"]) == 2
