"""K1's ticket schedules (LaunchConfig.kda_tickets, gemv_tickets): they build as one
ticket loop every CTA runs after its static role, leave the static launch as it was,
finish on the H200 at one CTA an SM where the static placement deadlocks (gemv_tickets),
and the ticket check says at which residencies."""

from __future__ import annotations

import pytest

from kda_sim.checks.tickets import check_tickets
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import SCHEDULES, LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS, GEMV_TASKS, NA
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import regions
from kda_sim.kernels.k1.tickets import TICKET_NAME
from kda_sim.machine import load_profile
from kda_sim.protocol.tickets import TicketLoop


def _loop(cfg: LaunchConfig) -> TicketLoop:
    launch = build_launch(cfg)
    loops = {id(p.ops[-1]) for p in launch.programs}
    assert len(loops) == 1  # one loop object, the last op of every CTA
    loop = launch.programs[0].ops[-1]
    assert isinstance(loop, TicketLoop)
    return loop


def test_the_static_launch_is_unchanged() -> None:
    cfg = LaunchConfig(2, 2)
    assert not set(SCHEDULES) & set(cfg.to_dict())
    assert TICKET_NAME not in regions(cfg) and cfg.label() == "R=2 L=2 nb=8 kda0=0"
    assert not any(isinstance(op, TicketLoop) for p in build_launch(cfg).programs for op in p.ops)


@pytest.mark.parametrize("R", [1, 4])
def test_the_schedules_build(R: int) -> None:
    kda = _loop(LaunchConfig(R, 2, kda_tickets=True))
    assert kda.n_items == R * 96 and kda.last_ticket == R * 96 + BLOCKS - 1
    both = _loop(LaunchConfig(R, 2, gemv_tickets=True))
    assert both.n_items == GEMV_TASKS + R * 96
    launch = build_launch(LaunchConfig(R, 2, gemv_tickets=True))
    # only the attn CTAs keep a static role: the others start on the loop
    assert [len(p.ops) > 1 for p in launch.programs] == [c < NA for c in range(BLOCKS)]
    assert regions(LaunchConfig(R, 2, gemv_tickets=True))[TICKET_NAME] == 1


def test_a_schedule_must_be_a_bool() -> None:
    with pytest.raises(InvalidInput, match="kda_tickets must be true or false"):
        LaunchConfig(1, 1, kda_tickets=1).validate()  # type: ignore[arg-type]


def test_gemv_tickets_finishes_where_the_static_placement_deadlocks() -> None:
    prof = load_profile("h200-k1")
    static = simulate(LaunchConfig(2, 1), prof, occupancy=1)
    kda = simulate(LaunchConfig(2, 1, kda_tickets=True), prof, occupancy=1)
    gemv = simulate(LaunchConfig(2, 1, gemv_tickets=True), prof, occupancy=1)
    assert static.deadlock and not gemv.deadlock
    # kda tickets alone: the 132 resident CTAs hold kda items that poll PROJ rows of gemv
    # CTAs past 131, which wait for a slot nobody frees
    assert kda.deadlock and "is not resident" in kda.timeline.stuck[0].reason
    # the last taker reset the counter: its last write is a 0 after R 96 + 393 + 256 takes
    writes = sorted(
        (p.time, c.cta) for c in gemv.timeline.ctas for p in c.puts if p.region == TICKET_NAME
    )
    assert len(writes) == GEMV_TASKS + 2 * 96 + BLOCKS + 1


def test_the_ticket_check_names_the_residencies() -> None:
    (gemv,) = check_tickets(build_launch(LaunchConfig(2, 1, gemv_tickets=True)))
    assert gemv.needs_resident == NA and gemv.hangs_at == tuple(range(1, NA))
    assert "polls QK" in gemv.why and f"finishes with {NA} to {BLOCKS}" in gemv.why
    (kda,) = check_tickets(build_launch(LaunchConfig(2, 1, kda_tickets=True)))
    assert 132 in kda.hangs_at and "polls PROJ, put by CTA" in kda.why


def test_the_flags_parse() -> None:
    from kda_sim.commands.common import kernel_config
    from kda_sim.kernels.k1.spec import KERNEL

    cfg = kernel_config(KERNEL, ["--R", "1", "--L", "1", "--gemv-tickets"])
    assert cfg.gemv_tickets and not cfg.kda_tickets and cfg.schedule() == "gemv_tickets"
    assert cfg.to_dict()["gemv_tickets"] is True and "kda_tickets" not in cfg.to_dict()


def test_ticket_unroll_parses_validates_and_round_trips() -> None:
    from kda_sim.commands.common import kernel_config
    from kda_sim.kernels.k1.spec import KERNEL

    cfg = kernel_config(KERNEL, ["--R", "1", "--L", "1", "--kda-tickets", "--ticket-unroll", "2"])
    assert cfg.ticket_unroll == 2 and cfg.label().endswith("kda_tickets unroll 2")
    assert LaunchConfig.from_dict(cfg.to_dict()) == cfg
    assert _loop(cfg).unrolled == 2
    # off: left out of the metadata, as a static launch's was
    assert "ticket_unroll" not in LaunchConfig(1, 1, kda_tickets=True).to_dict()
    with pytest.raises(InvalidInput, match="needs kda_tickets"):
        LaunchConfig(1, 1, ticket_unroll=2).validate()
    with pytest.raises(InvalidInput, match="ticket_unroll = 9"):
        LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=9).validate()


def test_unrolled_copies_pay_cold_code_and_the_loop_does_not() -> None:
    """At R = 4 (384 items, 256 CTAs) some CTAs run a second item: in the loop's one copy
    it runs warm, in an unrolled copy it runs its code the first time (cold_code), as the
    static placement's second task does; a CTA's first item never pays it."""
    prof = load_profile("h200-k1")
    cold = prof.with_params(cold_code=5000.0)

    def span(cfg: LaunchConfig, p) -> float:
        out = simulate(cfg, p, occupancy=2, seed=0)
        assert not out.deadlock
        return out.timeline.makespan

    loop = LaunchConfig(4, 1, kda_tickets=True)
    unrolled = LaunchConfig(4, 1, kda_tickets=True, ticket_unroll=2)
    assert span(loop, cold) == span(loop, prof)
    assert span(unrolled, cold) > span(unrolled, prof) + 4 * 5000.0
    # R = 1: 96 items, no CTA runs a second: the copies change nothing
    one = LaunchConfig(1, 1, kda_tickets=True)
    assert span(one, cold) == span(LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=2), cold)


def test_each_ticket_build_names_its_own_costs() -> None:
    """The loop and the unrolled build are builds of their own (their code is not the
    static build's: both spill); the static launch and its variants are not."""
    from kda_sim.kernels.k1.spec import KERNEL

    assert KERNEL.cost_build(LaunchConfig(1, 1, kda_tickets=True)) == "kda_tickets"
    unrolled = LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=2)
    assert KERNEL.cost_build(unrolled) == "kda_tickets_unrolled"
    assert KERNEL.cost_build(LaunchConfig(1, 1, onw_first=True)) == ""


def test_an_items_k_stage_loads_issue_when_its_take_returns() -> None:
    """Every kda item's k.stage loads issue at its take's return plus the item's prologue,
    in the loop and with the items placed where that run took them (the atomic's return is
    half a round trip after its serialization, the put on TICKET the run records); the
    static placement's tasks take nothing (docs/whatif/ticket_k1.md, "The take's round
    trip in the engine")."""
    from dataclasses import replace

    from kda_sim.kernels.k1.spec import KERNEL
    from kda_sim.protocol.tickets import takes_of

    prof = load_profile("h200-k1").with_params(ticket_item=64.0)
    prof = replace(prof, latency_ns={**prof.latency_ns, "atomic": 400.0})
    half = 200.0
    cfg = LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=3)
    tl = simulate(cfg, prof, occupancy=2).timeline
    first = {(c.cta, ld.task): ld.issue for c in tl.ctas for ld in c.loads if ld.stage == "k.stage"}
    records = tl.meta.extra["ticket_takes"]
    items = [(int(c), ret, int(t)) for c, _i, ret, t in records if t < cfg.n_tasks]
    assert len(items) == cfg.n_tasks
    for cta, ret, t in items:
        assert first[(cta, t)] == pytest.approx(ret + 64.0)
    placed = KERNEL.place_takes(cfg, takes_of(records, cfg.blocks))
    ptl = simulate(placed, prof, occupancy=2).timeline
    for c in ptl.ctas:
        takes = sorted(p.time for p in c.puts if p.region == TICKET_NAME)
        for ld in (ld for ld in c.loads if ld.stage == "k.stage"):
            # the take before it: the last serialized before the load's issue
            at = max(s for s in takes if s < ld.issue)
            assert ld.issue == pytest.approx(at + half + 64.0)
    static = simulate(LaunchConfig(1, 1), prof, occupancy=2).timeline
    assert "ticket_takes" not in static.meta.extra
    assert not any(p.region == TICKET_NAME for c in static.ctas for p in c.puts)


def test_take_ahead_parses_validates_and_round_trips() -> None:
    from kda_sim.commands.common import kernel_config
    from kda_sim.kernels.k1.spec import KERNEL

    argv = ["--R", "1", "--L", "1", "--kda-tickets", "--ticket-unroll", "3", "--take-ahead"]
    cfg = kernel_config(KERNEL, argv)
    assert cfg.take_ahead and cfg.label().endswith("kda_tickets unroll 3 take ahead")
    assert LaunchConfig.from_dict(cfg.to_dict()) == cfg
    assert "take_ahead" not in LaunchConfig(1, 1, kda_tickets=True).to_dict()  # off: left out
    with pytest.raises(InvalidInput, match=r"take_ahead .* needs kda_tickets or gemv_tickets"):
        LaunchConfig(1, 1, take_ahead=True).validate()
    with pytest.raises(InvalidInput, match="take_ahead must be true or false"):
        LaunchConfig(1, 1, kda_tickets=True, take_ahead=1).validate()  # type: ignore[arg-type]


def test_a_take_ahead_is_issued_before_the_roles_last_hand_off() -> None:
    """Built: an attn CTA's take ahead just before its XRDY publish, a gemv CTA's before
    its last PROJ put, none where a CTA has no role. Run: every role CTA's first take is
    issued before its role ends, its first k.stage load at the later of the take's return
    and the role's end, plus the prologue; off, the take issues at the role's end."""
    from dataclasses import replace

    from kda_sim.protocol.ops import Compute, Publish, Put
    from kda_sim.protocol.tickets import TakeAhead

    cfg = LaunchConfig(1, 1, kda_tickets=True, ticket_unroll=3, take_ahead=True)
    progs = build_launch(cfg).programs
    for c, nxt in ((0, Publish), (100, Put)):
        ops = progs[c].ops
        (k,) = [k for k, op in enumerate(ops) if isinstance(op, TakeAhead)]
        assert isinstance(ops[k + 1], nxt) and not any(isinstance(op, Put) for op in ops[k + 2 :])
    assert not any(isinstance(op, TakeAhead) for op in progs[BLOCKS - 1].ops)
    # CTA 252's second group is past the 393: its last stage hands off nothing, so the
    # take is issued after its compute
    ops = progs[252].ops
    (k,) = [k for k, op in enumerate(ops) if isinstance(op, TakeAhead)]
    assert isinstance(ops[k - 1], Compute) and not any(isinstance(op, Put) for op in ops[k:])

    prof = load_profile("h200-k1").with_params(ticket_item=64.0)
    prof = replace(prof, latency_ns={**prof.latency_ns, "atomic": 400.0})
    for ahead in (True, False):
        tl = simulate(replace(cfg, take_ahead=ahead), prof, occupancy=2).timeline
        first_take = {}
        for cta, issue, ret, t in tl.meta.extra["ticket_takes"]:
            if int(cta) not in first_take or issue < first_take[int(cta)][0]:
                first_take[int(cta)] = (issue, ret, int(t))
        for c in tl.ctas[: NA + 10]:
            role_end = max(s.end for s in c.stages if s.task < 0)
            issue, ret, t = first_take[c.cta]
            assert (issue < role_end) if ahead else issue == pytest.approx(role_end)
            loads = [ld.issue for ld in c.loads if ld.stage == "k.stage" and ld.task == t]
            assert loads and min(loads) == pytest.approx(max(ret, role_end) + 64.0)
