"""A CTA's poll: a try costs the round trip, plus ``latency_ns.poll_lane`` for each pair a
thread beyond the first, and a retry the site's back-off (``latency_ns.backoff``) where
the poll's code sleeps; a profile that prices neither runs every poll as before. A poll's
first try waits behind the CTA's own stores and loads not yet used
(``latency_ns.first_try_*``), and a profile without them runs it at once. A put's pairs
are visible behind the CTA's own stores ahead of them (``latency_ns.put_*``), and at once
without them."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from kda_sim.engine import simulate
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.pingpong import build as build_pingpong
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.machine.profile import FIRST_TRY, KIB
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import (
    PAIR_BYTES,
    Barrier,
    Begin,
    End,
    Load,
    LoadKind,
    Poll,
    Publish,
    Put,
    Store,
    Use,
)
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace
from kda_sim.timeline.chrome import to_chrome
from kda_sim.timeline.model import PollRecord

K1 = load_profile("h200-k1")
LANE, BACKOFF = 40.0, 300.0
PRICED = K1.with_params(poll_lane=LANE, backoff=BACKOFF)


def _spans(cfg: LaunchConfig, prof) -> list[tuple[Poll, float, int]]:
    """(the poll's op, its span, its retries) for every poll of a run, matched by the
    order each CTA ran its polls in."""
    ops = {
        cta: [op for op in prog.ops if isinstance(op, Poll)]
        for cta, prog in enumerate(build_launch(cfg).programs)
    }
    out = []
    for c in simulate(cfg, prof).timeline.ctas:
        assert len(c.polls) == len(ops[c.cta])
        for op, rec in zip(ops[c.cta], c.polls, strict=True):
            assert op.label == rec.label
            out.append((op, rec.satisfied - rec.first_issue, rec.retries))
    return out


def test_a_try_costs_its_pairs_a_thread_and_a_retry_its_back_off() -> None:
    cfg = LaunchConfig(1, 1)
    poll, retry = K1.latency_ns["poll"], K1.latency_ns["retry"]
    runs = _spans(cfg, PRICED)
    wide = backed = 0
    for op, span, retries in runs:
        lat = poll + (op.lanes - 1) * LANE
        gap = retry + (BACKOFF if op.backoff else 0.0)
        # first try at issue, each retry a back-off and a try later
        assert span == pytest.approx(lat + retries * (lat + gap))
        wide += op.lanes > 1
        backed += op.backoff and retries > 0
    assert wide and backed  # the run has both kinds of poll (PART, f_a; XRDY, k.conv)


def test_without_the_prices_a_poll_is_the_round_trip_whatever_its_site() -> None:
    cfg = LaunchConfig(1, 1)
    poll, retry = K1.latency_ns["poll"], K1.latency_ns["retry"]
    assert K1.latency_ns["poll_lane"] == K1.latency_ns["backoff"] == 0.0
    runs = _spans(cfg, K1)
    for _op, span, retries in runs:
        assert span == pytest.approx(poll + retries * (poll + retry))
    assert any(op.lanes > 1 for op, _, _ in runs)
    assert any(op.backoff and retries for op, _, retries in runs)


def test_a_kernel_whose_polls_are_one_pair_a_thread_without_back_off_is_unchanged() -> None:
    prof = load_profile("h200", kernel="pingpong")
    priced = prof.with_params(poll_lane=LANE, backoff=BACKOFF)
    cfg = PingPongConfig(rounds=3)
    a = simulate(cfg, prof).timeline
    b = simulate(cfg, priced).timeline
    assert to_chrome(a) == to_chrome(b)


# a poll's first try behind the CTA's own traffic: run 101's probe's figures (an H100)
FIXED, STORE_KIB, LOAD_KIB = 80.0, 10.6, 4.8
PP = load_profile("h200", kernel="pingpong")
BEHIND = PP.with_params(
    first_try_stores=FIXED, first_try_store_kib=STORE_KIB, first_try_load_kib=LOAD_KIB
)


# pingpong's space and a region of 128 pairs nobody polls, for the consumer to put
SPACE = CellSpace.from_sizes({"VAL": 1, "OUT": 128})


def _consumer(*middle: object) -> list[PollRecord]:
    """The pingpong consumer's polls where it polls its value (waiting for the producer),
    runs ``middle``, polls the value again (there by then: one try) and once more; the
    records of the three, run folded and unfolded (which must agree)."""
    cfg = PingPongConfig(rounds=1)
    base = build_pingpong(cfg)
    val = next(op for op in base.programs[1].ops if isinstance(op, Poll))
    ops = (Begin("consume"), val, *middle, val, val, End("consume"))
    launch = Launch(cfg, SPACE, (base.programs[0], CtaProgram(1, "consumer", (), ops)))
    out = []
    for prof in (BEHIND, PP):
        folded = simulate(cfg, prof, launch=launch).timeline.ctas[1]
        unfolded = simulate(cfg, prof, launch=launch, fold_events=False).timeline.ctas[1]
        assert folded == unfolded
        out.append(folded.polls)
    assert [_span(r) for r in out[1]][1:] == [PP.latency_ns["poll"]] * 2  # unset: at once
    return out[0]


def _span(rec: PollRecord) -> float:
    return rec.satisfied - rec.first_issue


def _stores(kib: int) -> Store:
    return Store("s", kib * KIB)


@pytest.mark.parametrize("kib", [8, 16, 32])
def test_a_first_try_waits_behind_the_ctas_stores_at_the_set_rate(kib: int) -> None:
    poll_ns = PP.latency_ns["poll"]
    _, again, third = _consumer(_stores(kib))
    assert again.retries == 0  # the value was there: one try, behind the stores
    assert _span(again) == pytest.approx(poll_ns + FIXED + kib * STORE_KIB)
    assert _span(third) == poll_ns  # the stores are behind the try before it


def test_a_first_try_waits_behind_loads_not_yet_used_and_put_pairs() -> None:
    poll_ns = PP.latency_ns["poll"]
    unused = Load("l", LoadKind.STAGING, 16 * KIB, "loads used after the poll", hbm=False)
    _, again, _ = _consumer(unused)
    assert _span(again) == pytest.approx(poll_ns + 16 * LOAD_KIB)
    _, used, _ = _consumer(unused, Use(("l",)))  # used before the poll: not waited behind
    assert _span(used) == poll_ns
    out = SPACE.gid(1, np.arange(128))
    _, after_put, _ = _consumer(Put(1, out))  # 128 pairs: 1 KiB
    assert _span(after_put) == pytest.approx(poll_ns + FIXED + 128 * PAIR_BYTES / KIB * STORE_KIB)
    # a publish drains the stores before its flag: only the flag's pair is behind the try
    _, published, _ = _consumer(_stores(32), Publish(1, out[:1]))
    assert _span(published) == pytest.approx(poll_ns + FIXED + PAIR_BYTES / KIB * STORE_KIB)


def test_without_the_first_try_figures_a_poll_after_traffic_is_one_round_trip() -> None:
    assert all(PP.latency_ns[n] == 0.0 for n in FIRST_TRY)
    cfg = PingPongConfig(rounds=1)
    base = build_pingpong(cfg)
    val = next(op for op in base.programs[1].ops if isinstance(op, Poll))
    ops = (Begin("consume"), val, _stores(32), val, End("consume"))
    launch = Launch(cfg, SPACE, (base.programs[0], CtaProgram(1, "consumer", (), ops)))
    polls = simulate(cfg, PP, launch=launch).timeline.ctas[1].polls
    assert _span(polls[1]) == PP.latency_ns["poll"]


def test_only_the_first_try_waits_the_retries_keep_their_period() -> None:
    """A poll that waits for its value, issued right after 32 KiB of stores: its first
    try returns later by the wait; each retry after costs a try, as without it."""
    cfg = PingPongConfig(rounds=1)
    base = build_pingpong(cfg)
    val = next(op for op in base.programs[1].ops if isinstance(op, Poll))
    ops = (Begin("consume"), _stores(32), val, End("consume"))
    launch = Launch(cfg, SPACE, (base.programs[0], CtaProgram(1, "consumer", (), ops)))
    poll_ns, retry = PP.latency_ns["poll"], PP.latency_ns["retry"]
    wait = FIXED + 32 * STORE_KIB
    for prof, behind in ((BEHIND, wait), (PP, 0.0)):
        (rec,) = simulate(cfg, prof, launch=launch).timeline.ctas[1].polls
        assert rec.retries > 0  # it waited for the producer's put
        assert _span(rec) == pytest.approx(behind + poll_ns + rec.retries * (poll_ns + retry))


def test_the_first_try_wait_is_on_k1s_polls_after_k_stages_loads() -> None:
    """K1's k.conv poll comes right after k.stage asked for its staging loads (used after
    the poll): its first try waits behind their bytes, the first task's at least."""
    cfg = LaunchConfig(1, 1)
    prof = K1.with_params(first_try_load_kib=LOAD_KIB)
    plain, behind = simulate(cfg, K1).timeline, simulate(cfg, prof).timeline
    kib = sum(s.nbytes for s in behind.ctas[0].loads if s.stage == "k.stage") / KIB
    grew = [
        _span(b) - _span(a)
        for ca, cb in zip(plain.ctas, behind.ctas, strict=True)
        for a, b in zip(ca.polls, cb.polls, strict=True)
        if b.stage == "k.conv" and a.retries == b.retries == 0
    ]
    assert grew  # polls that passed at once both ways
    assert max(grew) == pytest.approx(kib * LOAD_KIB)


# a put's pairs behind the CTA's own stores ahead of them (the first try's store pipe),
# on a 10 ns round trip: the consumer retries often enough that any shift of a put's
# visibility shows in when it is seen
PUT_FIXED, PUT_KIB = 88.0, 9.9
FINE = PP.with_params(poll=10.0)
PUTS_BEHIND = FINE.with_params(put_stores=PUT_FIXED, put_store_kib=PUT_KIB)


def _producer(*middle: object) -> PollRecord:
    """The pingpong consumer's one poll of the value where the producer runs ``middle``
    between its compute and its put (run folded and unfolded, which must agree), on the
    profile with the put's figures; its visibility without them is checked too."""
    cfg = PingPongConfig(rounds=1)
    base = build_pingpong(cfg)
    ops = list(base.programs[0].ops)
    at = next(i for i, op in enumerate(ops) if isinstance(op, Put))
    ops[at:at] = middle
    launch = Launch(cfg, SPACE, (CtaProgram(0, "producer", (), tuple(ops)), base.programs[1]))
    out = []
    for prof in (PUTS_BEHIND, FINE):
        folded = simulate(cfg, prof, launch=launch).timeline.ctas[1]
        unfolded = simulate(cfg, prof, launch=launch, fold_events=False).timeline.ctas[1]
        assert folded == unfolded
        out.append(folded.polls[0])
    assert out[1].satisfied == pytest.approx(_seen(out[1], out[1].put_time))  # unset: no wait
    return out[0]


def _seen(rec: PollRecord, put_left: float) -> float:
    """When a poll that retries with no back-off sees a pair whose put left the SM at
    ``put_left``: the first try issued once it is visible, returned."""
    lat = FINE.latency_ns
    poll_ns, gap = lat["poll"], lat["poll"] + lat["retry"]
    visible = put_left + lat["visibility_same_xcd"]
    assert rec.retries > 0 and visible > rec.first_issue  # the poll waited for it
    issue = rec.first_issue + gap
    while issue < visible:
        issue += gap
    return issue + poll_ns


@pytest.mark.parametrize("kib", [8, 16, 32])
def test_a_put_is_visible_behind_the_ctas_stores_ahead_of_it(kib: int) -> None:
    rec = _producer(_stores(kib))
    assert rec.satisfied == pytest.approx(_seen(rec, rec.put_time + PUT_FIXED + kib * PUT_KIB))


def test_a_put_waits_behind_earlier_put_pairs_not_behind_a_drain_nor_alone() -> None:
    out = SPACE.gid(1, np.arange(128))
    rec = _producer(Put(1, out))  # 128 pairs: 1 KiB ahead of the value's pair
    expect = rec.put_time + PUT_FIXED + 128 * PAIR_BYTES / KIB * PUT_KIB
    assert rec.satisfied == pytest.approx(_seen(rec, expect))
    # a publish drains the stores before its flag: only its flag's pair is ahead
    rec = _producer(_stores(32), Publish(1, out[:1]))
    expect = rec.put_time + PUT_FIXED + PAIR_BYTES / KIB * PUT_KIB
    assert rec.satisfied == pytest.approx(_seen(rec, expect))
    rec = _producer()  # nothing ahead of the put: visible after the visibility alone
    assert rec.satisfied == pytest.approx(_seen(rec, rec.put_time))
    # a poll's first try left behind the stores and pairs before it: none ahead of the put
    own = poll("OUT", out[:1].reshape(1, 1), width=1)
    rec = _producer(_stores(32), Put(1, out[:1]), own)
    assert rec.satisfied == pytest.approx(_seen(rec, rec.put_time))


def test_a_put_behind_stores_delays_its_hand_off_in_k1() -> None:
    """K1 at 4 x 4: k.recur puts ONRM behind its 32 KiB of state, so the k.norm polls that
    wait for it see it later than the plain run's; the slices, ahead of every put, do not
    move."""
    cfg = LaunchConfig(4, 4)
    plain = simulate(cfg, K1).timeline
    behind = simulate(cfg, K1.with_params(put_stores=PUT_FIXED, put_store_kib=PUT_KIB)).timeline

    def norm_seen(tl) -> float:
        waited = [p for c in tl.ctas for p in c.polls if p.stage == "k.norm" and p.retries]
        assert waited
        return float(np.median([p.satisfied - p.put_time for p in waited]))

    assert norm_seen(behind) > norm_seen(plain) + PUT_FIXED
    for a, b in zip(plain.ctas, behind.ctas, strict=True):
        assert [s for s in a.stages if s.name == "slice"] == [
            s for s in b.stages if s.name == "slice"
        ]


def test_nominal_costs_kept_a_program_follow_the_profile_run() -> None:
    """A program's nominal barrier latencies and compute costs, kept while it lives
    (``cta._nominal``), are those of the profile the launch runs: a launch on another
    profile after one on the first equals that launch run with nothing kept."""
    from kda_sim.engine import cta
    from kda_sim.kernels.registry import spec_for
    from kda_sim.machine.costs import with_kernel_costs

    cfg = LaunchConfig(2, 2)
    first = with_kernel_costs(load_profile("mi355x"), spec_for(cfg))
    key = next(iter(first.costs))
    base, per = first.costs[key]
    other = first.with_params(
        barrier=first.latency_ns["barrier"] * 3, **{f"cost_{key}": (base * 2, per)}
    )
    a = simulate(cfg, first)
    b = simulate(cfg, other)  # the programs' values were made for ``first``
    cta._NOMINAL.clear()
    fresh = simulate(cfg, other)
    assert b.timeline == fresh.timeline
    assert a.timeline.makespan != b.timeline.makespan  # (the profiles differ where it shows)


def test_kept_steps_follow_the_hand_off_table_run() -> None:
    """A program's kept steps hold its polls' plans (``cta._nominal``), which its launch's
    hand-off table decides: a launch that shares programs with another but not its table
    (a mutant whose put names other pairs) runs with its own plans, as with nothing kept."""
    from kda_sim.engine import cta
    from kda_sim.engine.plans import poll_plan
    from kda_sim.kernels.k1.mutations import wrong_index_put
    from kda_sim.protocol.handoffs import derived, handoffs_of

    cfg, prof = LaunchConfig(2, 2), load_profile("mi355x")
    case = wrong_index_put(cfg, prof)
    assert case.launch is not None
    base, mutant = handoffs_of(cfg), derived(case.launch)
    # (the case matters: a program the launches share polls a set the tables disagree on)
    shared = [
        ref
        for ref, _ in mutant.polls
        if ref[0] != 0 and poll_plan(base, ref).producers != poll_plan(mutant, ref).producers
    ]
    assert shared
    simulate(cfg, prof)  # keeps the shared programs' steps with the base table's plans
    kept = simulate(cfg, prof, launch=case.launch)
    cta._NOMINAL.clear()
    fresh = simulate(cfg, prof, launch=case.launch)
    assert kept.timeline == fresh.timeline


def test_flagged_loads_of_equal_cells_share_one_tuple_in_their_steps() -> None:
    """A nominal program's flagged loads carry their cells as one tuple a set of equal
    cells, across the launch's programs (``plans.flagged_reads``): ``_check_flagged``
    keeps the tuples it found all stored by identity, so equal cells must be one object."""
    from kda_sim.engine import cta
    from kda_sim.protocol.handoffs import handoffs_of

    cfg = LaunchConfig(4, 2)
    simulate(cfg, load_profile("mi355x"))  # keeps each program's steps (cta._NOMINAL)
    flagged = [
        (op, v)
        for prog in handoffs_of(cfg).launch.programs
        for _, kind, op, v in cta._NOMINAL[id(prog)][2]
        if kind == cta._FLAGGED
    ]
    assert len(flagged) > 1
    assert all(v == op.reads for op, v in flagged)
    assert len({id(v) for _, v in flagged}) == len({v for _, v in flagged})


def test_a_puts_step_carries_the_ref_its_pollers_producers_hold() -> None:
    """A nominal program's puts carry their ref as the one tuple every poll plan's
    producers hold (``plans.put_ref``): ``World.put_done``'s and ``put_events``' look-ups
    by a producer end at the key's identity, not at a compare of equal tuples."""
    from kda_sim.engine import cta
    from kda_sim.engine.plans import poll_plan
    from kda_sim.protocol.handoffs import handoffs_of

    cfg = LaunchConfig(4, 2)
    simulate(cfg, load_profile("mi355x"))  # keeps each program's steps (cta._NOMINAL)
    ho = handoffs_of(cfg)
    producers = [p for ref, _ in ho.polls for p in poll_plan(ho, ref).producers]
    assert len({id(p) for p in producers}) == len(set(producers))  # equal refs: one object
    held = {id(p) for p in producers}
    refs = [
        v[0]
        for prog in ho.launch.programs
        for _, kind, _, v in cta._NOMINAL[id(prog)][2]
        if kind in (cta._PUT, cta._PUBLISH)
    ]
    waited = [r for r in refs if r in set(producers)]
    assert waited
    assert all(id(r) in held for r in waited)


@pytest.mark.parametrize("gpu", ["mi355x", "h100"])
def test_nominal_steps_equal_those_made_one_op_at_a_time(gpu: str) -> None:
    """A program's nominal steps, laid in from its kinds' fused plan with each kind's
    values asked once a distinct question (``cta._nominal``), equal the steps made one op
    at a time: each op's value asked of the profile and the table, then ``_fused`` over
    the ops (h100's profile keeps a shared stage's computes apart from their Use)."""
    from kda_sim.engine import cta
    from kda_sim.engine.plans import flagged_reads, poll_plan, put_record_fields, put_ref
    from kda_sim.engine.sampler import Sampler
    from kda_sim.kernels.registry import spec_for
    from kda_sim.machine.costs import with_kernel_costs
    from kda_sim.protocol.handoffs import handoffs_of

    cfg = LaunchConfig(2, 2)
    prof = with_kernel_costs(load_profile(gpu), spec_for(cfg))
    ho = handoffs_of(cfg)
    latency = Sampler(prof, None, 0.15).fixed()[0]
    priced = cta._priced(prof)
    apart = (*(prof.share_keys if prof.unit_share else ()), *prof.compute_front)
    kept = 0
    for prog in ho.launch.programs:
        kinds = cta.op_kinds(prog.ops)
        assert kinds == cta._kinds_by_class(prog.ops)
        vals: list[Any] = []
        for i, (kind, op) in enumerate(zip(kinds, prog.ops, strict=True)):
            ref = (prog.cta, i)
            if kind == cta._BARRIER:
                vals.append(latency("barrier"))
            elif kind == cta._COMPUTE:
                vals.append(prof.cost(op.cost, op.units))
            elif kind == cta._POLL:
                try_, retry = cta.poll_try(op, latency, priced), cta.poll_retry(op, latency, priced)
                vals.append((poll_plan(ho, ref), try_, retry))
            elif kind == cta._FLAGGED:
                vals.append(flagged_reads(ho).setdefault(op.reads, op.reads))
            elif kind in (cta._PUT, cta._PUBLISH):
                vals.append((put_ref(ho, ref), put_record_fields(ho, ref, op)))
            else:
                vals.append(0.0)
        want = cta._fused(zip(range(len(vals)), kinds, prog.ops, vals, strict=True), apart)
        cta._NOMINAL.pop(id(prog), None)
        got = cta._nominal(prog, kinds, prof, latency, ho)
        assert got == want
        kept += sum(k == cta._USE for _, k, _, _ in got)
    assert kept or not apart  # (h100: a Use left alone, its compute one _share may scale)


@pytest.mark.parametrize("seed, fold", [(None, True), (3, True), (None, False)])
def test_every_record_a_launch_makes_has_every_field_set(
    monkeypatch: pytest.MonkeyPatch, seed: int | None, fold: bool
) -> None:
    """The engine makes its records without their classes' ``__init__`` (``cta._new``),
    storing each field itself: every field of every record a launch leaves (and of the
    world's ``PutDone``s) is set, each record equal to the one its class makes of the
    same fields. A field added to a record and not set by the engine fails here."""
    import importlib
    from dataclasses import fields

    from kda_sim.engine.world import World

    worlds: list[World] = []

    class Kept(World):
        def __post_init__(self) -> None:
            super().__post_init__()
            worlds.append(self)

    # (the module, not the function the package names ``simulate``)
    monkeypatch.setattr(importlib.import_module("kda_sim.engine.simulate"), "World", Kept)
    tl = simulate(LaunchConfig(2, 2), load_profile("mi355x"), seed=seed, fold_events=fold).timeline
    (world,) = worlds
    records = [r for c in tl.ctas for r in (*c.stages, *c.polls, *c.puts, *c.loads)]
    records += world.put_done.values()
    assert {type(r).__name__ for r in records} == {
        "StageSpan",
        "PollRecord",
        "PutRecord",
        "LoadSpan",
        "PutDone",
    }
    for r in records:
        names = [f.name for f in fields(r)]
        assert all(hasattr(r, n) for n in names), (type(r).__name__, r)
        assert r == type(r)(**{n: getattr(r, n) for n in names})


def test_running_ops_reads_the_names_the_ctas_loop_keeps() -> None:
    """``running_ops`` reads a suspended CTA's run and op number from its loop's locals by
    name (``self``, ``k``): renaming either in ``CtaRun.run`` would leave a stopped launch's
    report without its ops, so the names are pinned here, where a rename fails at once."""
    from kda_sim.engine.cta import CtaRun

    names = CtaRun.run.__code__.co_varnames
    assert names[0] == "self"
    assert "k" in names


def test_adjacent_ops_the_loop_runs_alike_are_one_step() -> None:
    """``cta._fused``: a barrier, a stage's end and the next stage's begin that follow each
    other are one step, a bit of its kind each, its op the begin and its value the
    barrier's latency; a ``Use`` and the compute after it are one step holding the
    compute's cost, unless ``_share`` may scale that compute. Nothing else joins: two
    ends, an end after a begin, a second barrier."""
    from kda_sim.engine import cta
    from kda_sim.protocol.ops import Barrier, Compute

    ops = (
        Barrier(),  # 0: a whole seam
        End("s"),
        Begin("t", 0),
        Compute("a"),  # 3: alone (no Use before it)
        Use(("x",)),  # 4: with the compute after it
        Compute("a"),
        Use(("y",)),  # 6: alone, its compute a stage _share may scale
        Compute("shared"),
        End("t"),  # 8: an end and a begin
        Begin("u"),
        Barrier(),  # 10: a barrier and a begin
        Begin("v"),
        End("v"),  # 12: alone (after a begin)
        End("w"),  # 13: alone (after an end)
        Barrier(),  # 14: alone (a barrier after it)
        Barrier(),  # 15: a barrier and an end
        End("x"),
    )
    kinds = cta.op_kinds(ops)
    vals = [1.0 if k == cta._BARRIER else 0.0 for k in kinds]
    vals[3], vals[5], vals[7] = 2.0, 3.0, 4.0  # the computes' costs
    out = cta._fused(zip(range(len(ops)), kinds, ops, vals, strict=True), ("shared",))
    seam = cta._BARRED | cta._END | cta._BEGIN
    assert out == (
        (0, seam, ops[2], 1.0),
        (3, cta._COMPUTE, ops[3], 2.0),
        (4, cta._USED, ops[4], 3.0),
        (6, cta._USE, ops[6], 0.0),
        (7, cta._COMPUTE, ops[7], 4.0),
        (8, cta._END | cta._BEGIN, ops[9], 0.0),
        (10, cta._BARRED | cta._BEGIN, ops[11], 1.0),
        (12, cta._END, ops[12], 0.0),
        (13, cta._END, ops[13], 0.0),
        (14, cta._BARRIER, ops[14], 1.0),
        (15, cta._BARRED | cta._END, ops[15], 1.0),
    )


@pytest.mark.parametrize("barriers", [10, 100])
@pytest.mark.parametrize("publish", [False, True])
def test_a_drain_from_before_the_clock_meets_the_cta_ends_at_the_later(
    barriers: int, publish: bool
) -> None:
    """A CTA that stores 1 KiB, then runs ``barriers`` barriers ahead of the clock and
    drains (retiring, or a publish first): folded, it drains from before the clock meets
    its time, and goes on at the later of that time and the last ack (its store's ack after
    the barriers' 100 ns, before their 1,000), as unfolded, where it sleeps to its time
    first; the same records, and its end where each says."""
    cfg = PingPongConfig(rounds=1)
    base = build_pingpong(cfg)
    flag = (Publish(1, SPACE.gid(1, np.arange(1))),) if publish else ()
    ops = (Begin("consume"), Store("s", KIB), *[Barrier()] * barriers, *flag, End("consume"))
    launch = Launch(cfg, SPACE, (base.programs[0], CtaProgram(1, "consumer", (), ops)))
    folded = simulate(cfg, PP, launch=launch).timeline.ctas[1]
    unfolded = simulate(cfg, PP, launch=launch, fold_events=False).timeline.ctas[1]
    assert folded == unfolded
    lat = PP.latency_ns
    ack = lat["store_ack"] + KIB / PP.unit_bytes_per_ns  # alone in HBM: at the unit's cap
    ends = max(barriers * lat["barrier"], ack) + (lat["barrier"] if publish else 0.0)
    assert folded.end - folded.start == pytest.approx(ends)


@pytest.mark.parametrize("seed", [None, 3])
def test_a_ctas_attributes_are_its_slots(monkeypatch: pytest.MonkeyPatch, seed: int | None) -> None:
    """Every attribute a ``CtaRun`` holds through a launch is one of its ``__slots__`` (a
    read of one is an offset, where an instance past 30 attributes looks each up in a
    dict): nothing is left in its ``__dict__`` but what ``CounterOps`` keeps there. An
    attribute set in ``__init__`` and not named in the slots fails here."""
    import importlib

    from kda_sim.engine.cta import CtaRun

    runs: list[CtaRun] = []

    class Kept(CtaRun):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            runs.append(self)

    monkeypatch.setattr(importlib.import_module("kda_sim.engine.simulate"), "CtaRun", Kept)
    simulate(LaunchConfig(2, 2), load_profile("mi355x"), seed=seed)
    assert runs
    assert {n for r in runs for n in vars(r)} <= {"taken_ahead", "computes"}
