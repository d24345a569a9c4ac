"""A reset of (value, tag) pairs: checked against its region, run by the engine, and what
it changes for the next launch of a host sequence (DeepGEMM#451's fix)."""

from __future__ import annotations

import pytest

from kda_sim.errors import InvalidInput
from kda_sim.host.run import run_sequence
from kda_sim.host.spec_text import parse
from kda_sim.kernels.registry import get
from kda_sim.machine import load_profile
from kda_sim.protocol.handoffs import derive
from kda_sim.protocol.pair_resets import ResetPairs
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

SPEC = get("deepgemm_gridid")


def _replayed(fix: bool):
    cfg = SPEC.validate(SPEC.config_type(fix=fix))
    return run_sequence(SPEC, cfg, load_profile("b200", SPEC), parse("launch; replay"))


def test_a_pair_reset_names_pairs_of_its_region() -> None:
    space = CellSpace.from_sizes({"A": 2, "B": 2})
    bad = Launch(None, space, (CtaProgram(0, "m", (), (ResetPairs(0, (3,)),)),))
    with pytest.raises(InvalidInput, match="cell 3 is not in A"):
        derive(bad)


def test_the_replay_finds_no_tag_where_the_launch_reset_its_pairs() -> None:
    fixed = _replayed(fix=True)
    first, replay = fixed.runs
    assert len(first.result.final.pair_resets) == SPEC.default_config().ranks
    assert replay.initial.tagged == frozenset()  # every READY pair reset after its pull
    assert not replay.result.final.stale_polls
    buggy = _replayed(fix=False).runs[1]
    assert len(buggy.initial.tagged) == SPEC.default_config().ranks  # the old tags stand
    assert buggy.result.final.stale_polls
