"""The static Gantt figure shows every CTA, the stages and the poll waits."""

from __future__ import annotations

from pathlib import Path

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.gantt import gantt, save_gantt
from kda_sim.timeline.summary import stage_stats


def test_gantt_draws_stages_polls_and_roles(tmp_path: Path) -> None:
    tl = simulate(LaunchConfig(1, 1), load_profile("mi355x")).timeline
    fig = gantt(tl)
    ax = fig.axes[0]
    labels = {t.get_text() for t in ax.get_legend().get_texts()}
    assert {"slice", "load_x", "k.recur", "poll wait", "gemv CTAs"} <= labels
    assert "makespan" in ax.get_title()
    assert ax.get_ylim()[0] == 256  # one row a CTA
    save_gantt(tl, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


def test_a_stuck_launch_says_so() -> None:
    tl = simulate(LaunchConfig(4, 2), load_profile("h200"), occupancy=1).timeline
    assert "DOES NOT FINISH" in gantt(tl).axes[0].get_title()


def test_stage_stats_count_every_stage() -> None:
    cfg = LaunchConfig(2, 1)
    stats = {s.stage: s for s in stage_stats(simulate(cfg, load_profile("mi355x")).timeline)}
    assert stats["k.recur"].count == cfg.n_tasks
    assert stats["gemv0"].count == 197 and stats["slice"].count == 56 and stats["gate"].count == 2
    assert stats["load_x"].poll_wait_ns > 0
