"""The experiment of docs/whatif/ticket_k1.md ("The experiment, run") as the model runs it:
the four builds of run 99 simulated at its shapes, set against their untraced times, so
that what the engine already carries of each effect is read next to what was measured.

The builds, each a K1 launch the engine runs (no GPU):

* ``static``: the static K1;
* ``static_take``: the static placement with a take before each task (the counter's
  atomic add, the item's prologue, then the task: the task waits for the take's
  return, as the probe's index does); no take past a CTA's tasks, as the probe takes
  only before a task;
* ``tickets_static``: the unrolled ticket build with each take running the static
  placement's task for it (every CTA ends on one take past its tasks, the ticket build's
  ``placed`` programs);
* ``tickets``: the unrolled ticket build, its items taken from the counter (``ticket_unroll``
  3).

All four on ``--base`` (a profile or overlay: the static fit; the unrolled ticket build
has the static costs, ``cost_build``), two CTAs an SM, each with its build's resources
as its traces recorded them, nominal latencies except ``atomic`` and ``ticket_item``:
the take's round trip and the item's prologue, the medians of the run's static_take
takes (measured, not fitted; ``--nominal-take`` leaves the profile's; ``--ready-take``
times each round trip from when its CTA could issue it, ``ticket_k1_report.ready_takes_ns``:
a first take's issue stamp is written before the role's last hand-off ends, by a warp
that does not wait for it). ``--take-ahead``: the builds that take issue each CTA's first
take before its role's last hand-off (``LaunchConfig.take_ahead``; the Triton build does
not: docs/whatif/ticket_k1.md, "A take issued ahead?"). The readings are
ticket_probe_report's: take = static_take - static, placement = tickets - tickets_static,
and code = tickets_static - static_take (what the ticket build's code and its takes past
the tasks add to the same placement with a take before each task).

    python -m lab.ticket_probe_predict --dir S --bench kernel_bench_probe.json \\
        --base h200-warm.json [--nominal-take | --ready-take] [--take-ahead] [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from kda_kernel.triton.defaults import default_config
from kda_sim.compare.launch import with_resources
from kda_sim.compare.spread import launches_by_shape
from kda_sim.engine import simulate
from kda_sim.engine.sampler import Sampler
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.kda import tasks_of
from kda_sim.kernels.k1.program import build_launch
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from kda_sim.protocol.counters import Atomic, AtomicKind
from kda_sim.protocol.ops import Op
from kda_sim.protocol.program import Launch
from kda_sim.protocol.tickets import TAKE_ITEM, TakeAhead, TicketLoop
from lab.gpu_jobs import report_main
from lab.ticket_k1_fit import measured_take
from lab.ticket_k1_report import cell
from lab.ticket_probe_report import BUILDS, EFFECTS, START, bench_us
from lab.ticket_unroll_predict import OCCUPANCY

UNROLL = BUILDS["tickets"]["ticket_unroll"]
# the readings: ticket_probe_report's two, and what is left between them
READINGS = (*EFFECTS, ("code", "tickets_static", "static_take"))


def static_takes(cfg: LaunchConfig) -> tuple[tuple[int, ...], ...]:
    """Each CTA's takes when every take runs the static placement's task for it, and each
    CTA ends on one take past its tasks (CTA c's past ticket: items + c, so the last
    ticket is CTA blocks - 1's): the takes the ``static_item`` probe makes."""
    n = cfg.n_tasks
    return tuple((*tasks_of(c, cfg), n + c) for c in range(cfg.blocks))


def take_before_each_task(cfg: LaunchConfig) -> Launch:
    """The ``take`` probe as a launch of ``cfg`` (an unrolled kda_tickets configuration:
    its cell space holds the counter): each CTA runs, after its role, a take and then the
    task the static placement gives it, for each of its tasks, and nothing past them. A
    task's copies after a CTA's first run their code the first time (``cold_code``), as
    the static placement's do. With ``cfg.take_ahead`` a CTA with tasks issues its first
    take ahead in its role (and one without none)."""
    launch = build_launch(cfg)
    out = []
    for prog in launch.programs:
        ops: list[Op] = []
        tasks = tuple(tasks_of(prog.cta, cfg))
        for op in prog.ops:
            if isinstance(op, TakeAhead) and not tasks:
                continue
            if not isinstance(op, TicketLoop):
                ops.append(op)
                continue
            take = Atomic(op.region, op.cell, AtomicKind.ADD, 1, into=op.into, then=TAKE_ITEM)
            for t in tasks:
                ops += [take, *op.bodies[t]]
        out.append(replace(prog, ops=tuple(ops), tasks=tasks, looped_tasks=False))
    return Launch(cfg, launch.space, tuple(out))


def resources_of(folder: Path, build: str, shape: tuple[int, int]) -> dict[str, Any]:
    """The build's resources (threads, registers, shared memory) its first trace of the
    shape recorded."""
    paths = launches_by_shape(folder / build / START).get(shape)
    if not paths:
        raise InvalidInput(f"no {build} trace at {shape[0]}x{shape[1]}", where=str(folder))
    res = read_kernel_trace(paths[0]).meta.extra.get("resources")
    if not isinstance(res, dict):
        raise InvalidInput("the trace recorded no resources", where=str(paths[0]))
    return res


def predict(
    folder: Path, R: int, L: int, prof: GpuProfile, ahead: bool = False
) -> dict[str, float]:
    """The four builds' makespans (us) at R x L on ``prof``; with ``ahead`` the three that
    take issue each CTA's first take before its role's last hand-off."""
    static = default_config(R, L, 8)
    tickets = default_config(R, L, 8, kda_tickets=True, ticket_unroll=UNROLL)
    tickets = replace(tickets, take_ahead=ahead)
    runs: dict[str, tuple[LaunchConfig, Launch | None]] = {
        "static": (static, None),
        "static_take": (tickets, take_before_each_task(tickets)),
        "tickets": (tickets, None),
        "tickets_static": (replace(tickets, placed=static_takes(tickets)).validate(), None),
    }
    out = {}
    for build, (cfg, launch) in runs.items():
        p = with_resources(prof, resources_of(folder, build, (R, L)))
        res = simulate(cfg, p, occupancy=OCCUPANCY, launch=launch)
        if res.deadlock or res.timeline.makespan is None:
            raise InvalidInput(f"{build} {R}x{L}: the model deadlocks", what="prediction")
        out[build] = res.timeline.makespan / 1e3
    return out


def run(
    folder: Path,
    bench: Path,
    base: str,
    nominal_take: bool = False,
    ready: bool = False,
    ahead: bool = False,
) -> dict[str, Any]:
    prof = load_profile(base)
    rt, pro = measured_take(folder / "static_take" / START, "static_take", ready)
    if not nominal_take:
        prof = replace(prof, latency_ns={**prof.latency_ns, "atomic": rt, TAKE_ITEM: pro})
    measured = bench_us(bench)
    shapes = sorted({(R, L) for R, L, _ in measured})
    rows = []
    for R, L in shapes:
        pred = predict(folder, R, L, prof, ahead)
        meas = {b: measured.get((R, L, b)) for b in BUILDS}
        row: dict[str, Any] = {"R": R, "L": L, "predicted_us": pred, "measured_us": meas}
        for name, a, b in READINGS:
            ma, mb = meas[a], meas[b]
            row[f"{name}_predicted_us"] = pred[a] - pred[b]
            row[f"{name}_measured_us"] = None if ma is None or mb is None else ma - mb
        rows.append(row)
        print(f"{R}x{L}: " + ", ".join(f"{b} {v:.2f}" for b, v in pred.items()), file=sys.stderr)
    lat = Sampler(prof)  # the latencies the engine runs with (atomic: the poll's if unset)
    return {
        "base": base,
        "atomic_ns": lat.latency("atomic"),
        "ticket_item_ns": lat.latency(TAKE_ITEM),
        "measured_take_ns": rt,
        "ready_take": ready,
        "take_ahead": ahead,
        "measured_prologue_ns": pro,
        "rows": rows,
    }


def table(rep: dict[str, Any]) -> str:
    names = [r[0] for r in READINGS]
    out = [
        "| R x L | predicted: "
        + " / ".join(BUILDS)
        + " (us) | measured (us) | "
        + " | ".join(f"{n}: predicted / measured (us)" for n in names)
        + " |",
        "|" + "---|" * (3 + len(names)),
    ]
    for r in rep["rows"]:
        pred = " / ".join(f"{r['predicted_us'][b]:.2f}" for b in BUILDS)
        meas = " / ".join(cell(r["measured_us"][b], ".2f") for b in BUILDS)
        reads = [
            f"{r[f'{n}_predicted_us']:+.2f} / {cell(r[f'{n}_measured_us'], '+.2f')}" for n in names
        ]
        out.append(f"| {r['R']} x {r['L']} | {pred} | {meas} | " + " | ".join(reads) + " |")
    return "\n".join(out)


def show(rep: dict[str, Any]) -> str:
    head = (
        f"take {rep['atomic_ns']:.0f} ns, prologue {rep['ticket_item_ns']:.0f} ns "
        f"(measured: {rep['measured_take_ns']:.0f} / {rep['measured_prologue_ns']:.0f})"
    )
    return head + "\n" + table(rep)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="the run's s/ folder of traces")
    ap.add_argument("--bench", type=Path, required=True, help="the run's kernel_bench_probe.json")
    ap.add_argument("--base", default="h200-k1", help="the static build's profile or overlay")
    ap.add_argument(
        "--nominal-take",
        action="store_true",
        help="keep the profile's atomic and ticket_item rather than the measured take",
    )
    ap.add_argument(
        "--ready-take",
        action="store_true",
        help="time each measured take from when its CTA could issue it (ready_takes_ns)",
    )
    ap.add_argument(
        "--take-ahead",
        action="store_true",
        help="each CTA's first take issued before its role's last hand-off (take_ahead)",
    )
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)

    def make() -> dict[str, Any]:
        if a.nominal_take and a.ready_take:
            raise InvalidInput("--nominal-take and --ready-take: one or the other", what="take")
        return run(a.dir, a.bench, a.base, a.nominal_take, a.ready_take, a.take_ahead)

    return report_main("ticket_probe_predict", make, show, a.json)


if __name__ == "__main__":
    raise SystemExit(main())
