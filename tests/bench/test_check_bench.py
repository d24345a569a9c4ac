"""The check benchmark's command line and its breakdown's wrapping: the parts it times
are called through its wrappers while it runs and restored after (it times nothing here)."""

from __future__ import annotations

import argparse

import kda_sim.checks.launch_check as lc
import kda_sim.checks.sections as sections
from bench import check_bench as B
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.pingpong import build as pingpong


def test_the_check_it_times_is_the_k1_launch_asked_for() -> None:
    a = argparse.Namespace(gpu="h200", R=4, L=2, seeds=1)
    assert B.check_argv(a) == ["check", "--gpu", "h200", "--R", "4", "--L", "2", "--seeds", "1"]


def test_parts_are_timed_while_it_runs_and_restored_after() -> None:
    before_words, before_sections = lc.uses_words, sections.SECTIONS
    with B.parts_timed() as times:
        assert lc.uses_words is not before_words  # the report's import, wrapped
        assert before_sections != sections.SECTIONS  # the further checks, wrapped in place
        assert lc.SECTIONS == sections.SECTIONS  # and the report's import of them
        assert lc.uses_words(pingpong(PingPongConfig())) is False
    assert len(times["uses_words"]) == 1 and times["uses_words"][0] >= 0
    assert lc.uses_words is before_words and before_sections == sections.SECTIONS
    assert before_sections == lc.SECTIONS


def test_jobs_are_compared_alternating_on_the_same_report(capsys) -> None:
    B.compare_jobs(["check", "--kernel", "pingpong"], [1, 2], 2)
    out = capsys.readouterr().out
    assert "2 rounds alternating, every report the same" in out
    assert "--jobs 1: wall" in out and "--jobs 2: wall" in out
    assert "--jobs 2 / --jobs 1, round by round: wall" in out and out.count("load average") == 2
