"""protocol.records: what the engine records for an op, checked against the engine."""

from __future__ import annotations

from kda_sim.engine import simulate
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.registry import spec_for
from kda_sim.machine import load_gpu
from kda_sim.protocol.ops import Begin
from kda_sim.protocol.records import counted, recorded


def test_what_each_op_records_is_what_the_engine_records() -> None:
    """A counter kernel (adds, waits, CTA 0's resets: broken) and a pair kernel: each
    CTA's poll and put records are its ops' counts."""
    for cfg in (GridBarrierConfig(ctas=4, rounds=2, broken=True), PingPongConfig(rounds=3)):
        launch = spec_for(cfg).build(cfg)
        tl = simulate(cfg, load_gpu("h200"), occupancy=8).timeline
        for prog, track in zip(launch.programs, tl.ctas, strict=True):
            assert counted(prog.ops) == (len(track.polls), len(track.puts))
    assert recorded(Begin("work", 0)) is None
