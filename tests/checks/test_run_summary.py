"""A run's summary holds what the checks read of it, crosses processes without the whole
run, and the dynamic check keeps whole only the runs a reader needs whole."""

from __future__ import annotations

import pickle

from kda_sim.checks.deadlock_dynamic import check_dynamic
from kda_sim.checks.run_summary import summarize
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine.profile import GpuProfile


def test_a_summary_says_what_the_run_did(h200: GpuProfile) -> None:
    for cfg in (LaunchConfig(2, 2), LaunchConfig(4, 2)):  # finishes; hangs (one CTA an SM)
        res = simulate(cfg, h200, seed=1, jitter=0.5)
        s = summarize(res)
        tl = res.timeline
        assert s.deadlock is res.deadlock and s.makespan == tl.makespan
        assert s.stuck == tl.stuck and s.residency == res.residency
        assert s.spans == [(c.start, c.end) for c in tl.ctas]
        assert s.stale_reads == res.stale_reads and s.result is res
    assert s.deadlock and s.stuck and any(start is None for start, _ in s.spans)


def test_a_pickled_summary_leaves_the_whole_run_behind(h200: GpuProfile) -> None:
    res = simulate(LaunchConfig(2, 2), h200)
    s = summarize(res)
    sent = pickle.dumps(s)
    back = pickle.loads(sent)
    assert back.result is None and s.result is res  # the sender's keeps it
    assert back.makespan == s.makespan and back.spans == s.spans and back.stuck == s.stuck
    assert len(sent) * 20 < len(pickle.dumps(res))  # the point: far smaller than the run


def test_the_dynamic_check_keeps_the_nominal_run_and_the_hangs_whole(h200: GpuProfile) -> None:
    ok = check_dynamic(LaunchConfig(2, 2), h200, seeds=(1, 2))
    assert ok.finishes and ok.nominal is ok.runs[0].result is not None
    assert all(r.result is None for r in ok.runs[1:])
    hang = check_dynamic(LaunchConfig(4, 2), h200, seeds=(1,), extreme=False)
    assert not hang.finishes
    assert all((r.result is not None) is (not r.finishes) for r in hang.runs[1:])
    assert hang.nominal.deadlock
