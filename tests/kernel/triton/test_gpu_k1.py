"""The Triton K1 on a CUDA GPU: correctness, graph replay, watchdog faults, tracing.

Marked ``gpu``; skipped without CUDA. Every launch here runs the watchdog build (a bug
must end in an error, never a hung GPU) except the traced ones, which run the
production build with tracing (as they will be measured). Results go to
``$KDA_GPU_OUT`` (default ``out/gpu``, ignored by git) as JSON lines, traces to
``$KDA_TRACE_DIR`` (default ``traces``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from kda_kernel.triton.defaults import default_config  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
]

OUT = Path(os.environ.get("KDA_GPU_OUT", "out/gpu"))
TRACES = Path(os.environ.get("KDA_TRACE_DIR", "traces"))
WATCHDOG_MS = 200.0  # a normal launch takes tens of microseconds


def record(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "gpu_tests.jsonl").open("a") as f:
        f.write(json.dumps({"test": name} | data, default=str) + "\n")


SHAPES = [(r, n) for r in (1, 2, 4) for n in (1, 2, 4)]


@pytest.mark.parametrize(("R", "L"), SHAPES)
def test_matches_reference(R: int, L: int) -> None:
    from kda_kernel.triton.run import run

    res = run(
        default_config(R, L, 8 if L < 4 else 5), check=True, watchdog_ms=WATCHDOG_MS, seed=R * 7 + L
    )
    record(f"correct R={R} L={L}", res)
    assert res["resources"]["ctas_per_sm"] >= 2, res["resources"]


@pytest.mark.parametrize(("R", "L"), [(1, 1), (2, 2), (4, 4)])
def test_graph_replay_of_a_step(R: int, L: int) -> None:
    """A step of three launches (slots 0..2, nb 8 / 4 / 1: the PART and WGT extents
    change between them), the epoch bumped in the graph, replayed 30 times; the states
    after all replays match the reference iterated as many times."""
    from kda_kernel.triton.run import run

    res = run(
        default_config(R, L, 8),
        check=True,
        graph=True,
        replays=30,
        watchdog_ms=WATCHDOG_MS,
        seed=100 + R * 7 + L,
    )
    record(f"graph R={R} L={L}", res)
    assert res["steps"] == 31


# kda task i runs on CTA (i + kda0) mod 256: 0 puts the first tasks on the attn CTAs; these
# start them on gemv CTAs and wrap the rest round to CTA 0 (200, 160, 255) or start them on
# the first gemv CTA (56). Each kda0 is a compiled kernel (kda_kernel.triton.warm).
KDA0_CASES = [(1, 1, 200), (2, 2, 160), (4, 1, 255), (4, 4, 56)]


@pytest.mark.parametrize(("R", "L", "kda0"), KDA0_CASES)
def test_matches_reference_with_kda_tasks_elsewhere(R: int, L: int, kda0: int) -> None:
    from kda_kernel.triton.run import run

    res = run(
        default_config(R, L, 8, kda0),
        check=True,
        graph=True,
        replays=10,
        watchdog_ms=WATCHDOG_MS,
        seed=300 + R * 7 + L,
    )
    record(f"kda0={kda0} R={R} L={L}", res)
    assert res["steps"] == 11 and res["preflight"].startswith("safe")


def test_trace_places_each_kda_task_where_kda0_says() -> None:
    """A traced launch with kda0 = 200 (tasks 0 to 55 on gemv CTAs 200 to 255, the rest
    wrapped onto CTAs 0 to 135, attn and gemv): every task's stages on CTA (task + kda0) mod 256."""
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace
    from kda_sim.kernels.k1.constants import BLOCKS

    R, L, kda0 = 2, 2, 200
    path = OUT / f"trace_kda0_{kda0}_R{R}_L{L}.json"
    res = run(default_config(R, L, 8, kda0), trace_path=path, check=True)
    record(f"trace kda0={kda0} R={R} L={L}", res)
    tl = read_kernel_trace(path)
    where = {(s.task, c.cta) for c in tl.ctas for s in c.stages if s.task >= 0}
    assert where == {(i, (i + kda0) % BLOCKS) for i in range(R * 96)}


@pytest.mark.parametrize(("R", "L"), [(1, 1), (2, 2), (4, 4)])
def test_matches_reference_with_warps_staggered(R: int, L: int) -> None:
    """The stress build (Build.jitter_ns): each CTA's warps start, and start each kda task,
    STRESS_JITTER_NS apart, so a load in one warp and another warp's store over the same data,
    with no barrier between them, come apart. The slice's in-place prefix update had none
    and gave wrong PART pairs at 1x1 once warps drifted (H200, runs 42 to 45)."""
    from kda_kernel.triton.launch import STRESS_JITTER_NS
    from kda_kernel.triton.run import run

    res = run(
        default_config(R, L, 8),
        check=True,
        graph=True,
        replays=10,
        watchdog_ms=WATCHDOG_MS,
        seed=200 + R * 7 + L,
        build={"jitter_ns": STRESS_JITTER_NS},
    )
    record(f"staggered R={R} L={L}", res)
    assert res["steps"] == 11


def test_staggered_warps_find_the_slice_race_without_its_barrier() -> None:
    """The stress build must catch what it was made for, or the test above proves nothing:
    without the barrier in the slice's prefix update (Build.slice_barrier=False), staggered warps
    give wrong outputs at 1x1."""
    from kda_kernel.triton.launch import STRESS_JITTER_NS
    from kda_kernel.triton.run import CheckFailed, run

    with pytest.raises(CheckFailed) as e:
        run(
            default_config(1, 1, 8),
            check=True,
            graph=True,
            replays=10,
            watchdog_ms=WATCHDOG_MS,
            seed=201,
            build={"jitter_ns": STRESS_JITTER_NS, "slice_barrier": False},
        )
    record("staggered, no slice barrier R=1 L=1", {"check_failed": str(e.value)})


@pytest.mark.parametrize("fault", ["drop", "corrupt", "skip-bump"])
def test_watchdog_catches_fault(fault: str) -> None:
    from kda_kernel.triton.run import run
    from kda_kernel.triton.watchdog import KernelStuck

    with pytest.raises(KernelStuck) as ei:
        run(default_config(1, 1, 8), watchdog_ms=WATCHDOG_MS, inject=fault)
    recs = ei.value.records
    record(f"watchdog {fault}", {"message": str(ei.value)[:4000], "n": len(recs)})
    first = recs[0]
    if fault == "skip-bump":
        assert first.kind == "tag reuse"
        assert first.seen_tag == first.expected_tag
    else:
        assert first.kind == "timeout"
        assert first.region == "PROJ" and first.index == 1536 + 64
        assert first.stage == "k.conv"
        if fault == "corrupt":
            assert first.seen_tag == first.expected_tag ^ (1 << 20)
        assert all(r.time_ns >= first.time_ns for r in recs if r.kind == "released")
    # the GPU is healthy after: a clean launch passes
    ok = run(default_config(1, 1, 8), watchdog_ms=WATCHDOG_MS, check=True)
    assert ok["errors"]


TRACE_SHAPES = SHAPES  # every R x L the issue names: traces/ holds one of each


@pytest.mark.parametrize(("R", "L"), TRACE_SHAPES)
def test_trace_records_every_stage(R: int, L: int) -> None:
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace

    path = TRACES / f"k1_h200_R{R}_L{L}.json.gz"
    res = run(default_config(R, L, 8), trace_path=path, check=True)
    tl = read_kernel_trace(path)
    assert len(tl.ctas) == 256 and not tl.deadlock
    assert tl.meta.config() == default_config(R, L, 8)  # what ran, variants included
    tasks = sorted(s.task for _, s in tl.stage_spans() if s.name == "k.norm")
    assert tasks == list(range(R * 96))
    polls = sum(len(c.polls) for c in tl.ctas)
    assert polls == 3 * 56 - (56 - R * L) + 197 + 5 * R * 96
    assert all(c.unit is not None and c.unit >= 0 for c in tl.ctas)
    record(f"trace R={R} L={L}", {k: res[k] for k in ("trace", "makespan_us", "resources")})


def test_a_warm_trace_is_the_last_of_its_steps(tmp_path: Path) -> None:
    """``warmup``: eager steps before the traced one; the trace is the last launch's (its
    tag the last step's), and the outputs are the reference's after every step."""
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace

    path = tmp_path / "warm.json"
    res = run(default_config(2, 1, 8), trace_path=path, check=True, warmup=3)
    tl = read_kernel_trace(path)
    assert res["steps"] == 4 and tl.meta.extra["warmup"] == 3
    assert len(tl.ctas) == 256 and not tl.deadlock
    record("warm trace R=2 L=1", {k: res[k] for k in ("makespan_us", "steps", "errors")})


@pytest.mark.parametrize(("R", "L"), [(1, 1), (2, 2), (4, 4)])
def test_gate_local_matches_reference(R: int, L: int) -> None:
    """The protocol's variant gate_local (Build.gate_local): no gate stage, no WGT; every
    attn CTA polls PART for every token. A step of three launches, replayed."""
    from kda_kernel.triton.run import run

    res = run(
        default_config(R, L, 8, gate_local=True),
        check=True,
        graph=True,
        replays=10,
        watchdog_ms=WATCHDOG_MS,
        seed=400 + R * 7 + L,
    )
    record(f"gate_local R={R} L={L}", res)
    assert res["steps"] == 11 and res["preflight"].startswith("safe")


def test_gate_local_trace_has_the_part_poll_in_the_mix() -> None:
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace

    R, L = 2, 2
    path = OUT / f"trace_gate_local_R{R}_L{L}.json"
    res = run(default_config(R, L, 8, gate_local=True), trace_path=path, check=True)
    record(f"trace gate_local R={R} L={L}", res)
    tl = read_kernel_trace(path)
    assert tl.meta.gate_local
    for c in tl.ctas[:56]:
        assert [s.name for s in c.stages if s.task < 0] == ["slice", "mix"]
        assert [(p.stage, p.label) for p in c.polls if p.task < 0] == [
            ("mix", "PART"),
            ("mix", "MSQ"),
        ]
    assert sum(len(c.polls) for c in tl.ctas) == 2 * 56 + 197 + 5 * R * 96
