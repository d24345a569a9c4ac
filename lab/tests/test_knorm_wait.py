"""lab/knorm_wait.py: each k.norm poll read against the puts it waited for (its head's 8
ONRM puts and its g2 group's gemv put, as the Triton K1's k.norm polls them), in a launch
and in a seeded run of the model; bad input exits 2."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest

from kda_sim.compare.model import model_view
from kda_sim.importers import load_trace
from kda_sim.kernels.k1.constants import NVCH
from kda_sim.kernels.k1.kda import task_coords
from lab.cta_spread import seeded_run, spread_map
from lab.knorm_wait import CHUNK, OWN, _last_put, _polls_by_op, main, wait_rows

TRACES = Path(__file__).resolve().parents[2] / "traces"
TRACE = TRACES / "k1_h200_R2_L2.json.gz"


def test_a_norm_poll_waits_for_its_heads_onrm_and_its_g2_group() -> None:
    """kernel/triton/kda.py's k.norm polls its head's 8 chunks' ONRM of each token and its
    own 16 g2 rows of PROJ: the model's poll waits for those 9 puts and no other."""
    tl = load_trace(TRACE)
    mv = model_view(tl)
    runs = {(c.cta, s.task) for c in tl.ctas for s in c.stages if s.name == "k.recur"}
    n = 0
    for c in tl.ctas:
        ops = _polls_by_op(mv, c.cta)
        for i, p in enumerate(c.polls):
            if p.stage != "k.norm" or p.satisfied is None:
                continue
            req, h, ch = task_coords(p.task)
            puts = _last_put(mv, c.cta, ops[i], p.satisfied)
            stages = Counter(s for _, _, s in puts)
            # the g2 rows are one 16-row gemv group: an even chunk's is its CTA's first
            assert stages == {"k.recur": NVCH, ("gemv0", "gemv1")[ch % 2]: 1}
            onrm = {d for _, d, s in puts if s == "k.recur"}
            head = {d for d, t in runs if task_coords(t)[:2] == (req, h)}
            assert onrm == head
            n += 1
    assert n > 0


def test_wait_rows_in_a_seeded_run() -> None:
    t = load_trace(TRACE)
    sim = seeded_run(t, "h200-k1", spread_map(0.025, ("gemv0", "gemv1")), 3)
    rows = wait_rows(sim)
    spans = rows["spans"]
    assert spans and all(r["seen"] >= 0 for r in spans)
    # a task's own ONRM is put inside its k.recur, before its k.norm begins
    assert all(r["last_put"] <= 0 for r in spans if r["last"] == OWN)
    assert all(r["pollers"] <= NVCH - 1 for r in spans)
    # one chunk of a head is the last to put: its own put is its last, another's the rest's
    kinds = Counter(r["last"] for r in spans)
    assert kinds[OWN] * (NVCH - 1) <= kinds[CHUNK]
    assert all(h["chunks"] == NVCH for h in rows["heads"])
    assert all(h["fa_sat_spread"] >= 0 for h in rows["heads"])


def test_main_writes_both_sides(tmp_path: Path) -> None:
    d = tmp_path / "warm"
    d.mkdir()
    shutil.copy(TRACE, d / "k1_R2_L2_0.json")
    out = tmp_path / "out.json"
    argv = [str(d), "--profile", "h200-k1", "--seeds", "1", "--json", str(out)]
    assert main([*argv, "--spread", "0.025", "--stages", "gemv0,gemv1"]) == 0
    s = json.loads(out.read_text())["shapes"]["2x2"]
    assert set(s) == {"real", "model"}
    assert s["real"]["spans"] == s["model"]["spans"] > 0


@pytest.mark.parametrize(
    "extra", [["--shapes", "2by2"], ["--shapes", "1x1"], ["--seeds", "0"], ["--spread", "9"]]
)
def test_bad_input_exits_2(tmp_path: Path, extra: list[str], capsys) -> None:
    d = tmp_path / "warm"
    d.mkdir()
    shutil.copy(TRACE, d / "k1_R2_L2_0.json")
    assert main([str(d), "--profile", "h200-k1", *extra]) == 2
    assert "knorm_wait:" in capsys.readouterr().err
