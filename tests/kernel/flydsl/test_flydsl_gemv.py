"""The FlyDSL K1's gemv on gfx942 at every S the seed allows (compile-only): S <= 3 holds
every x row in LDS, S 4..9 the windowed gemv (k1_lds.x_window). Each build's traced
record is the protocol model's, ``kda-sim isa`` finds nothing, its LDS is the layout's
within 64 KiB, and its ISA runs the MFMA loop once a window a group and copies x once a
window (gemv1 reusing the window gemv0 ended with)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kda_kernel.flydsl.k1_lds import LDS_LIMIT, lds_layout, windows, x_window
from kda_kernel.flydsl.toolchain import missing
from kda_sim.isa import analyze_path
from kda_sim.isa.analyze import load_lines
from kda_sim.isa.model import polls_behind_weights, stage_ops
from kda_sim.isa.parser import parse
from kda_sim.isa.presets import K1_ARGS
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import HIDDEN, PER_WAVE, THREADS

pytestmark = [pytest.mark.flydsl, pytest.mark.skipif(missing() is not None, reason=str(missing()))]

# one (R, L) a value of S = 1..9, requests and tokens both varied
SHAPES = [(1, 1), (1, 2), (3, 1), (1, 4), (5, 1), (2, 3), (7, 1), (4, 2), (3, 3)]
GFX942_MFMA_A_CHUNK = 4 * 2  # 4 loads a chunk, two 16x16x16 MFMAs a 16-byte load on gfx942
GROUPS = 2  # rg0, rg1


def _copies(s: int, rows: int) -> list[int]:
    """Tokens of each x copy: every window for rg0, all but the reused one for rg1."""
    wins = [n for _, n in windows(s, rows)]
    return wins + wins[::-1][1:]


@pytest.mark.parametrize(("r", "l_"), SHAPES, ids=lambda v: str(v))
def test_every_s_compiles_for_gfx942_and_passes_the_checks(r: int, l_: int, tmp_path: Path) -> None:
    from kda_kernel.flydsl.k1 import build_k1

    cfg = LaunchConfig(r, l_)
    b = build_k1(cfg, "gfx942", tmp_path)
    traced: dict[str, list[tuple[str, str]]] = {}
    for stage, region, kind in b.records:
        traced.setdefault(stage, []).append((region, kind))
    model = {s: ops for s, ops in stage_ops(cfg).items() if ops}
    assert traced.keys() == model.keys()
    for stage, ops in model.items():
        if stage.startswith("k."):  # a kda stage is traced once a task (R >= 3: two)
            assert set(traced[stage]) == set(ops), stage
        else:
            assert traced[stage] == ops, stage

    report = analyze_path(b.built.isa, arg_layout=K1_ARGS, accept=polls_behind_weights(cfg))
    assert report.findings == [], report.render()

    text = b.built.isa.read_text()
    [k] = parse(text).kernels
    rows = x_window(cfg, "gfx942", b.layout.width)
    assert k.lds_bytes == lds_layout(cfg, b.layout.width, rows).total <= LDS_LIMIT["gfx942"]
    n_win = len(windows(cfg.S, rows))
    assert n_win == (1 if cfg.S <= 3 else -(-cfg.S // 3))
    assert text.count("v_mfma") == GROUPS * n_win * PER_WAVE * GFX942_MFMA_A_CHUNK
    pieces = HIDDEN // 8  # 16-byte loads a token row
    want = sum(-(-n * pieces // THREADS) for n in _copies(cfg.S, rows))
    assert len(load_lines(text, arg_layout=K1_ARGS)["xbuf"]) == want
