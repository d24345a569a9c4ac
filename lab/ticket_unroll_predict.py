"""The prediction for K1's kda_tickets build with unrolled task copies
(``LaunchConfig.ticket_unroll``), written before it runs (docs/whatif/ticket_k1.md,
"The unrolled build"): the static K1 and the unrolled ticket build at the nine shapes on
``--gpu`` (h200-k1) at two CTAs an SM, the run's variants (the Triton K1's
``default_config``), nominal latencies, the same costs for both (the unrolled copies are
the static placement's task code; ``cost_build`` gives both the static fit). ``--unroll``
copies (default 3: one more than the busiest CTA's items at R = 4, ``max_tasks(4) + 1``),
so the loop after them, whose preheader spills, runs only past them.

    python -m lab.ticket_unroll_predict [--gpu h200-k1] [--unroll 3] [--json OUT]
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


def table(rs: list[dict[str, Any]]) -> str:
    lines = [
        "| R x L | copies | predicted static / tickets (us) | predicted difference |",
        "|---|---|---|---|",
    ]
    for r in rs:
        d = r["tickets_us"] - r["static_us"]
        lines.append(
            f"| {r['R']} x {r['L']} | {r['unroll']} | {r['static_us']:.2f} / "
            f"{r['tickets_us']:.2f} | {d:+.2f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--gpu", default="h200-k1")
    ap.add_argument("--unroll", type=int, default=UNROLL)
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    rs = rows(load_profile(a.gpu), a.unroll)
    print(table(rs))
    if a.json is not None:
        a.json.write_text(json.dumps({"gpu": a.gpu, "occupancy": OCCUPANCY, "rows": rs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
