"""The measured side of the ticket what-if (docs/whatif/ticket_k1.md): static K1 against
kda_tickets from one run of ``scripts/device_ticket_k1.sh``, with no GPU.

Reads the run's traced launches (``DIR/{static,kda_tickets}/{cold,warm}/k1_R*_L*_*.json``)
and its untraced times (``kernel_bench_tickets.json``) and prints, shape by shape: the
untraced per-launch time of both builds and their difference; the traced makespans'
medians, cold and warm; the median take round trip (issue to return of the ticket
counter's atomic, from the traces' ``ticket_takes``); and where a kda task's time goes in
each build: its stages' own time (the stage's span less its polls' waits), summed over a
task, median over tasks. ``--json OUT`` writes the same figures.

    python -m lab.ticket_k1_report --dir S --bench kernel_bench_tickets.json [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from kda_sim.compare.spread import launches_by_shape
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline import Timeline

SCHEDULES = ("static", "kda_tickets")
STARTS = ("cold", "warm")


def median(xs: list[float]) -> float | None:
    """The median, None of nothing (a figure a shape lacks)."""
    return float(statistics.median(xs)) if xs else None


def variant_rows(path: Path) -> list[dict[str, Any]]:
    """A kernel_bench file's ``variants`` rows (each build's untraced time a shape);
    anything else is refused naming the file."""
    try:
        return list(json.loads(path.read_text())["variants"])
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise InvalidInput(f"not a kernel_bench file with variants: {e}", where=str(path)) from e


def takes_ns(tl: Timeline) -> list[float]:
    """Each take's round trip (return - issue, ns) of a ticket launch; none for a static one."""
    return [float(ret - iss) for _, iss, ret, _ in tl.meta.extra.get("ticket_takes", ())]


def ready_takes_ns(tl: Timeline) -> list[float]:
    """Each take's round trip from when its CTA could issue it (ns): its return less the
    later of its stamped issue and the end of the CTA's last stage before the return.
    A CTA's first take after its role is issued by thread 0 after a CTA barrier, the role's
    last hand-off done (kernel/triton/tickets.py, its SASS), but its issue stamp is
    written by a warp that reaches the take's code without waiting for that hand-off:
    the attn CTAs' read 256 to 352 ns before their mix's end (docs/whatif/ticket_k1.md,
    "A take issued ahead?"), which ``takes_ns`` counts in the round trip."""
    ends: dict[int, list[float]] = {c.cta: sorted(s.end for s in c.stages) for c in tl.ctas}
    out = []
    for cta, issue, ret, _ in tl.meta.extra.get("ticket_takes", ()):
        before = [e for e in ends.get(int(cta), ()) if e <= ret]
        out.append(float(ret - max(issue, before[-1] if before else issue)))
    return out


def kda_own_ns(tl: Timeline) -> list[float]:
    """Each kda task's own time: its stages' spans less the waits of the polls they hold."""
    own: dict[int, float] = defaultdict(float)
    for cta in tl.ctas:
        waits: dict[tuple[str, int], float] = defaultdict(float)
        for p in cta.polls:
            waits[(p.stage, p.task)] += p.satisfied - p.first_issue
        for s in cta.stages:
            if s.name.startswith("k.") and s.task >= 0:
                own[s.task] += (s.end - s.start) - waits[(s.name, s.task)]
    return list(own.values())


def bench_us(path: Path, unroll: int | None = None) -> dict[tuple[int, int, str], float]:
    """The untraced per-launch time (us) of each (R, L, schedule) in a kernel_bench file
    (its ``variants`` rows: the best of the alternating rounds, CUDA-graph replays).

    A run may time several ticket builds (``LOOP=1 UNROLL=3`` times the loop and the
    unrolled one): ``unroll`` picks the one whose ``ticket_unroll`` it is (0: the loop
    build); None takes the file's only ticket build and refuses a file with several."""
    # a lab probe's rows (Build.probe: lab.ticket_probe_report reads them) are neither
    rows = [r for r in variant_rows(path) if not r["variant"].get("probe")]
    builds = {r["variant"].get("ticket_unroll", 0) for r in rows if r["variant"].get("kda_tickets")}
    if unroll is None:
        if len(builds) > 1:
            raise ValueError(f"{path}: ticket builds with ticket_unroll {sorted(builds)}: name one")
        unroll = next(iter(builds), 0)
    out: dict[tuple[int, int, str], float] = {}
    for r in rows:
        v = r["variant"]
        if not v.get("kda_tickets"):
            out[(r["R"], r["L"], "static")] = float(r["us"])
        elif v.get("ticket_unroll", 0) == unroll:
            out[(r["R"], r["L"], "kda_tickets")] = float(r["us"])
    return out


def report(
    folder: Path, bench: Path | None, unroll: int | None = None, tickets: str = "kda_tickets"
) -> dict[str, Any]:
    shapes: dict[str, dict[str, Any]] = {}
    untraced = bench_us(bench, unroll) if bench else {}
    for sched in SCHEDULES:
        for start in STARTS:
            d = folder / (tickets if sched == "kda_tickets" else sched) / start
            if not d.is_dir():
                continue
            for (R, L), paths in launches_by_shape(d).items():
                row = shapes.setdefault(f"{R}x{L}", {"R": R, "L": L})
                tls = [read_kernel_trace(p) for p in paths]
                row[f"{sched}_{start}_makespan_us"] = median(
                    [(t.makespan or 0.0) / 1e3 for t in tls]
                )
                row[f"{sched}_{start}_kda_own_us"] = median(
                    [x / 1e3 for t in tls for x in kda_own_ns(t)]
                )
                if sched == "kda_tickets":
                    row[f"take_{start}_ns"] = median([x for t in tls for x in takes_ns(t)])
    for row in shapes.values():
        for sched in SCHEDULES:
            row[f"{sched}_untraced_us"] = untraced.get((row["R"], row["L"], sched))
    return {"shapes": shapes}


def cell(x: float | None, fmt: str) -> str:
    """A table cell: ``x`` formatted, "-" where there is none."""
    return "-" if x is None else format(x, fmt)


def table(rep: dict[str, Any]) -> str:
    head = (
        "| R x L | static untraced (us) | kda_tickets untraced (us) | difference (us) "
        "| traced warm, static / tickets (us) | take round trip (ns, warm) "
        "| kda task own time, static / tickets (us, warm) |"
    )
    lines = [head, "|" + "---|" * 7]
    for name, r in rep["shapes"].items():
        s, t = r.get("static_untraced_us"), r.get("kda_tickets_untraced_us")
        diff = None if s is None or t is None else t - s
        lines.append(
            f"| {name.replace('x', ' x ')} | {cell(s, '.2f')} | {cell(t, '.2f')} "
            f"| {cell(diff, '+.2f')} "
            f"| {cell(r.get('static_warm_makespan_us'), '.1f')} / "
            f"{cell(r.get('kda_tickets_warm_makespan_us'), '.1f')} "
            f"| {cell(r.get('take_warm_ns'), '.0f')} "
            f"| {cell(r.get('static_warm_kda_own_us'), '.2f')} / "
            f"{cell(r.get('kda_tickets_warm_kda_own_us'), '.2f')} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="the run's s/ folder of traces")
    ap.add_argument("--bench", type=Path, help="the run's kernel_bench_tickets.json")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here (not overwritten)")
    ap.add_argument(
        "--tickets-dir",
        default="kda_tickets",
        help="the ticket build's folder under --dir (LOOP=1 runs: kda_tickets_loop)",
    )
    ap.add_argument(
        "--unroll",
        type=int,
        default=None,
        help="the ticket build's ticket_unroll in --bench (default: its only ticket build)",
    )
    a = ap.parse_args(argv)
    if a.json is not None and a.json.exists():
        print(f"ticket_k1_report: {a.json} exists; not overwritten", file=sys.stderr)
        return 2
    rep = report(a.dir, a.bench, a.unroll, a.tickets_dir)
    print(table(rep))
    if a.json is not None:
        a.json.write_text(json.dumps(rep, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
