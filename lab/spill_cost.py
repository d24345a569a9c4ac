"""What a spilled register costs the K1, and how much of the ticket build's slower code it
explains (docs/whatif/ticket_k1.md, "What a spill costs").

``scripts/device_spill_cost.sh`` times, untraced and alternating, the static K1 at its
128-register cap, the same build capped at 112 and 96 (the same code and placement,
made to spill by the cap alone) and the unrolled ticket build (128, spilling). Each row
records what the compiler reports (``n_spills``). The capped builds price a spill:
the least-squares slope of (capped - static) time on the spills, through the origin, at
each L (the code differs by L; R is a run-time argument). The ticket build's difference
less what the model gives it (its takes and order, ``lab.ticket_unroll_predict``) is the
part of its code the model lacks; the slope times its spills is what spilling would
explain of it.

    python -m lab.spill_cost --bench kernel_bench_spill.json [--profile h200-k1] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from kda_sim.errors import InvalidInput
from kda_sim.machine import load_profile
from lab.ticket_k1_report import variant_rows
from lab.ticket_unroll_predict import rows as predicted_rows


def build_name(variant: dict[str, Any]) -> str:
    """A bench row's build: "static", "cap112" (the static build capped), "tickets"."""
    if variant.get("kda_tickets"):
        return "tickets"
    cap = variant.get("maxnreg")
    return f"cap{cap}" if cap not in (None, 128) else "static"


def by_shape(rows: list[dict[str, Any]], where: str) -> dict[tuple[int, int], dict[str, Any]]:
    """Each shape's rows by build; a shape without the static build or a ticket build is
    refused (there is nothing to measure it against)."""
    out: dict[tuple[int, int], dict[str, Any]] = {}
    for r in rows:
        out.setdefault((int(r["R"]), int(r["L"])), {})[build_name(r["variant"])] = r
    for (R, L), b in out.items():
        if "static" not in b or "tickets" not in b or not any(k.startswith("cap") for k in b):
            raise InvalidInput(
                f"{R}x{L}: the spill bench times the static build, a capped one and the "
                f"ticket build a shape; this one has {sorted(b)}",
                where=where,
            )
    return dict(sorted(out.items()))


def slope(points: list[tuple[float, float]]) -> float | None:
    """Least squares y = c x through the origin (x: spills, y: us); None without spills."""
    sxx = sum(x * x for x, _ in points)
    return sum(x * y for x, y in points) / sxx if sxx > 0 else None


def analyse(
    shapes: dict[tuple[int, int], dict[str, Any]], predicted: dict[tuple[int, int], float]
) -> dict[str, Any]:
    """Per-L spill prices from the capped builds, and each shape's ticket build read
    against them. ``predicted``: the model's ticket - static difference (us) a shape."""
    pts: dict[int, list[tuple[float, float]]] = {}
    for (_, L), b in shapes.items():
        s = b["static"]
        for name, r in b.items():
            if name.startswith("cap"):
                pts.setdefault(L, []).append(
                    (float(r["spills"] - s["spills"]), float(r["us"] - s["us"]))
                )
    price = {L: slope(p) for L, p in sorted(pts.items())}
    out = []
    for (R, L), b in shapes.items():
        s, t = b["static"], b["tickets"]
        measured = float(t["us"] - s["us"])
        row: dict[str, Any] = {
            "R": R,
            "L": L,
            "static_us": float(s["us"]),
            "static_spills": int(s["spills"]),
            "caps": {
                n: {"spills": int(r["spills"]), "regs": int(r["regs"]), "us": float(r["us"])}
                for n, r in sorted(b.items())
                if n.startswith("cap")
            },
            "tickets_spills": int(t["spills"]),
            "measured_us": measured,
        }
        if (R, L) in predicted:
            row["model_us"] = predicted[(R, L)]
            row["unexplained_us"] = measured - predicted[(R, L)]
        if price.get(L) is not None:
            row["spill_priced_us"] = price[L] * (t["spills"] - s["spills"])
        out.append(row)
    return {"us_a_spill": price, "rows": out}


def table(res: dict[str, Any]) -> str:
    caps = sorted({n for r in res["rows"] for n in r["caps"]})
    head = "| R x L | static (us, spills) | " + " | ".join(
        f"{c[3:]} registers: +us (spills)" for c in caps
    )
    head += " | tickets: +us (spills) | model's +us | unexplained | spills priced |"
    lines = [head, "|" + "---|" * (5 + len(caps) + 1)]
    for r in res["rows"]:
        cells = [f"{r['R']} x {r['L']}", f"{r['static_us']:.2f} ({r['static_spills']})"]
        for c in caps:
            k = r["caps"].get(c)
            cells.append(f"{k['us'] - r['static_us']:+.2f} ({k['spills']})" if k else "-")
        cells.append(f"{r['measured_us']:+.2f} ({r['tickets_spills']})")
        for key in ("model_us", "unexplained_us", "spill_priced_us"):
            cells.append(f"{r[key]:+.2f}" if key in r else "-")
        lines.append("| " + " | ".join(cells) + " |")
    prices = ", ".join(
        f"L = {L}: {p * 1e3:.1f} ns" if p is not None else f"L = {L}: -"
        for L, p in res["us_a_spill"].items()
    )
    return "\n".join(lines) + f"\n\na spill (as n_spills counts), from the capped builds: {prices}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bench", type=Path, required=True, help="kernel_bench_spill.json")
    ap.add_argument("--profile", default="h200-k1", help="the model's profile for its +us")
    ap.add_argument("--no-model", action="store_true", help="leave the model's column out")
    ap.add_argument("--json", type=Path, default=None)
    a = ap.parse_args(argv)
    try:
        shapes = by_shape(variant_rows(a.bench), str(a.bench))
        unrolls = {int(b["tickets"]["variant"].get("ticket_unroll", 0)) for b in shapes.values()}
        if len(unrolls) != 1:
            raise InvalidInput(
                f"ticket builds of several unrolls {sorted(unrolls)}", where=str(a.bench)
            )
        predicted: dict[tuple[int, int], float] = {}
        if not a.no_model:
            for r in predicted_rows(load_profile(a.profile), unrolls.pop()):
                predicted[(r["R"], r["L"])] = r["tickets_us"] - r["static_us"]
    except InvalidInput as e:
        print(f"spill_cost: {e}", file=sys.stderr)
        return 2
    res = analyse(shapes, predicted)
    print(table(res))
    if a.json is not None:
        res["us_a_spill"] = {str(k): v for k, v in res["us_a_spill"].items()}
        a.json.write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
