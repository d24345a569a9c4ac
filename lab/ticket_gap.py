"""Where in the launch the ticket build loses time to the static K1, in a run's traces and
in the model's prediction of the same shapes (docs/whatif/ticket_k1.md, "The take's round
trip in the engine"), with no GPU.

Three points of a launch, each from its origin (the earliest CTA start):

* ``gemv_end``: the last gemv group's end (the gemv CTAs' last gemv0 / gemv1 stage);
* ``kda_end``: the last kda task's end (its k.norm), the launch's useful end;
* ``makespan``: the last CTA's end;

and between them the kda phase (``kda_end - gemv_end``: the items left once the
weights are through) and the tail (``makespan - kda_end``: a ticket CTA's take past the
items, a CTA's last stores). Per shape and build, the median over the run's warm traced launches
(``DIR/{static,kda_tickets}/warm``); then each point's difference (tickets less static),
real and predicted: the static build on ``--base``, the unrolled ticket build (items from
the counter) on ``--base`` with the take's round trip and the item's prologue measured on
the run's ticket traces (the medians over every shape, as ``ticket_k1_fit --take
--prologue`` sets them per fold), each with its build's recorded resources, two CTAs an SM.
Also the gemv CTAs' busy time in gemv0 (span less poll waits, median): the ticket build's
code, which the model gives the static build's costs. With ``--bench`` (the run's
kernel_bench_tickets.json) each row also has the untraced difference, which the traced
launches' need not follow (a traced build records more, the ticket build its takes too).

    python -m lab.ticket_gap --dir S --base h200-warm.json [--bench B] [--json OUT]
"""

from __future__ import annotations

import argparse
import statistics
from dataclasses import replace
from pathlib import Path
from typing import Any

from kda_kernel.triton.defaults import default_config
from kda_sim.compare.launch import with_resources
from kda_sim.compare.spread import launches_by_shape
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.machine import load_profile
from kda_sim.protocol.tickets import TAKE_ITEM
from kda_sim.timeline import Timeline
from lab.gpu_jobs import report_main
from lab.ticket_k1_fit import measured_take
from lab.ticket_k1_report import bench_us, cell
from lab.ticket_probe_report import busy_ns
from lab.ticket_unroll_predict import OCCUPANCY

BUILDS = ("static", "kda_tickets")
POINTS = ("gemv_end", "kda_end", "kda_phase", "makespan", "tail")
GEMV = ("gemv0", "gemv1")


def points_us(tl: Timeline) -> dict[str, float]:
    """A launch's points (us from its origin): see the module docstring."""
    gemv = [s.end for c in tl.ctas for s in c.stages if s.name in GEMV]
    kda = [s.end for c in tl.ctas for s in c.stages if s.name == "k.norm" and s.task >= 0]
    if not gemv or not kda:
        raise InvalidInput("a K1 launch without gemv or kda stages", what="trace")
    ends = [c.end for c in tl.ctas if c.end is not None]
    out = {"gemv_end": max(gemv) / 1e3, "kda_end": max(kda) / 1e3}
    out["kda_phase"] = out["kda_end"] - out["gemv_end"]
    out["makespan"] = (tl.makespan if tl.makespan is not None else max(ends)) / 1e3
    out["tail"] = out["makespan"] - out["kda_end"]
    gemv0 = busy_ns(tl, "gemv0")
    out["gemv0_busy"] = statistics.median(gemv0) / 1e3 if gemv0 else float("nan")
    return out


def real(folder: Path) -> dict[tuple[int, int], dict[str, dict[str, float]]]:
    """{shape: {build: the median of each point over its warm launches}}, the shapes both
    builds ran."""
    out: dict[tuple[int, int], dict[str, dict[str, float]]] = {}
    for build in BUILDS:
        d = folder / build / "warm"
        for shape, paths in launches_by_shape(d).items():
            pts = [points_us(read_kernel_trace(p)) for p in paths]
            out.setdefault(shape, {})[build] = {
                k: float(statistics.median(p[k] for p in pts)) for k in pts[0]
            }
    both = {shape: b for shape, b in out.items() if len(b) == len(BUILDS)}
    if not both:
        raise InvalidInput("no shape with warm traces of both builds", where=str(folder))
    return both


def model(folder: Path, base: str, shapes: list[tuple[int, int]]) -> dict:
    """{shape: {build: points}} as the model predicts them (module docstring)."""
    prof = load_profile(base)
    rt, pro = measured_take(folder / "kda_tickets" / "warm", "ticket")
    taken = replace(prof, latency_ns={**prof.latency_ns, "atomic": rt, TAKE_ITEM: pro})
    out: dict[tuple[int, int], dict[str, dict[str, float]]] = {}
    for R, L in shapes:
        for build in BUILDS:
            first = launches_by_shape(folder / build / "warm")[(R, L)][0]
            tr = read_kernel_trace(first)
            unroll = int(tr.meta.params.get("ticket_unroll", 0))
            cfg: LaunchConfig = (
                default_config(R, L, 8, kda_tickets=True, ticket_unroll=unroll)
                if build == "kda_tickets"
                else default_config(R, L, 8)
            )
            p = with_resources(
                taken if build == "kda_tickets" else prof, tr.meta.extra.get("resources")
            )
            sim = simulate(cfg, p, occupancy=OCCUPANCY)
            if sim.deadlock:
                raise InvalidInput(f"{build} {R}x{L}: the model deadlocks", what="prediction")
            out.setdefault((R, L), {})[build] = points_us(sim.timeline)
    return {"shapes": out, "atomic_ns": rt, "ticket_item_ns": pro}


def untraced_diffs(bench: Path, folder: Path) -> dict[tuple[int, int], float]:
    """Each shape's untraced difference (us, tickets less static) of the ticket build that
    ran the traces (its ``ticket_unroll``, from the first ticket trace)."""
    first = next(iter(launches_by_shape(folder / "kda_tickets" / "warm").values()))[0]
    unroll = int(read_kernel_trace(first).meta.params.get("ticket_unroll", 0))
    us = bench_us(bench, unroll)
    return {
        (R, L): us[(R, L, "kda_tickets")] - t
        for (R, L, b), t in us.items()
        if b == "static" and (R, L, "kda_tickets") in us
    }


def report(folder: Path, base: str, bench: Path | None = None) -> dict[str, Any]:
    r = real(folder)
    m = model(folder, base, sorted(r))
    untraced = untraced_diffs(bench, folder) if bench is not None else {}
    rows = []
    for shape in sorted(r):
        row: dict[str, Any] = {"R": shape[0], "L": shape[1], "untraced_diff": untraced.get(shape)}
        for k in (*POINTS, "gemv0_busy"):
            rs, rt = r[shape]["static"][k], r[shape]["kda_tickets"][k]
            ms, mt = m["shapes"][shape]["static"][k], m["shapes"][shape]["kda_tickets"][k]
            row[k] = {
                "real": [rs, rt],
                "model": [ms, mt],
                "real_diff": rt - rs,
                "model_diff": mt - ms,
            }
        rows.append(row)
    return {
        "base": base,
        "atomic_ns": m["atomic_ns"],
        "ticket_item_ns": m["ticket_item_ns"],
        "rows": rows,
    }


def table(rep: dict[str, Any]) -> str:
    keys = (*POINTS, "gemv0_busy")
    out = [
        "| R x L | untraced (us) | " + " | ".join(f"{k}: traced / model (us)" for k in keys) + " |",
        "|" + "---|" * (2 + len(keys)),
    ]
    for r in rep["rows"]:
        cells = [cell(r["untraced_diff"], "+.2f")]
        cells += [f"{r[k]['real_diff']:+.2f} / {r[k]['model_diff']:+.2f}" for k in keys]
        out.append(f"| {r['R']} x {r['L']} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def show(rep: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"take {rep['atomic_ns']:.0f} ns, prologue {rep['ticket_item_ns']:.0f} ns (measured)",
            "each figure: the ticket build less the static one",
            table(rep),
        ]
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="the run's s/ folder of traces")
    ap.add_argument("--base", default="h200-k1", help="the static build's profile or overlay")
    ap.add_argument("--bench", type=Path, help="the run's kernel_bench_tickets.json")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    return report_main("ticket_gap", lambda: report(a.dir, a.base, a.bench), show, a.json)


if __name__ == "__main__":
    raise SystemExit(main())
