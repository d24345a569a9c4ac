"""The prediction for K1's kda_tickets build with unrolled task copies
(``LaunchConfig.ticket_unroll``), written before it runs (docs/whatif/ticket_k1.md,
"The unrolled build"): the static K1 and the unrolled ticket build at the nine shapes on
``--gpu`` (h200-k1) at two CTAs an SM, the run's variants (the Triton K1's
``default_config``), nominal latencies, the same costs for both (the unrolled copies are
the static placement's task code; ``cost_build`` gives both the static fit). ``--unroll``
copies (default 3: one more than the busiest CTA's items at R = 4, ``max_tasks(4) + 1``),
so the loop after them, whose preheader spills, runs only past them.

    python -m lab.ticket_unroll_predict [--gpu h200-k1 | --profile OVERLAY.json] [--unroll 3]
        [--json OUT] [--bench kernel_bench_tickets.json]

With ``--bench`` (a run of ``UNROLL=3 scripts/device_ticket_k1.sh``) the table adds the
measured untraced times and the prediction's error against issue 39's bar.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kda_kernel.triton.defaults import default_config
from kda_kernel.triton.trace_layout import max_tasks
from kda_sim.engine import simulate
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.ticket_whatif import SHAPES
from kda_sim.machine import load_profile
from kda_sim.machine.profile import GpuProfile
from lab.ticket_k1_fit import within
from lab.ticket_k1_report import bench_us

OCCUPANCY = 2  # the Triton K1's, limited by registers (128 a thread)


UNROLL = max_tasks(4) + 1  # one more than the busiest CTA's items at the largest R


def makespan_us(cfg: LaunchConfig, prof: GpuProfile) -> float:
    out = simulate(cfg, prof, occupancy=OCCUPANCY)
    if out.deadlock or out.timeline.makespan is None:
        raise SystemExit(f"{cfg.label()}: the model deadlocks")
    return out.timeline.makespan / 1e3


def rows(prof: GpuProfile, unroll: int = UNROLL) -> list[dict[str, Any]]:
    out = []
    for R, L in SHAPES:
        static = default_config(R, L, 8)
        tickets = default_config(R, L, 8, kda_tickets=True, ticket_unroll=unroll)
        ps, pt = makespan_us(static, prof), makespan_us(tickets, prof)
        out.append({"R": R, "L": L, "unroll": unroll, "static_us": ps, "tickets_us": pt})
        print(f"{R}x{L}: static {ps:.2f} us, unrolled tickets {pt:.2f} us", file=sys.stderr)
    return out


def measure(rs: list[dict[str, Any]], bench: Path) -> None:
    """Each row's measured untraced times and the prediction's error (in place): the
    bench's ticket build with the rows' copies (a run may time the loop build too)."""
    got = bench_us(bench, rs[0]["unroll"] if rs else None)
    for r in rs:
        ms, mt = got[(r["R"], r["L"], "static")], got[(r["R"], r["L"], "kda_tickets")]
        pd, md = r["tickets_us"] - r["static_us"], mt - ms
        r.update(meas_static_us=ms, meas_tickets_us=mt, error_us=pd - md, within=within(pd, md))


def table(rs: list[dict[str, Any]]) -> str:
    head = "| R x L | copies | predicted static / tickets (us) | predicted difference |"
    rule = "|---|---|---|---|"
    measured = all("within" in r for r in rs)
    if measured:
        head += " measured static / tickets (us) | measured difference | error | within? |"
        rule += "---|---|---|---|"
    lines = [head, rule]
    for r in rs:
        d = r["tickets_us"] - r["static_us"]
        line = (
            f"| {r['R']} x {r['L']} | {r['unroll']} | {r['static_us']:.2f} / "
            f"{r['tickets_us']:.2f} | {d:+.2f} |"
        )
        if measured:
            md = r["meas_tickets_us"] - r["meas_static_us"]
            line += (
                f" {r['meas_static_us']:.2f} / {r['meas_tickets_us']:.2f} | {md:+.2f} | "
                f"{r['error_us']:+.2f} | {'yes' if r['within'] else 'no'} |"
            )
        lines.append(line)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--gpu",
        "--profile",
        dest="gpu",
        default="h200-k1",
        help="a profile name or an overlay file (run 97's H100: python -m lab.k1_h100_fit)",
    )
    ap.add_argument("--unroll", type=int, default=UNROLL)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--bench", type=Path, default=None, help="the run's kernel bench JSON")
    a = ap.parse_args(argv)
    rs = rows(load_profile(a.gpu), a.unroll)
    if a.bench is not None:
        measure(rs, a.bench)
    print(table(rs))
    if a.json is not None:
        a.json.write_text(json.dumps({"gpu": a.gpu, "occupancy": OCCUPANCY, "rows": rs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
