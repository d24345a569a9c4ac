"""The engine: determinism, in-order retirement, the bandwidth bound, residency."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import load_profile
from kda_sim.timeline.chrome import to_chrome

MI355X = load_profile("mi355x")
H200 = load_profile("h200-stock")  # the seed's build: the GPU's own figures


def test_same_seed_same_timeline_other_seed_other_timeline() -> None:
    cfg = LaunchConfig(2, 1)
    a = simulate(cfg, MI355X, seed=7).timeline
    b = simulate(cfg, MI355X, seed=7).timeline
    c = simulate(cfg, MI355X, seed=8).timeline
    assert to_chrome(a) == to_chrome(b)
    assert a.makespan != c.makespan
    assert simulate(cfg, MI355X).timeline == simulate(cfg, MI355X).timeline


def _polls_behind_weights(prof):
    """Slow HBM so that rg0's weights are still streaming when XRDY is set."""
    slow = prof.with_params(hbm_bytes_per_ns=400.0)
    tl = simulate(LaunchConfig(1, 1), slow).timeline
    out = []
    for c in tl.ctas:
        for p in c.polls:
            if p.label != "XRDY":
                continue
            earlier = [ld for ld in c.loads if ld.issue <= p.first_issue and ld.kind == "weight"]
            out.append((p, max(ld.done for ld in earlier)))
    return out


def test_amd_poll_returns_after_every_earlier_load() -> None:
    pairs = _polls_behind_weights(MI355X)
    assert len(pairs) == 197
    assert all(p.satisfied >= done for p, done in pairs)
    assert all(p.behind_loads and p.behind_weight_bytes > 0 for p, _ in pairs)


def test_nvidia_poll_need_not_wait_for_earlier_loads() -> None:
    pairs = _polls_behind_weights(H200)
    assert any(p.satisfied < done for p, done in pairs)


@settings(max_examples=12, deadline=None)
@given(
    R=st.integers(1, 4),
    L=st.integers(1, 2),
    gpu=st.sampled_from(["mi355x", "h200"]),
    bw=st.floats(300.0, 20000.0),
    seed=st.one_of(st.none(), st.integers(0, 1000)),
)
def test_makespan_never_beats_bytes_over_bandwidth(R, L, gpu, bw, seed) -> None:
    prof = load_profile(gpu).with_params(hbm_bytes_per_ns=bw)
    res = simulate(LaunchConfig(R, L), prof, seed=seed, occupancy=2)
    assert res.hbm_bytes > 90e6  # the in_proj weights alone are 90.1 MB
    assert res.timeline.makespan >= res.hbm_bytes / bw


def _small_gpu(units: int):
    return dataclasses.replace(H200, name=f"h200-{units}", units=units)


def test_residency_short_of_blocks_deadlocks_with_not_resident_producers() -> None:
    tl = simulate(LaunchConfig(4, 2), H200, occupancy=1).timeline  # 132 slots for 256 CTAs
    assert tl.deadlock and tl.makespan is None
    started = [c.cta for c in tl.ctas if c.start is not None]
    assert started == list(range(132))  # in-order dispatch, nobody ever finishes
    never = {s.cta for s in tl.stuck if s.stage == "dispatch"}
    assert never == set(range(132, 256))
    waiting = [s for s in tl.stuck if s.stage != "dispatch"]
    assert waiting and all(s.producer is not None for s in waiting)
    assert all(
        tl.ctas[s.producer].start is None or tl.ctas[s.producer].end is None for s in waiting
    )
    assert any("not resident" in s.reason for s in waiting)


def test_ctas_past_the_slots_start_when_a_slot_frees() -> None:
    # 253 slots for 256 CTAs: CTAs 253..255 start only when a CTA ends; at R=3 the tasks
    # on 248..252 need their siblings 253..255, but CTAs whose tasks do not (e.g. 100)
    # end and free slots, so the launch finishes
    gpu = _small_gpu(253)
    for R in (1, 3):
        tl = simulate(LaunchConfig(R, 1), gpu, occupancy=1).timeline
        assert not tl.deadlock
        first_end = min(c.end for c in tl.ctas[:253])
        assert all(c.start >= first_end for c in tl.ctas[253:])
    gates_248 = next(s for s in tl.ctas[248].stages if s.name == "k.gates")
    conv_253 = next(s for s in tl.ctas[253].stages if s.name == "k.conv")
    assert gates_248.end > conv_253.end


@pytest.mark.parametrize("gpu", ["mi355x", "mi300x", "h200"])
def test_every_cta_runs_every_stage_of_every_task(gpu: str) -> None:
    cfg = LaunchConfig(2, 1)
    tl = simulate(cfg, load_profile(gpu)).timeline
    assert not tl.deadlock
    kstages = [s for c in tl.ctas for s in c.stages if s.task >= 0]
    assert len(kstages) == 5 * cfg.n_tasks
    for c in tl.ctas:
        assert all(a.end <= b.start + 1e-9 for a, b in zip(c.stages, c.stages[1:], strict=False))
        if c.stages:  # CTAs 253..255 have nothing to do at R = 2
            assert c.start <= c.stages[0].start and c.stages[-1].end <= c.end
        for p in c.polls:
            assert p.satisfied >= p.first_issue and p.retries >= 0
            if p.producer is not None:
                assert p.put_time <= p.satisfied


def _streamed(prof=H200, **params):
    return dataclasses.replace(prof.with_params(**params), streamed_weights=True)


def test_streamed_weights_issue_when_the_gemv_stage_asks_for_them() -> None:
    tl = simulate(LaunchConfig(1, 1), _streamed(), occupancy=2).timeline
    gemv = [c for c in tl.ctas if c.role == "gemv"]
    assert len(gemv) == 197
    for c in gemv:
        begins = {s.name: s.start for s in c.stages}
        xrdy = next(p for p in c.polls if p.label == "XRDY")
        for ld in c.loads:
            if ld.kind == "weight":
                assert ld.stage in ("gemv0", "gemv1")
                assert ld.issue >= xrdy.satisfied
                assert ld.issue == pytest.approx(begins[ld.stage], abs=1e-6)


def test_streamed_gemv_takes_the_longer_of_its_stream_and_its_compute() -> None:
    cost = 40_000.0  # ns a group: far longer than any group's stream
    slow = simulate(LaunchConfig(1, 1), _streamed(cost_gemv=(cost, 0.0)), occupancy=2).timeline
    held = simulate(
        LaunchConfig(1, 1), H200.with_params(cost_gemv=(cost, 0.0)), occupancy=2
    ).timeline
    for tl, extra in ((slow, 0.0), (held, 1.0)):
        durs = [s.dur for c in tl.ctas for s in c.stages if s.name in ("gemv0", "gemv1")]
        assert min(durs) >= cost
        if extra:  # held weights: the compute follows the group's loads
            assert max(durs) > cost + 1000.0
        else:  # streamed: the stream ran under the compute
            assert max(durs) < cost + 200.0


def _stage_durs(tl, stage: str) -> tuple[list[float], list[float]]:
    """(first task's, later tasks') durations of a kda stage over the CTAs."""
    first: list[float] = []
    later: list[float] = []
    for c in tl.ctas:
        tasks = sorted({s.task for s in c.stages if s.task >= 0})
        for s in c.stages:
            if s.task >= 0 and (stage == "" or s.name == stage):
                (later if tasks.index(s.task) else first).append(s.dur)
    return first, later


def test_cold_code_lengthens_each_stage_of_a_ctas_later_tasks_only() -> None:
    cold = 2000.0
    warm = simulate(LaunchConfig(4, 1), H200, occupancy=2).timeline
    tl = simulate(LaunchConfig(4, 1), H200.with_params(cold_code=cold), occupancy=2).timeline
    _, later = _stage_durs(tl, "")
    assert len(later) == 128 * 5  # 384 tasks on 256 CTAs: 128 run a second, 5 stages each
    assert min(later) >= cold
    assert min(_stage_durs(warm, "")[1]) < cold
    # k.stage waits for no other CTA: the first task's are what they were without it
    assert sorted(_stage_durs(tl, "k.stage")[0]) == sorted(_stage_durs(warm, "k.stage")[0])


def test_a_profile_made_without_the_optional_latencies_runs_as_if_they_were_0() -> None:
    lat = {k: v for k, v in H200.latency_ns.items() if k != "cold_code"}
    bare = dataclasses.replace(H200, latency_ns=lat)
    a = simulate(LaunchConfig(4, 1), bare, occupancy=2).timeline
    b = simulate(LaunchConfig(4, 1), H200, occupancy=2).timeline
    assert a.makespan == b.makespan


@pytest.mark.parametrize("shape", [(1, 1), (2, 2)])
def test_nw_first_takes_the_in_nw_round_trip_off_the_path_into_xrdy(shape) -> None:
    """On the MI355X (a poll retires behind every earlier load) the seed's in_nw load sits
    between the MSQ poll and the x rows; asked with the slice's loads it has long returned."""
    gap = {}
    for nw_first in (False, True):
        tl = simulate(LaunchConfig(*shape, nw_first=nw_first), MI355X).timeline
        gap[nw_first] = [
            next(s.end for s in c.stages if s.name == "mix")
            - next(p.satisfied for p in c.polls if p.label == "MSQ")
            for c in tl.ctas
            if c.role == "attn"
        ]
        assert tl.meta.nw_first is nw_first
    hbm = MI355X.latency_ns["hbm_load"]
    assert all(a - b > 0.5 * hbm for a, b in zip(gap[False], gap[True], strict=True))


@pytest.mark.parametrize("fold", [True, False])
def test_a_launch_leaves_its_records_to_reference_counting_not_the_collector(fold) -> None:
    """A launch leaves no cycle through its world and records (a CTA's loads and the
    loads' landing, for one): once its result is dropped they are freed at once, and a
    full collection finds only SimPy's environment and the HBM server (each holds bound
    methods of itself), not some 17,000 records a K1 launch."""
    import gc

    cfg = LaunchConfig(2, 2)
    simulate(cfg, MI355X, fold_events=fold)
    gc.collect()
    assert len(simulate(cfg, MI355X, fold_events=fold).timeline.ctas) > 0
    assert gc.collect() < 50
