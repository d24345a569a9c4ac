"""The trace buffer -> timeline conversion, on a synthetic buffer built to the layout."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kda_kernel.triton import trace as ktrace
from kda_kernel.triton import trace_layout as T
from kda_sim.cli import main
from kda_sim.compare.diff import compare_timelines
from kda_sim.compare.model import model_view
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS, NA
from kda_sim.machine.profile import load_profile
from kda_sim.timeline.model import Timeline


def synthetic(R: int, L: int, kda0: int = 0, tag: int = 777, t0: int = 10**12) -> np.ndarray:
    """A plausible launch: roles then tasks, 100 ns a stage, polls inside their stage."""
    nev = T.record_words(4)
    buf = np.zeros((BLOCKS, nev), dtype=np.int64)
    rng = np.random.default_rng(R * 10 + L)
    for cta in range(BLOCKS):
        w = buf[cta]
        t = t0 + int(rng.integers(0, 200))
        w[T.EV_START], w[T.EV_SMID], w[T.EV_TAG] = t, cta % 132, tag
        for k in range(T.N_ROLE_STAGES):
            if cta < 253:
                w[T.EV_RPOLL + 3 * k : T.EV_RPOLL + 3 * k + 3] = (t + 10, t + 60, 3 + k)
                t += 100
            w[T.EV_ROLE + k] = t
        tasks = [i for i in range(R * 96) if (i + kda0) % BLOCKS == cta]
        for n, i in enumerate(tasks):
            base = T.EV_TASK0 + n * T.TASK_STRIDE
            w[base + T.TASK_ID] = i
            for k in range(T.N_TASK_T):
                w[base + T.TASK_T + k] = t + 100 * k
            for k in range(T.N_TASK_POLL):
                at = base + T.TASK_POLL + 3 * k
                w[at : at + 3] = (t + 100 * k + 100, t + 100 * k + 150, k)
            t += 100 * T.N_TASK_T
        w[T.EV_NTASK] = len(tasks)
        w[T.EV_END] = t + 5
    return buf


@pytest.mark.parametrize(("R", "L", "kda0"), [(1, 1, 0), (2, 2, 5), (4, 1, 0), (4, 4, 200)])
def test_decode_every_stage_and_poll(R: int, L: int, kda0: int) -> None:
    buf = synthetic(R, L, kda0)
    tl = ktrace.decode(buf, R=R, L=L, nb=8, kda0=kda0, tag=777, gpu="synthetic")
    assert len(tl.ctas) == BLOCKS and not tl.deadlock
    assert tl.origin == 0.0
    tasks = sorted(s.task for _, s in tl.stage_spans() if s.name == "k.stage")
    assert tasks == list(range(R * 96)), "every kda task appears once"
    for c in tl.ctas:
        names = [s.name for s in c.stages if s.task < 0]
        if c.role == "attn":
            want = ["slice", "gate", "mix"] if c.cta < R * L else ["slice", "mix"]
            assert names == want
            assert len([p for p in c.polls if p.task < 0]) == len(want)
        elif c.role == "gemv":
            assert names == ["load_x", "gemv0", "gemv1"]
            assert [p.label for p in c.polls if p.task < 0] == ["XRDY"]
        else:
            assert names == [] and c.cta >= 253
        for s in c.stages:
            assert s.start <= s.end
        for p in c.polls:
            assert p.satisfied is not None and p.satisfied >= p.first_issue
        assert c.unit == c.cta % 132
    # the k.gates polls: three batches, in order
    c0 = tl.cta(kda0 % BLOCKS)
    gates = [p for p in c0.polls if p.stage == "k.gates" and p.task == 0]
    assert [p.n_cells for p in gates] == [128 * L, 256 * L, L]
    assert tl.cta(0).polls[0].n_cells == NA * 9 * 2


def test_decode_rejects_other_launch_and_wrong_task_count() -> None:
    buf = synthetic(1, 1)
    with pytest.raises(ktrace.TraceError, match="not this launch"):
        ktrace.decode(buf, R=1, L=1, nb=8, tag=778)
    buf[3, T.EV_NTASK] = 0
    with pytest.raises(ktrace.TraceError, match="kda tasks"):
        ktrace.decode(buf, R=1, L=1, nb=8, tag=777)


def test_written_trace_loads_as_timeline(tmp_path) -> None:  # type: ignore[no-untyped-def]
    tl = ktrace.decode(
        synthetic(2, 2), R=2, L=2, nb=8, tag=777, gpu="synthetic", extra={"command": "test"}
    )
    p = ktrace.write(tl, tmp_path / "t.json")
    back = read_kernel_trace(p)
    assert back.meta.source == "measured" and back.meta.R == 2 and back.meta.L == 2
    assert len(back.ctas) == BLOCKS
    n = sum(len(c.stages) for c in tl.ctas)
    assert sum(len(c.stages) for c in back.ctas) == n
    assert sum(len(c.polls) for c in back.ctas) == sum(len(c.polls) for c in tl.ctas)


def narrow(buf: np.ndarray) -> np.ndarray:
    """What the kernel writes for the 64-bit record buf: every word's low half, and the
    start and end stamps' high halves in their own words (int32 [BLOCKS, NEV])."""
    out = buf.copy()
    out[:, T.EV_START_HI] = buf[:, T.EV_START] >> 32
    out[:, T.EV_END_HI] = buf[:, T.EV_END] >> 32
    return out.astype(np.uint32).view(np.int32)  # wraps: the low halves


@pytest.mark.parametrize(("R", "L"), [(1, 1), (4, 4)])
def test_the_kernels_32_bit_record_widens_to_the_64_bit_one_across_a_wrap(R: int, L: int) -> None:
    # CTAs start 100 ns before the low halves wrap, so most stamps wrap after their start
    buf = synthetic(R, L, t0=(7 << 32) - 100)
    wide = ktrace.widen(narrow(buf), R=R)
    assert ktrace.decode(wide, R=R, L=L, nb=8, tag=777).ctas == (
        ktrace.decode(buf, R=R, L=L, nb=8, tag=777).ctas
    )
    read = {T.EV_START, T.EV_END, T.EV_NTASK, T.EV_TAG, T.EV_SMID, *T.stamp_words(R)}
    read |= {T.EV_TASK0 + n * T.TASK_STRIDE + T.TASK_ID for n in range(T.max_tasks(R))}
    used = sorted(read)
    written = buf[:, used] != 0  # words a CTA left unwritten (no second task) hold nothing
    assert (wide[:, used][written] == buf[:, used][written]).all()


def test_a_stamp_read_just_before_the_start_stays_just_before_it() -> None:
    # another warp may read the clock a little before the warp that read the start did
    buf = synthetic(1, 1, t0=(3 << 32) + 5)
    buf[:, T.EV_ROLE] = buf[:, T.EV_START] - 40
    wide = ktrace.widen(narrow(buf), R=1)
    assert (wide[:, T.EV_ROLE] == buf[:, T.EV_START] - 40).all()


def test_a_cta_longer_than_the_32_bit_reach_is_named() -> None:
    buf = synthetic(1, 1)
    buf[9, T.EV_END] = buf[9, T.EV_START] + (1 << 31)
    with pytest.raises(ktrace.TraceError, match="CTA 9 ran"):
        ktrace.widen(narrow(buf), R=1)


def test_a_buffer_of_the_wrong_shape_is_named() -> None:
    with pytest.raises(ktrace.TraceError, match="shape"):
        ktrace.widen(np.zeros((BLOCKS, 8), dtype=np.int32), R=4)


def record_of(sim: Timeline, tag: int = 777, t0: int = 10**12) -> np.ndarray:
    """The records the kernel would write for the simulated launch ``sim`` (64-bit words,
    as ``widen`` leaves them): what a build of ``sim.meta.gate_local`` stamps, and nothing
    where that build writes nothing (gate_local: the gate's end and the WGT poll site)."""
    m = sim.meta
    buf = np.zeros((BLOCKS, T.record_words(m.R)), dtype=np.int64)

    def ns(t: float) -> int:
        return t0 + round(t)

    for c in sim.ctas:
        w = buf[c.cta]
        w[T.EV_START], w[T.EV_END] = ns(c.start), ns(c.end)
        w[T.EV_SMID], w[T.EV_TAG] = c.unit, tag
        role = {st.name: st for st in c.stages if st.task < 0}
        polls = [p for p in c.polls if p.task < 0]
        sites = T.ATTN_POLLS_GATE_LOCAL if m.gate_local else T.ATTN_POLLS
        if c.role == "gemv":
            sites = T.GEMV_POLLS
        for k, name in enumerate(T.ATTN_STAGES if c.role == "attn" else T.GEMV_STAGES):
            if name in role:
                w[T.EV_ROLE + k] = ns(role[name].end)
            elif not m.gate_local and c.role == "attn":  # CTA t >= S: its gate is skipped
                w[T.EV_ROLE + k] = ns(role["mix"].start)
        for p in polls:
            k = sites.index((p.stage, p.label))
            w[T.EV_RPOLL + 3 * k : T.EV_RPOLL + 3 * k + 3] = (
                ns(p.first_issue),
                ns(p.satisfied),
                p.retries,
            )
        tasks = sorted({st.task for st in c.stages if st.task >= 0})
        for n, task in enumerate(tasks):
            base = T.EV_TASK0 + n * T.TASK_STRIDE
            w[base + T.TASK_ID] = task
            spans = [st for st in c.stages if st.task == task]
            for k, st in enumerate(spans):
                w[base + T.TASK_T + k] = ns(st.start)
            w[base + T.TASK_T + len(spans)] = ns(spans[-1].end)
            for k, p in enumerate(p for p in c.polls if p.task == task):
                at = base + T.TASK_POLL + 3 * k
                w[at : at + 3] = (ns(p.first_issue), ns(p.satisfied), p.retries)
        w[T.EV_NTASK] = len(tasks)
    return buf


@pytest.fixture(scope="module", params=[False, True], ids=["default", "gate_local"])
def simulated(request: pytest.FixtureRequest) -> Timeline:
    return simulate(
        LaunchConfig(2, 1, gate_local=request.param), load_profile("h200"), seed=1
    ).timeline


def test_a_records_decode_is_the_model_s_program(simulated: Timeline) -> None:
    # the records a launch of the simulated configuration leaves decode to the simulator's
    # stages and polls, CTA by CTA: every recorded event has its place in the model
    m = simulated.meta
    tl = ktrace.decode(
        record_of(simulated),
        R=m.R,
        L=m.L,
        nb=m.nb,
        gate_local=m.gate_local,
        tag=777,
        gpu="synthetic",
        nw_first=True,
    )
    assert tl.meta.gate_local == m.gate_local and tl.meta.nw_first
    for got, want in zip(tl.ctas, simulated.ctas, strict=True):
        assert [(s.name, s.task) for s in got.stages] == [(s.name, s.task) for s in want.stages]
        for a, b in zip(got.stages, want.stages, strict=True):
            assert abs(a.start - b.start) <= 1 and abs(a.end - b.end) <= 1, (got.cta, a, b)
        assert [(p.stage, p.task, p.label) for p in got.polls] == [
            (p.stage, p.task, p.label) for p in want.polls
        ]
    assert not model_view(tl).mismatches
    with pytest.raises(InvalidInput, match="differ in nw_first"):
        compare_timelines(tl, simulated, align=False)  # a build of the other load order
    tl.meta.nw_first = False
    cmp = compare_timelines(tl, simulated, align=False)
    assert not cmp.only_real and not cmp.only_sim


def test_gate_local_has_no_gate_and_polls_part_in_the_mix() -> None:
    R, L = 2, 2
    buf = synthetic(R, L)
    # a gate_local build writes neither the gate's end nor the WGT poll site
    buf[:, T.EV_ROLE + 1] = 0
    buf[:, T.EV_RPOLL + 3 : T.EV_RPOLL + 6] = 0
    tl = ktrace.decode(buf, R=R, L=L, nb=8, gate_local=True, tag=777, gpu="synthetic")
    assert tl.meta.gate_local
    for c in tl.ctas[:NA]:
        spans = {s.name: s for s in c.stages if s.task < 0}
        assert list(spans) == ["slice", "mix"]
        assert spans["mix"].start == spans["slice"].end
        polls = [p for p in c.polls if p.task < 0]
        assert [(p.stage, p.label) for p in polls] == [("mix", "PART"), ("mix", "MSQ")]
        assert polls[0].n_cells == NA * R * L * 9 * 2 and polls[0].n_batches == R * L
        assert polls[0].first_issue <= polls[0].satisfied <= polls[1].first_issue


def test_compare_reads_a_gate_local_trace_against_its_simulation(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # kda-sim compare simulates the configuration the trace's meta names, gate_local included
    sim = simulate(LaunchConfig(1, 1, gate_local=True), load_profile("h200"), seed=2).timeline
    tl = ktrace.decode(record_of(sim), R=1, L=1, nb=8, gate_local=True, tag=777, gpu="h200")
    path = ktrace.write(tl, tmp_path / "gate_local.json")
    assert read_kernel_trace(path).meta.gate_local
    assert main(["compare", str(path), "--gpu", "h200", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["config"]["gate_local"] and d["conformance"]["conforms"]
    assert d["comparison"]["matched"] > 500


def synthetic_tickets(
    R: int,
    per_cta: dict[int, list[int]],
    t0: int = 10**12,
    tickets_of: dict[int, list[int]] | None = None,
) -> np.ndarray:
    """A kda_tickets launch: roles as ``synthetic``, then each CTA's tasks (``per_cta``) and
    its takes (one a task and the last, past the items: ticket 96 R + CTA). With
    ``tickets_of`` (the "take" probe: a CTA's tickets, one a task) no take past the items,
    and a task is its CTA's, not its ticket."""
    buf = synthetic(R, 1, t0=t0)
    out = np.zeros((BLOCKS, T.record_words(R, tickets=True)), dtype=np.int64)
    head = T.EV_TASK0
    out[:, :head] = buf[:, :head]
    for cta in range(BLOCKS):
        w = out[cta]
        t = int(w[T.EV_ROLE + T.N_ROLE_STAGES - 1])
        tasks = per_cta.get(cta, [])
        tickets = [*tasks, R * 96 + cta] if tickets_of is None else tickets_of.get(cta, [])
        for m, ticket in enumerate(tickets):
            if m < T.TICKET_TAKE_SLOTS:
                b = T.EV_TAKE0 + m * T.TAKE_STRIDE
                w[b : b + 3] = (t, t + 30, ticket)
            t += 40
            if m == len(tasks):
                break
            if m < T.TICKET_TASK_SLOTS:
                base = T.EV_TASK0 + m * T.TASK_STRIDE
                w[base + T.TASK_ID] = tasks[m]
                for k in range(T.N_TASK_T):
                    w[base + T.TASK_T + k] = t + 100 * k
                for k in range(T.N_TASK_POLL):
                    at = base + T.TASK_POLL + 3 * k
                    w[at : at + 3] = (t + 100 * k + 10, t + 100 * k + 50, k)
            t += 100 * T.N_TASK_T
        w[T.EV_NTASK], w[T.EV_NTAKE] = len(tasks), len(tickets)
        w[T.EV_END] = t + 5
    return out


def _static_with_takes(R: int, kda0: int = 0) -> tuple[dict[int, list[int]], dict[int, list[int]]]:
    """The static placement's tasks a CTA and, for the "take" probe, its tickets: the
    launch's R * 96 tickets in a shuffled order, one a task."""
    per: dict[int, list[int]] = {}
    for i in range(R * 96):
        per.setdefault((i + kda0) % BLOCKS, []).append(i)
    order = [int(x) for x in np.random.default_rng(R).permutation(R * 96)]
    tickets = {c: [order.pop() for _ in ts] for c, ts in per.items()}
    return per, tickets


@pytest.mark.parametrize(("R", "kda0"), [(1, 0), (4, 7)])
def test_a_take_probe_record_keeps_the_static_placement_and_gives_its_takes(
    R: int, kda0: int
) -> None:
    # Build.probe "take": the static build with a take before each task, in the ticket
    # build's record layout; the tasks are the placement's whatever the tickets
    per, tickets = _static_with_takes(R, kda0)
    buf = synthetic_tickets(R, per, tickets_of=tickets)
    wide = ktrace.widen(narrow(buf), R=R, tickets=True)
    tl = ktrace.decode(wide, R=R, L=1, nb=8, kda0=kda0, tag=777, probe_take=True)
    where = {(s.task, c.cta) for c in tl.ctas for s in c.stages if s.name == "k.norm"}
    assert where == {(i, c) for c, ts in per.items() for i in ts}
    takes = tl.meta.extra["ticket_takes"]
    assert sorted(t[3] for t in takes) == list(range(R * 96))
    assert all(ret - issue == 30 for _, issue, ret, _ in takes)
    assert tl.meta.config() == LaunchConfig(R, 1, kda0=kda0)  # not kda_tickets


def test_a_take_probe_record_with_a_take_past_the_tasks_is_refused() -> None:
    per, tickets = _static_with_takes(1)
    tickets[0] = [*tickets[0], 96]  # a kda_tickets CTA's last take, which the probe never makes
    buf = synthetic_tickets(1, per, tickets_of=tickets)
    with pytest.raises(ktrace.TraceError, match="want as many"):
        ktrace.decode(buf, R=1, L=1, nb=8, tag=777, probe_take=True)


def test_a_kda_tickets_record_gives_who_ran_each_task_and_every_take() -> None:
    # tasks 0..95 on CTAs 253..255 and the attn CTAs, in the order a queue might give them
    per: dict[int, list[int]] = {}
    for i in range(96):
        per.setdefault([253, 254, 255, *range(40)][i % 43], []).append(i)
    buf = synthetic_tickets(1, per)
    wide = ktrace.widen(narrow(buf), R=1, tickets=True)
    tl = ktrace.decode(wide, R=1, L=1, nb=8, tag=777, kda_tickets=True)
    where = {(s.task, c.cta) for c in tl.ctas for s in c.stages if s.name == "k.norm"}
    assert where == {(i, c) for c, ts in per.items() for i in ts}
    takes = tl.meta.extra["ticket_takes"]
    assert sorted(t[3] for t in takes) == list(range(96 + BLOCKS))
    assert all(ret - issue == 30 for _, issue, ret, _ in takes)
    assert tl.meta.extra["ticket_unrecorded"] == {"tasks": 0, "takes": 0}
    assert tl.meta.config() == LaunchConfig(1, 1, kda_tickets=True)  # what compare models


def test_a_kda_tickets_cta_past_its_slots_is_counted_not_lost() -> None:
    # CTA 255 runs 10 tasks: 8 recorded, 2 counted; its 11 takes: 9 recorded, 2 counted
    per = {255: list(range(10)), **{c: [10 + c] for c in range(86)}}
    tl = ktrace.decode(synthetic_tickets(1, per), R=1, L=1, nb=8, tag=777, kda_tickets=True)
    assert tl.meta.extra["ticket_unrecorded"] == {"tasks": 2, "takes": 2}
    assert len([s for s in tl.ctas[255].stages if s.name == "k.norm"]) == T.TICKET_TASK_SLOTS


def test_a_kda_tickets_record_that_ran_a_task_twice_is_refused() -> None:
    per = {c: [c] for c in range(96)}
    per[100] = [5]  # task 5 again (and ticket 5 taken twice)
    with pytest.raises(ktrace.TraceError, match="kda tasks"):
        ktrace.decode(synthetic_tickets(1, per), R=1, L=1, nb=8, tag=777, kda_tickets=True)
