"""The FlyDSL K1's LDS: the per-role union's layout, the gemv's x window and the seed's
budget rule (pure Python), and compile-only builds whose ISA allocates the union."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from kda_kernel.flydsl.k1_lds import (
    LDS_LIMIT,
    ROLE_ARRAYS,
    STAMPS,
    lds_layout,
    lds_words,
    refusal,
    windows,
    x_window,
)
from kda_kernel.flydsl.stamps import StampLayout, tasks_per_cta
from kda_kernel.flydsl.toolchain import missing
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig

SEED_X_LIMIT = 136 * 1024  # the seed's assert on the x rows (shared/MATH.md)
X_ROW = (7168 + 8) * 2  # bytes of one token's padded bf16 x row


def shapes(max_s: int = 16) -> list[LaunchConfig]:
    """Every valid (R, L) with S <= max_s."""
    out = []
    for r in range(1, max_s + 1):
        for l_ in range(1, max_s // r + 1):
            with contextlib.suppress(InvalidInput):  # an invalid shape is no shape
                out.append(LaunchConfig(r, l_).validate())
    return out


def width(cfg: LaunchConfig) -> int:
    return StampLayout(tasks_per_cta(cfg.n_tasks, cfg.blocks)).width


def seed_allows(cfg: LaunchConfig) -> bool:
    return cfg.S * X_ROW <= SEED_X_LIMIT


@pytest.mark.parametrize("timeline", [True, False])
def test_gfx950_refuses_exactly_what_the_seed_refuses(timeline: bool) -> None:
    for cfg in shapes():
        why = refusal(cfg, "gfx950", width(cfg) if timeline else 0)
        assert (why is None) == seed_allows(cfg) == (cfg.S <= 9), (cfg.label(), why)
        if why is not None:
            assert "seed's 136 KiB" in why and "S <= 9" in why


@pytest.mark.parametrize("timeline", [True, False])
def test_gfx942_refuses_exactly_what_the_seed_refuses(timeline: bool) -> None:
    for cfg in shapes():
        why = refusal(cfg, "gfx942", width(cfg) if timeline else 0)
        assert (why is None) == seed_allows(cfg) == (cfg.S <= 9), (cfg.label(), why)


@pytest.mark.parametrize("cfg", shapes(9), ids=lambda c: c.label())
def test_gfx942_windows_the_x_rows_from_s_4(cfg: LaunchConfig) -> None:
    """All S rows while the gemv role fits 64 KiB (S <= 3), else a 3-row window: 3 rows
    (43056 B) + the 8 KiB reduction array + the stamps fit, 4 rows (57408 B) do not.
    gfx950 holds every S."""
    w = width(cfg)
    rows = x_window(cfg, "gfx942", w)
    assert rows == (cfg.S if cfg.S <= 3 else 3)
    assert lds_layout(cfg, w, rows).total <= LDS_LIMIT["gfx942"]
    assert lds_layout(cfg, w, rows + 1).total > LDS_LIMIT["gfx942"] or rows == cfg.S
    assert x_window(cfg, "gfx950", w) == cfg.S
    assert lds_layout(cfg, w, cfg.S) == lds_layout(cfg, w)


@pytest.mark.parametrize("s", range(1, 10))
@pytest.mark.parametrize("rows", range(1, 10))
def test_windows_cover_every_token_once_in_order(s: int, rows: int) -> None:
    wins = windows(s, rows)
    tokens = [t for first, n in wins for t in range(first, first + n)]
    assert tokens == list(range(s))
    assert all(0 < n <= rows for _, n in wins) and len(wins) == -(-s // rows)


def test_a_role_over_the_target_is_refused_by_name() -> None:
    """nb = 31 at S = 9: the attn role's sources (9 x 32 x 128 f32, 144 KiB) exceed
    gfx942's 64 KiB whatever the gemv's window; gfx950's 160 KiB holds them."""
    cfg = LaunchConfig(9, 1, nb=31).validate()
    why = refusal(cfg, "gfx942", width(cfg)) or ""
    assert "attn role's arrays" in why and "gfx942's 64 KiB" in why, why
    assert refusal(cfg, "gfx950", width(cfg)) is None


def test_shapes_that_fit_the_target_are_refused_by_the_seeds_rule() -> None:
    """S = 10 at L <= 5: the per-role union fits gfx950's 160 KiB, the seed refuses it
    (x rows over 136 KiB): the rule is the seed's, not the target's size."""
    for r, l_ in [(10, 1), (5, 2), (2, 5)]:
        cfg = LaunchConfig(r, l_)
        assert lds_layout(cfg, width(cfg)).total <= LDS_LIMIT["gfx950"]
        assert "seed's 136 KiB" in (refusal(cfg, "gfx950", width(cfg)) or "")


@pytest.mark.parametrize("cfg", shapes(9), ids=lambda c: c.label())
def test_layout_is_the_per_role_union(cfg: LaunchConfig) -> None:
    lay = lds_layout(cfg, width(cfg))
    spans = {a: (lay.offsets[a], lay.offsets[a] + lay.sizes[a]) for a in lay.offsets}
    assert all(lo % 16 == 0 for lo, _ in spans.values())
    for arrays in ([*a, STAMPS] for a in ROLE_ARRAYS.values()):
        for i, a in enumerate(arrays):
            for b in arrays[i + 1 :]:
                assert spans[a][1] <= spans[b][0] or spans[b][1] <= spans[a][0], (a, b)
    largest = max(lay.role_bytes(r) for r in ROLE_ARRAYS)
    assert lay.total == lay.sizes[STAMPS] + largest
    assert STAMPS not in lds_layout(cfg, 0).offsets


@pytest.mark.flydsl
@pytest.mark.skipif(missing() is not None, reason=str(missing()))
def test_a_build_allocates_the_union_and_refuses_by_the_rule(tmp_path: Path) -> None:
    """R = 1, L = 9 on gfx950: the largest kda arrays at the seed's largest S; the ISA's
    LDS is the union, 19.6 KB under the sum of every array (what the builder allocated
    before)."""
    from kda_kernel.flydsl.k1 import build_k1
    from kda_sim.isa.parser import parse

    cfg = LaunchConfig(1, 9)
    b = build_k1(cfg, "gfx950", tmp_path / "b")
    [k] = parse(b.built.isa.read_text()).kernels
    every = sum(-(-4 * n // 16) * 16 for n in lds_words(cfg).values()) + 8 * width(cfg)
    assert k.lds_bytes == lds_layout(cfg, width(cfg)).total < every - 19_000
    with pytest.raises(ValueError, match="seed's 136 KiB"):
        build_k1(LaunchConfig(2, 5), "gfx950", tmp_path / "c")  # S = 10
    w = width(LaunchConfig(2, 2))  # S = 4 on gfx942: a 3-row window of x
    b = build_k1(LaunchConfig(2, 2), "gfx942", tmp_path / "d")
    [k] = parse(b.built.isa.read_text()).kernels
    assert k.lds_bytes == lds_layout(LaunchConfig(2, 2), w, 3).total <= LDS_LIMIT["gfx942"]
