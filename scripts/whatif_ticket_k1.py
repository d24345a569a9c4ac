"""The prediction of docs/whatif/ticket_k1.md: K1's static placement against its ticket
schedules (kda_tickets, gemv_tickets), simulated and checked at the nine shapes (R, L in
{1, 2, 4}) on each GPU profile at each occupancy; markdown on stdout, rows as JSON with
``--json``. ``--atomic-ns`` reruns the ticket schedules with the atomic round trip set
(a sensitivity run: the profiles do not time atomics, the engine takes the poll's).

Usage: ``python scripts/whatif_ticket_k1.py [--gpu h200-k1 mi355x] [--occupancy 1 2]
[--shapes 1x1,2x2] [--atomic-ns 540] [--json]``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import parse_shapes
from kda_sim.kernels.k1.ticket_whatif import SHAPES, Row, markdown, table, with_latency
from kda_sim.machine import load_profile


def _progress(r: Row) -> None:
    span = "-" if r.makespan_us is None else f"{r.makespan_us:.2f} us"
    print(f"{r.gpu} occ {r.occupancy} {r.R}x{r.L} {r.schedule}: {span}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--gpu", nargs="+", default=["h200-k1", "mi355x"])
    p.add_argument("--occupancy", nargs="+", type=int, default=[1, 2])
    p.add_argument("--shapes", default=",".join(f"{r}x{lng}" for r, lng in SHAPES))
    p.add_argument("--atomic-ns", type=float, default=None, help="atomic round trip, ns")
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    try:
        shapes = parse_shapes(args.shapes)
        profs = [load_profile(g) for g in args.gpu]
        if args.atomic_ns is not None:
            if args.atomic_ns < 0:
                raise InvalidInput(f"--atomic-ns {args.atomic_ns}: at least 0", what="atomic")
            profs = [with_latency(pr, atomic=args.atomic_ns) for pr in profs]
        rows = table(profs, shapes, tuple(args.occupancy), progress=_progress)
    except InvalidInput as e:
        print(f"whatif_ticket_k1: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([dataclasses.asdict(r) for r in rows], indent=1))
    else:
        print(markdown(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
