"""A branch on an atomic's old value: its vocabulary, the sites the static checks see,
and the engine running only the branch the old value picks (the last arriver's)."""

from __future__ import annotations

import numpy as np
import pytest

from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.machine import load_profile
from kda_sim.protocol.branches import ORELSE, THEN, on_old
from kda_sim.protocol.counters import Atomic, Pred, Reset, Wait
from kda_sim.protocol.ops import Put
from kda_sim.protocol.program import CtaProgram
from kda_sim.protocol.tickets import walk


def test_a_branch_holds_counter_ops_only() -> None:
    with pytest.raises(InvalidInput, match="holds atomics, waits and resets"):
        on_old("last", "old", Pred.EQ, 3, (Put(0, np.array([0])),))
    with pytest.raises(InvalidInput, match="names the register"):
        on_old("last", "", Pred.EQ, 3)


def test_the_old_value_picks_the_branch() -> None:
    br = on_old("last", "old", Pred.EQ, 3, (Reset(0, (0,)),), (Wait("A", 0, 0, Pred.GE, 4),))
    assert br.taken({"old": 3}) == br.then and br.taken({"old": 1}) == br.orelse
    assert br.taken({}) == br.orelse  # an unset register reads 0


def test_walk_sees_both_branches_at_the_branch_s_place() -> None:
    br = on_old("last", "old", Pred.EQ, 3, (Reset(0, (0,)),), (Wait("A", 0, 0, Pred.GE, 4),))
    prog = CtaProgram(2, "m", (), (Atomic(0, 0, into="old"), br))
    sites = [(s.index, s.branch, s.text()) for s, _ in walk(prog)]
    assert sites == [
        (0, 0, "CTA 2 (op 0)"),
        (1, 0, "CTA 2 (op 1)"),
        (1, THEN, "CTA 2 (op 1, if old == 3: last)"),
        (1, ORELSE, "CTA 2 (op 1, unless old == 3)"),
    ]


def test_the_engine_runs_the_reset_in_the_last_arriver_only() -> None:
    cfg = GridBarrierConfig(ctas=8, rounds=1, last_resets=True)
    tl = simulate(cfg, load_profile("h200", "gridbarrier")).timeline
    writes = [p for c in tl.ctas for p in c.puts if p.region == "ARRIVE"]
    assert len(writes) == 8 + 1  # every CTA's add and one reset
    resetters = [t for t in tl.ctas if len(t.puts) == 2]  # the CTA that added, then reset
    assert len(resetters) == 1
    last_add = max((c.puts[0].time, c.cta) for c in tl.ctas)
    assert resetters[0].cta == last_add[1]  # the reset is the last arriver's
