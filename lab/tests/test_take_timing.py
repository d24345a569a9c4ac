"""Where a ticket launch's takes sit against their CTA's role (lab/take_timing.py), on
simulated launches written as traces: a take issued ahead of the role's end reads before
it, one issued at the end reads at it, and its round trip is the atomic's."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import write_chrome
from lab.take_timing import main, report


@pytest.fixture(scope="module")
def folder(tmp_path_factory) -> Path:
    base = load_profile("h200-k1")
    prof = replace(base, latency_ns={**base.latency_ns, "atomic": 400.0})
    root = tmp_path_factory.mktemp("run") / "s"
    cfg = LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=3)
    for build, ahead in (("after", False), ("ahead", True)):
        (root / build / "warm").mkdir(parents=True)
        tl = simulate(replace(cfg, take_ahead=ahead), prof, occupancy=2).timeline
        write_chrome(tl, root / build / "warm" / "k1_R1_L1_0.json")
    return root


def test_a_take_reads_at_its_roles_end_or_before_it(folder: Path) -> None:
    (after,) = report(folder, "after")["rows"]
    for role in ("attn", "gemv"):
        assert after[f"{role}_issue_less_end"] == pytest.approx(0.0)
        assert after[f"{role}_round_trip"] == pytest.approx(400.0)
        assert after[f"{role}_return_less_end"] == pytest.approx(400.0)
    (ahead,) = report(folder, "ahead", model="h200-k1")["rows"]
    # issued before the XRDY publish's drain (the x rows' store acks, 586 ns): back
    # before the mix ends
    assert ahead["attn_issue_less_end"] < -400.0
    assert ahead["attn_return_less_end"] == pytest.approx(ahead["attn_issue_less_end"] + 400.0)
    assert ahead["attn_round_trip"] == pytest.approx(400.0)
    assert ahead["model_gemv_proj_wait"] > 0 and ahead["gemv_proj_wait"] > 0


def test_a_build_without_traces_is_refused(folder: Path, capsys) -> None:
    assert main(["--dir", str(folder), "--build", "nope"]) == 2
    assert "nope/warm: not a folder" in capsys.readouterr().err
