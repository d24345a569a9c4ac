"""The Triton K1's kda_tickets schedule on a CUDA GPU: outputs against the reference, the
trace (every kda task run once, by some CTA; every ticket taken once), the counter back
to 0 after each launch, and launches that reuse the workspace (the counter is never
cleared by the host). Marked ``gpu``; skipped without CUDA. The launches run the builds
the measurement times (production, untraced or traced; no watchdog build, which
``scripts/device_ticket_k1.sh`` would have to compile apart): the pre-flight refuses a
launch that could not finish, and the script's timeout bounds a hang. Results go to
``$KDA_GPU_OUT`` (default ``out/gpu``) as JSON lines."""

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
SHAPES = [(r, n) for r in (1, 2, 4) for n in (1, 2, 4)]
# the builds: the loop alone, and a CTA's first takes in unrolled copies (ticket_unroll)
UNROLLS = (0, 3)


def record(name: str, data: dict[str, Any]) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    with (OUT / "gpu_tests.jsonl").open("a") as f:
        f.write(json.dumps({"test": name} | data, default=str) + "\n")


def tickets(R: int, L: int, unroll: int = 0) -> Any:
    return default_config(R, L, 8, kda_tickets=True, ticket_unroll=unroll)


@pytest.mark.parametrize("unroll", UNROLLS)
@pytest.mark.parametrize(("R", "L"), SHAPES)
def test_kda_tickets_match_reference(R: int, L: int, unroll: int) -> None:
    """Three launches on one workspace (two warm-up steps): the outputs after all three
    are the reference's, and the counter is 0 after them."""
    from kda_kernel.triton.run import run

    res = run(tickets(R, L, unroll), check=True, warmup=2, seed=R * 7 + L)
    record(f"kda_tickets correct R={R} L={L} unroll={unroll}", res)
    assert res["steps"] == 3 and res["counter_after"] == 0, res


@pytest.mark.parametrize("unroll", UNROLLS)
@pytest.mark.parametrize(("R", "L"), [(1, 1), (2, 2), (4, 4)])
def test_kda_tickets_trace_runs_every_task_once(R: int, L: int, unroll: int) -> None:
    """A traced launch after a warm-up step (the second on its workspace): every kda task's
    stages on exactly one CTA, the tickets 0 .. 96 R + 255 each taken once, each CTA's
    last take past the items, and the meta names the schedule (``compare`` and
    ``simulate --like`` model the same variant)."""
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace

    path = OUT / f"trace_kda_tickets_R{R}_L{L}_u{unroll}.json"
    res = run(tickets(R, L, unroll), trace_path=path, check=True, warmup=1)
    record(f"kda_tickets trace R={R} L={L} unroll={unroll}", res)
    assert res["counter_after"] == 0
    tl = read_kernel_trace(path)
    assert len(tl.ctas) == 256 and not tl.deadlock
    assert tl.meta.config() == tickets(R, L, unroll)
    runs = sorted(s.task for _, s in tl.stage_spans() if s.name == "k.norm")
    assert runs == list(range(R * 96))  # each task once (a CTA's tasks are sequential)
    takes = tl.meta.extra["ticket_takes"]
    assert tl.meta.extra["ticket_unrecorded"] == {"tasks": 0, "takes": 0}
    assert sorted(t[3] for t in takes) == list(range(R * 96 + 256))
    last = {}
    for cta, issue, ret, ticket in takes:
        assert ret >= issue
        last[cta] = ticket
    assert len(last) == 256 and all(t >= R * 96 for t in last.values())
    by_stage = {(s.task, c.cta) for c in tl.ctas for s in c.stages if s.task >= 0}
    took = {(t[3], t[0]) for t in takes if t[3] < R * 96}
    assert by_stage == took  # the CTA that took ticket i ran task i


def test_kda_tickets_graph_replays_reset_the_counter() -> None:
    """A captured step replayed 20 times: the counter is only ever reset by the kernel,
    so a replay that found it non-zero would run wrong tasks or hang."""
    from kda_kernel.triton.run import run

    res = run(tickets(2, 2), check=True, graph=True)
    record("kda_tickets graph R=2 L=2", res)
    assert res["counter_after"] == 0


# Build.probe's lab experiments (docs/whatif/ticket_k1.md, "The experiment, built"): the
# static build with a take before each task, the unrolled ticket build running the static
# placement's item for each take
PROBES = (({}, "take"), ({"kda_tickets": True, "ticket_unroll": 3}, "static_item"))


@pytest.mark.parametrize(("variants", "probe"), PROBES, ids=[p for _, p in PROBES])
@pytest.mark.parametrize(("R", "L"), [(1, 1), (2, 2), (4, 4)])
def test_probe_builds_match_reference_and_reset_the_counter(
    R: int, L: int, variants: dict[str, Any], probe: str
) -> None:
    """A captured step replayed 20 times, each replay against the reference: the counter,
    reset only by the kernel, is 0 after them (a replay that found it non-zero would
    record wrong tickets, or under static_item never reset it)."""
    from kda_kernel.triton.run import run

    cfg = default_config(R, L, 8, **variants)
    res = run(cfg, check=True, graph=True, build={"probe": probe})
    record(f"probe {probe} graph R={R} L={L}", res)
    assert res["counter_after"] == 0, res


@pytest.mark.parametrize(("variants", "probe"), PROBES, ids=[p for _, p in PROBES])
def test_probe_trace_runs_the_static_placement(variants: dict[str, Any], probe: str) -> None:
    """A traced launch at 2x2 after a warm-up step: each task on the CTA the static
    placement gives it, its takes recorded (one a task under "take", R * 96 + 256 under
    "static_item")."""
    from kda_kernel.triton.run import run
    from kda_sim.importers.chrome import read_kernel_trace

    R, L = 2, 2
    path = OUT / f"trace_probe_{probe}_R{R}_L{L}.json"
    res = run(
        default_config(R, L, 8, **variants), trace_path=path, warmup=1, build={"probe": probe}
    )
    record(f"probe {probe} trace R={R} L={L}", res)
    tl = read_kernel_trace(path)
    where = {(s.task, c.cta) for c in tl.ctas for s in c.stages if s.name == "k.norm"}
    assert where == {(i, i % 256) for i in range(R * 96)}  # kda0 = 0
    takes = tl.meta.extra["ticket_takes"]
    want = R * 96 + (256 if probe == "static_item" else 0)
    assert sorted(t[3] for t in takes) == list(range(want))
    assert tl.meta.extra["build"] == {"probe": probe}
