"""The ticket what-if mended (docs/whatif/ticket_k1.md, "The model mended"): K1's
kda_tickets build given its own stage costs, fitted on its traces shape by shape held
out, and the static-to-tickets difference predicted again, with no GPU.

For each of the run's shapes, the costs ``KEYS`` (the kda stages, apart at L = 1 and
L >= 2, and gemv) are fitted from the static build's profile (``--base``, h200-k1) on the
kda_tickets traces of the other shapes (:func:`kda_sim.compare.calibrate.fit_costs`: the
cost correction alone; the machine parameters and the attn costs stay the static fit's),
and the held-out shape is predicted: the static build on ``--base``, the kda_tickets
build (its items taken from the counter, not placed) on the fold's costs, each with its
build's resources and CTAs an SM from its traces, nominal latencies. The predicted
difference is set against the measured untraced one (``kernel_bench_tickets.json``).
``--prologue``: each taken item also pays ``ticket_item``, the median prologue (take's
return to the item's first stage) of the training traces; ``--take``: each take's round
trip (``atomic``) is the median of theirs. ``--base`` takes a profile name or an overlay
file (the H100 fit of ``lab/k1_h100_fit.py`` for run 97). With ``--overlay``, the costs
fitted on every shape are written there (the build's overlay,
``kda_sim/kernels/k1/costs/h200.kda_tickets.fitted.json``).

    python -m lab.ticket_k1_fit --dir S --bench kernel_bench_tickets.json \\
        [--launches 1] [--start warm] [--base h200-k1] [--prologue] [--take]
        [--overlay OUT] [--json OUT]

``S`` holds ``{static,kda_tickets}/{cold,warm}/k1_R*_L*_*.json`` (a run of
``scripts/device_ticket_k1.sh``).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from kda_sim.compare.calibrate import (
    Trace,
    fit_costs,
    fitted_overlay,
    prepare,
    score_on,
    write_overlay,
)
from kda_sim.compare.launch import with_resources
from kda_sim.compare.spread import launches_by_shape
from kda_sim.engine import simulate
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from kda_sim.timeline import Timeline
from lab.ticket_k1_report import bench_us, median, ready_takes_ns, takes_ns

# the stages of a kda task: the loop's code is the ticket build's own (its spills)
KDA_KEYS: tuple[str, ...] = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")
# and the gemv's: the whole kernel is one build, and its gemv groups run 1.3 to 1.9 us
# slower than the static build's at L >= 2 (busy medians, docs/whatif/ticket_k1.md), the same
# at L = 1
KEYS: tuple[str, ...] = (*KDA_KEYS, "gemv")
# the build spills 18 registers at L = 1, 64 at L = 2, 68 at L = 4: a kda stage's
# code (its units are L) is fitted apart at L = 1 and L >= 2; k.stage's units are always 1
SWITCHES: dict[str, float] = {k: 1.0 for k in KDA_KEYS if k != "k.stage"}
BAR_US, BAR_FRAC = 1.0, 0.25  # issue 39: within 1 us or 25 % of the measured difference


def traces(folder: Path, launches: int) -> dict[tuple[int, int], list[Trace]]:
    """The first ``launches`` traced launches of each shape in ``folder``, prepared (on
    one clock, from the launch's origin)."""
    out: dict[tuple[int, int], list[Trace]] = {}
    for shape, paths in launches_by_shape(folder).items():
        out[shape] = []
        for p in paths[:launches]:
            raw = read_kernel_trace(p)
            tr = prepare(raw, name=f"{p.parent.name}/{p.name}")
            tr.raw = raw  # type: ignore[attr-defined]  # its takes are on the raw clock
            out[shape].append(tr)
    return out


def prologues_ns(tl: Timeline) -> list[float]:
    """Each taken item's prologue in a traced ticket launch: from its take's return to its
    first stage's start on the CTA that took it (one CTA's clock: no alignment needed)."""
    first = {(c.cta, s.task): s.start for c in tl.ctas for s in reversed(c.stages) if s.task >= 0}
    out = []
    for cta, _issue, ret, ticket in tl.meta.extra.get("ticket_takes", ()):
        start = first.get((int(cta), int(ticket)))
        if start is not None:
            out.append(float(start - ret))
    return out


def with_prologue(base: GpuProfile, train: list[Trace]) -> GpuProfile:
    """``base`` with the item prologue (``ticket_item``) measured on the training traces:
    the median over their items (a latency, not fitted)."""
    xs = [x for tr in train for x in prologues_ns(tr.raw)]
    if not xs:
        raise InvalidInput("no take recorded in the training traces", what="ticket_takes")
    return base.with_params(ticket_item=float(statistics.median(xs)))


def measured_take(folder: Path, what: str, ready: bool = False) -> tuple[float, float]:
    """The take's round trip and the item's prologue (ns): the medians over every take of
    the traced launches in ``folder`` (``what`` names them in the refusal); with
    ``ready``, each round trip from when its CTA could issue it (``ready_takes_ns``)."""
    tls = [read_kernel_trace(p) for ps in launches_by_shape(folder).values() for p in ps]
    of = ready_takes_ns if ready else takes_ns
    rt = median([x for tl in tls for x in of(tl)])
    pro = median([x for tl in tls for x in prologues_ns(tl)])
    if rt is None or pro is None:
        raise InvalidInput(f"no take recorded in the {what} traces", where=str(folder))
    return rt, pro


def with_take(base: GpuProfile, train: list[Trace]) -> GpuProfile:
    """``base`` with the take's round trip (``atomic``, which a profile without it takes
    from its poll's) measured on the training traces: the median over their takes."""
    xs = [x for tr in train for x in takes_ns(tr.raw)]
    if not xs:
        raise InvalidInput("no take recorded in the training traces", what="ticket_takes")
    return replace(base, latency_ns={**base.latency_ns, "atomic": float(statistics.median(xs))})


def predict_us(tr: Trace, prof: GpuProfile) -> float:
    """The launch the trace ran, as the model predicts it before it runs: a ticket
    launch's items taken from the counter (not where the trace's run took them), on
    ``prof`` with the trace's build resources and CTAs an SM, nominal latencies."""
    cfg = tr.cfg.dynamic() if getattr(tr.cfg, "placed", ()) else tr.cfg
    sim = simulate(cfg, with_resources(prof, tr.resources), occupancy=tr.occupancy).timeline
    if sim.makespan is None:
        raise InvalidInput(f"{tr.name}: the model deadlocks", what="prediction")
    return sim.makespan / 1e3


def start_of(base: GpuProfile, train: list[Trace], prologue: bool, take: bool) -> GpuProfile:
    """The fit's start: ``base`` with the measured prologue and take where asked."""
    prof = with_prologue(base, train) if prologue else base
    return with_take(prof, train) if take else prof


def within(pred: float, meas: float) -> bool:
    return abs(pred - meas) <= BAR_US or abs(pred - meas) <= BAR_FRAC * abs(meas)


def run(
    folder: Path,
    bench: Path,
    launches: int,
    start: str,
    base_name: str,
    log=print,
    prologue: bool = False,
    take: bool = False,
) -> dict[str, Any]:
    base = load_profile(base_name)
    t0 = time.perf_counter()
    static = traces(folder / "static" / start, 1)
    tickets = traces(folder / "kda_tickets" / start, launches)
    # the bench's ticket build that ran these traces (a run may time the loop build too)
    measured = bench_us(bench, next(iter(tickets.values()))[0].cfg.ticket_unroll)
    n = sum(map(len, tickets.values()))
    log(f"prepared {n} ticket traces ({time.perf_counter() - t0:.0f} s)")
    rows = []
    for shape in tickets:
        R, L = shape
        t1 = time.perf_counter()
        train = [tr for s, trs in tickets.items() if s != shape for tr in trs]
        fit = fit_costs(start_of(base, train, prologue, take), train, KEYS, switches=SWITCHES)
        held = tickets[shape][0]
        held_score = score_on(fit.profile, held)
        ps, pt = predict_us(static[shape][0], base), predict_us(held, fit.profile)
        ms, mt = measured[(R, L, "static")], measured[(R, L, "kda_tickets")]
        row = {
            "R": R,
            "L": L,
            "pred_static_us": ps,
            "pred_tickets_us": pt,
            "meas_static_us": ms,
            "meas_tickets_us": mt,
            "pred_diff_us": pt - ps,
            "meas_diff_us": mt - ms,
            "within": within(pt - ps, mt - ms),
            "held_out_makespan_err": held_score.makespan_err,
            "held_out_start_err_median": held_score.start_err_median,
            "fold_costs": {k: list(fit.profile.costs[k]) for k in KEYS},
            "fold_cost_above": {k: list(v) for k, v in fit.profile.cost_above.items()},
            "fold_ticket_item_ns": fit.profile.latency_ns.get("ticket_item", 0.0),
            "fold_atomic_ns": fit.profile.latency_ns.get("atomic"),
            "fold_launches": fit.launches,
            "fold_seconds": time.perf_counter() - t1,
        }
        rows.append(row)
        log(
            f"{R}x{L}: static {ps:.2f} / tickets {pt:.2f} us predicted, diff "
            f"{pt - ps:+.2f} vs measured {mt - ms:+.2f} us "
            f"({'within' if row['within'] else 'MISSED'}); held-out traced makespan err "
            f"{100 * held_score.makespan_err:+.1f} % ({row['fold_seconds']:.0f} s)"
        )
    return {
        "base": base_name,
        "start": start,
        "launches": launches,
        "prologue": prologue,
        "take": take,
        "rows": rows,
    }


def overlay(
    folder: Path,
    launches: int,
    start: str,
    base_name: str,
    out: Path,
    prologue: bool = False,
    take: bool = False,
) -> dict:
    """The kda_tickets build's costs fitted on every shape, written as its overlay."""
    base = load_profile(base_name)
    train = [tr for trs in traces(folder / "kda_tickets" / start, launches).values() for tr in trs]
    fit = fit_costs(start_of(base, train, prologue, take), train, KEYS, switches=SWITCHES)
    d = fitted_overlay(fit, base, train, out=out)
    d["provenance"]["detail"] = (
        f"lab/ticket_k1_fit.py (calibrate.fit_costs: {', '.join(KEYS)} alone, the kda "
        f"stages apart at L = 1 and L >= 2; "
        + ("ticket_item measured, the median item prologue of the traces; " if prologue else "")
        + ("atomic measured, the median take round trip of the traces; " if take else "")
        + "the machine parameters h200-k1's); "
        + d["provenance"]["detail"]
    )
    write_overlay(d, out)
    return d


def table(rep: dict[str, Any]) -> str:
    lines = [
        "| R x L | predicted static / tickets (us) | measured static / tickets (us) "
        "| predicted difference | measured difference | error | within 1 us or 25 %? "
        "| held-out traced makespan error |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for r in rep["rows"]:
        lines.append(
            f"| {r['R']} x {r['L']} | {r['pred_static_us']:.2f} / {r['pred_tickets_us']:.2f} "
            f"| {r['meas_static_us']:.2f} / {r['meas_tickets_us']:.2f} "
            f"| {r['pred_diff_us']:+.2f} | {r['meas_diff_us']:+.2f} "
            f"| {r['pred_diff_us'] - r['meas_diff_us']:+.2f} "
            f"| {'yes' if r['within'] else 'no'} "
            f"| {100 * r['held_out_makespan_err']:+.1f} % |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dir", type=Path, required=True)
    ap.add_argument("--bench", type=Path, required=True)
    ap.add_argument("--launches", type=int, default=1, help="traced launches a shape to fit on")
    ap.add_argument("--start", choices=("warm", "cold"), default="warm")
    ap.add_argument("--base", default="h200-k1", help="the static build's profile")
    ap.add_argument("--overlay", type=Path, help="write the all-shape fit here")
    ap.add_argument(
        "--prologue",
        action="store_true",
        help="charge each taken item the median prologue measured on the training traces "
        "(ticket_item)",
    )
    ap.add_argument(
        "--take",
        action="store_true",
        help="time each take (atomic) as the median take round trip of the training traces",
    )
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    try:
        if a.launches < 1:
            raise InvalidInput(f"--launches {a.launches}: at least 1", what="launches")
        say = lambda m: print(m, file=sys.stderr)  # noqa: E731
        rep = run(a.dir, a.bench, a.launches, a.start, a.base, say, a.prologue, a.take)
        if a.overlay:
            t0 = time.perf_counter()
            overlay(a.dir, a.launches, a.start, a.base, a.overlay, a.prologue, a.take)
            say(f"wrote {a.overlay} ({time.perf_counter() - t0:.0f} s)")
    except InvalidInput as e:
        print(f"ticket_k1_fit: {e}", file=sys.stderr)
        return 2
    print(table(rep))
    if a.json:
        a.json.write_text(json.dumps(rep, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
