"""One source of truth for who puts and who polls each pair."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.pingpong import build as pingpong
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, NA, NPROJ, POLL_MAX
from kda_sim.kernels.k1.kda import task_coords, task_cta, tasks_of
from kda_sim.kernels.k1.program import Role, build_launch
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.handoffs import derive, derived, handoffs_of
from kda_sim.protocol.ops import Begin, Load, LoadKind, Poll, Publish, Put, Use


@st.composite
def configs(draw: st.DrawFn) -> LaunchConfig:
    L = draw(st.integers(1, 4))
    R = draw(st.integers(1, 8 // L))
    return LaunchConfig(
        R,
        L,
        nb=draw(st.integers(1, 8)),
        kda0=draw(st.integers(0, 255)),
        gate_local=draw(st.booleans()),
        nw_first=draw(st.booleans()),
        onw_first=draw(st.booleans()),
    )


def pad_rows(cfg: LaunchConfig, ho) -> np.ndarray:
    """PROJ's 4 zero pad rows (6284..6287): put by the last group, never read, except the
    last row of a request's last token, which kda_gates' clamp polls."""
    space = ho.launch.space
    t = np.arange(cfg.S)[:, None]
    return space.gid(Region.PROJ, (t * NPROJ + np.arange(NPROJ - 4, NPROJ)[None, :]).ravel())


@settings(max_examples=25, deadline=None)
@given(configs())
def test_every_polled_pair_has_one_putter_and_every_put_is_polled(cfg: LaunchConfig) -> None:
    ho = handoffs_of(cfg)
    polled = ho.polled_cells()
    assert (ho.put_count[polled] == 1).all()
    put = np.nonzero(ho.put_count > 0)[0]
    unread = np.setdiff1d(put, polled)
    assert np.isin(unread, pad_rows(cfg, ho)).all()


@settings(max_examples=25, deadline=None)
@given(configs())
def test_batches_hold_at_most_poll_max_pairs(cfg: LaunchConfig) -> None:
    for _, poll in handoffs_of(cfg).polls:
        assert poll.batches.shape[1] <= POLL_MAX
        assert ((poll.batches >= 0).sum(axis=1) >= 1).all()
        assert set(np.unique(poll.batches[poll.batches >= 0])) == set(poll.cells.tolist())


def test_long_token_lists_split_into_batches() -> None:
    cfg = LaunchConfig(1, 16, nb=1)
    conv = next(p for (c, _), p in handoffs_of(cfg).polls if p.label == "PROJ" and c == 0)
    assert conv.batches.shape == (2 * 48, POLL_MAX)  # 16 tokens: a batch of 12 and one of 4


@pytest.mark.parametrize("kda0", [0, 5, 255])
def test_tasks_go_to_every_256th_cta_after_its_role_work(kda0: int) -> None:
    cfg = LaunchConfig(4, 1, kda0=kda0)
    launch = build_launch(cfg)
    seen: list[int] = []
    for prog in launch.programs:
        tasks = [op.task for op in prog.ops if isinstance(op, Begin) and op.stage == "k.stage"]
        assert tasks == sorted(tasks) == list(prog.tasks)
        assert all(task_cta(i, cfg) == prog.cta for i in tasks)
        first_kda = next(
            (k for k, op in enumerate(prog.ops) if isinstance(op, Begin) and op.task >= 0),
            len(prog.ops),
        )
        assert not any(isinstance(op, Begin) and op.task < 0 for op in prog.ops[first_kda:])
        seen += tasks
    assert sorted(seen) == list(range(cfg.n_tasks))
    assert tasks_of((0 + kda0) % 256, cfg)[0] == 0
    assert task_coords(12 * 8 + 8 + 3) == (1, 1, 3)


def test_gemv_weights_issue_before_the_xrdy_poll_and_last_cta_puts_one_group() -> None:
    cfg = LaunchConfig(2, 2)
    launch = build_launch(cfg)
    for prog in launch.programs:
        if prog.role is not Role.GEMV:
            continue
        kinds = [type(op).__name__ for op in prog.ops]
        first_poll = kinds.index("Poll")
        assert isinstance(prog.ops[0], Load) and prog.ops[0].kind is LoadKind.WEIGHT
        assert first_poll > 0 and prog.ops[first_poll].label == "XRDY"
        role_puts = (
            [
                op
                for op in prog.ops[
                    : prog.ops.index(
                        next(op for op in prog.ops if isinstance(op, Begin) and op.task >= 0)
                    )
                ]
                if isinstance(op, Put)
            ]
            if prog.tasks
            else [op for op in prog.ops if isinstance(op, Put)]
        )
        assert len(role_puts) == (1 if prog.cta == GEMV0 + 196 else 2)


def test_publish_drains_and_attn_polls() -> None:
    cfg = LaunchConfig(2, 1)
    prog = build_launch(cfg).programs[0]
    pubs = [op for op in prog.ops if isinstance(op, Publish)]
    assert len(pubs) == 1 and pubs[0].drain and pubs[0].region is Region.XRDY
    labels = [op.label for op in prog.ops if isinstance(op, Poll)][:3]
    assert labels == ["PART", "WGT", "MSQ"]  # CTA 0 gates token 0, then mixes
    local = build_launch(LaunchConfig(2, 1, gate_local=True)).programs[40]
    assert [op.label for op in local.ops if isinstance(op, Poll)][:2] == ["PART", "MSQ"]


@settings(max_examples=10, deadline=None)
@given(configs())
def test_nw_first_moves_the_in_nw_load_and_nothing_else(cfg: LaunchConfig) -> None:
    """The variant issues in_nw with the slice's loads, before the PART put, instead of
    after the MSQ poll; every put, poll and publish stays as it was."""
    seed = dataclasses.replace(cfg, nw_first=False)
    first = dataclasses.replace(cfg, nw_first=True)
    for a in (0, NA - 1):
        ops = {c: build_launch(c).programs[a].ops for c in (seed, first)}
        at = {c: _where_in_nw(o) for c, o in ops.items()}
        assert at[first][0] < at[first][1] and at[seed][0] > at[seed][2]
        assert at[first][3] == at[seed][3]  # one load, used right before the norm
        hand = {
            c: [_key(op) for op in o if isinstance(op, Put | Poll | Publish)]
            for c, o in ops.items()
        }
        assert hand[seed] == hand[first]


def _key(op: Put | Poll | Publish) -> tuple[str, list[int]]:
    return repr(op), np.asarray(op.cells).ravel().tolist()


def _where_in_nw(ops: list) -> tuple[int, int, int, int]:
    """Indices of the in_nw load, the PART put, the MSQ poll, and the in_nw load's use
    counted from the end."""
    load = next(k for k, op in enumerate(ops) if isinstance(op, Load) and op.name == "mix.in_nw")
    part = next(k for k, op in enumerate(ops) if isinstance(op, Put) and op.region is Region.PART)
    msq = next(k for k, op in enumerate(ops) if isinstance(op, Poll) and op.label == "MSQ")
    use = next(k for k, op in enumerate(ops) if isinstance(op, Use) and "mix.in_nw" in op.names)
    return load, part, msq, len(ops) - use


def test_onw_first_asks_for_on_w_in_k_stage_and_moves_nothing_else() -> None:
    seed, first = LaunchConfig(2, 2), LaunchConfig(2, 2, onw_first=True)
    for cta in (0, 100, 255):
        ops = {c: build_launch(c).programs[cta].ops for c in (seed, first)}
        for c, o in ops.items():
            stage = None
            for op in o:
                if isinstance(op, Begin):
                    stage = op.stage
                if isinstance(op, Load) and op.name == "k.on_w":
                    assert stage == ("k.stage" if c.onw_first else "k.norm")
            n_loads = sum(isinstance(op, Load) and op.name == "k.on_w" for op in o)
            assert n_loads == sum(isinstance(op, Begin) and op.stage == "k.norm" for op in o)
        hand = {
            c: [_key(op) for op in o if isinstance(op, Put | Poll | Publish)]
            for c, o in ops.items()
        }
        assert hand[seed] == hand[first]


def test_derived_is_derive_kept_for_the_same_launch_object() -> None:
    a, b = pingpong(PingPongConfig(rounds=3)), pingpong(PingPongConfig(rounds=3))
    assert a == b and a is not b
    ha = derived(a)
    assert derived(a) is ha  # kept: the same tables, the engine's poll plans with them
    hb = derived(b)
    assert hb is not ha and hb.launch is b  # another object is derived anew
    fresh = derive(a)
    assert fresh.producers == ha.producers and fresh.unput == ha.unput
    assert np.array_equal(fresh.put_count, ha.put_count)
    # a few are kept, not every launch ever derived: an old one is derived again
    for rounds in range(1, 12):
        derived(pingpong(PingPongConfig(rounds=rounds)))
    assert derived(a) is not ha


@pytest.mark.parametrize("cfg", [LaunchConfig(2, 2), LaunchConfig(1, 1, gemv_tickets=True)])
def test_op_index_finds_the_polls_and_begins_isinstance_finds(cfg: LaunchConfig) -> None:
    launch = build_launch(cfg)
    index = derive(launch).ops
    assert index is not None
    ops = [op for p in launch.programs for op in p.ops]
    assert index.ops == ops
    assert index.start.tolist() == np.cumsum([0] + [len(p.ops) for p in launch.programs]).tolist()
    assert index.polls().tolist() == [i for i, op in enumerate(ops) if isinstance(op, Poll)]
    assert index.begins().tolist() == [i for i, op in enumerate(ops) if isinstance(op, Begin)]
