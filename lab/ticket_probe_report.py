"""The experiment that names the ticket build's slower k.stage and gemv (docs/whatif/
ticket_k1.md, "The experiment, built"), read from one run of
``scripts/device_ticket_probe.sh`` with no GPU.

Four builds (``BUILDS``): the static K1, the static K1 with a take before each task
(``Build.probe`` "take"), the unrolled ticket build (``ticket_unroll`` 3), and the same
running the static placement's item for each take (``Build.probe`` "static_item"). Reads
their warm traced launches (``DIR/BUILD/warm/k1_R*_L*_*.json``) and their untraced times
(``kernel_bench_probe.json``) and prints, shape by shape and build by build:

* the untraced per-launch time (us);
* k.stage's span (ns) of each CTA's first kda task, median over the attn CTAs and over
  the gemv CTAs apart (an attn CTA's first task follows its mix, a gemv CTA's its gemv);
* the attn CTAs' time from their mix's end to their first k.stage's end (ns, median): a
  take issued before the mix ends and the stage after it, whole;
* the gemv CTAs' busy time in gemv0 and gemv1 (us): the stage's span less the waits of
  the polls it holds, median over the CTAs;
* a take's round trip (ns, issue to return, median over the takes) in the builds that
  take;

and the experiment's two readings of each: the take's (static_take less static) and the
placement's (tickets less tickets_static).

Medians over every launch of a shape pooled. ``--json OUT`` writes the same figures.

    python -m lab.ticket_probe_report --dir S --bench kernel_bench_probe.json [--json OUT]
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from kda_sim.compare.spread import launches_by_shape
from kda_sim.errors import InvalidInput
from kda_sim.importers.chrome import read_kernel_trace
from kda_sim.timeline import Timeline
from lab.gpu_jobs import report_main
from lab.ticket_k1_report import cell, median, takes_ns, variant_rows

# the run's builds, by their folder under DIR: the variant dict bench.kernel_bench times
TICKETS = {"kda_tickets": True, "ticket_unroll": 3}
BUILDS: dict[str, dict[str, Any]] = {
    "static": {},
    "static_take": {"probe": "take"},
    "tickets": TICKETS,
    "tickets_static": TICKETS | {"probe": "static_item"},
}
ROLES = ("attn", "gemv")
GEMV_STAGES = ("gemv0", "gemv1")
START = "warm"


def build_of(variant: dict[str, Any]) -> str | None:
    """The run's build a kernel_bench variant dict is (None: not one of the four)."""
    for name, v in BUILDS.items():
        if variant == v:
            return name
    return None


def first_kstage_ns(tl: Timeline) -> dict[str, list[float]]:
    """k.stage's span of each CTA's first kda task, by the CTA's role (attn, gemv; a CTA
    of neither role, such as 253..255 under kda_tickets, is left out)."""
    out: dict[str, list[float]] = {r: [] for r in ROLES}
    for c in tl.ctas:
        spans = [s for s in c.stages if s.name == "k.stage" and s.task >= 0]
        if c.role in out and spans:
            first = min(spans, key=lambda s: s.start)
            out[c.role].append(first.end - first.start)
    return out


def after_mix_ns(tl: Timeline) -> list[float]:
    """Each attn CTA's time from its mix's end to its first kda task's k.stage end: the
    stage's span and whatever runs before it (a take's wait, the item's prologue), so
    that builds whose take is issued before the mix ends compare whole."""
    out = []
    for c in tl.ctas:
        mix = [s for s in c.stages if s.name == "mix"]
        spans = [s for s in c.stages if s.name == "k.stage" and s.task >= 0]
        if c.role == "attn" and mix and spans:
            out.append(min(spans, key=lambda s: s.start).end - mix[0].end)
    return out


def busy_ns(tl: Timeline, stage: str) -> list[float]:
    """Each gemv CTA's busy time in role stage ``stage``: its span less the waits of the
    polls it holds."""
    out = []
    for c in tl.ctas:
        if c.role != "gemv":
            continue
        waits: dict[str, float] = defaultdict(float)
        for p in c.polls:
            if p.task < 0 and p.satisfied is not None:
                waits[p.stage] += p.satisfied - p.first_issue
        out += [s.end - s.start - waits[stage] for s in c.stages if s.name == stage]
    return out


def bench_us(path: Path) -> dict[tuple[int, int, str], float]:
    """The untraced per-launch time (us) of each (R, L, build) in a kernel_bench file (its
    ``variants`` rows: the median of the alternating rounds, CUDA-graph replays); rows of
    other builds are left out."""
    rows = variant_rows(path)
    out: dict[tuple[int, int, str], float] = {}
    for r in rows:
        name = build_of(r["variant"])
        if name is not None:
            out[(r["R"], r["L"], name)] = float(r["us"])
    return out


def shape_figures(tls: list[Timeline]) -> dict[str, float | None]:
    """One build's figures at one shape, over its launches pooled."""
    ks: dict[str, list[float]] = {r: [] for r in ROLES}
    busy: dict[str, list[float]] = {g: [] for g in GEMV_STAGES}
    takes: list[float] = []
    after: list[float] = []
    for tl in tls:
        after += after_mix_ns(tl)
        for role, xs in first_kstage_ns(tl).items():
            ks[role] += xs
        for g in GEMV_STAGES:
            busy[g] += [x / 1e3 for x in busy_ns(tl, g)]
        takes += takes_ns(tl)
    out: dict[str, float | None] = {f"kstage_{r}_ns": median(ks[r]) for r in ROLES}
    out["after_mix_ns"] = median(after)
    out |= {f"{g}_busy_us": median(busy[g]) for g in GEMV_STAGES}
    out["take_ns"] = median(takes)
    out["makespan_us"] = median([(t.makespan or 0.0) / 1e3 for t in tls])
    out["launches"] = len(tls)
    return out


def report(folder: Path, bench: Path | None) -> dict[str, Any]:
    """{"shapes": {"RxL": {"R", "L", BUILD: figures with "untraced_us"}}}; a build without
    a folder of traces has only its untraced time."""
    untraced = bench_us(bench) if bench else {}
    shapes: dict[str, dict[str, Any]] = {}
    for name in BUILDS:
        d = folder / name / START
        if not d.is_dir():
            continue
        for (R, L), paths in launches_by_shape(d).items():
            row = shapes.setdefault(f"{R}x{L}", {"R": R, "L": L})
            row[name] = shape_figures([read_kernel_trace(p) for p in paths])
    for R, L, name in untraced:
        row = shapes.setdefault(f"{R}x{L}", {"R": R, "L": L})
        row.setdefault(name, {})
    for row in shapes.values():
        for name in BUILDS:
            if name in row:
                row[name]["untraced_us"] = untraced.get((row["R"], row["L"], name))
    if not shapes:
        raise InvalidInput("no traces of the four builds and no bench file", where=str(folder))
    order = sorted(shapes, key=lambda k: (shapes[k]["R"], shapes[k]["L"]))
    return {"shapes": {k: shapes[k] for k in order}}


# the tables: (title, figure, format)
FIGURES = (
    ("untraced per-launch time (us)", "untraced_us", ".2f"),
    ("k.stage of a CTA's first task, attn CTAs (ns, median)", "kstage_attn_ns", ".0f"),
    ("k.stage of a CTA's first task, gemv CTAs (ns, median)", "kstage_gemv_ns", ".0f"),
    ("attn CTAs, mix's end to the first k.stage's end (ns, median)", "after_mix_ns", ".0f"),
    ("gemv0 busy, span less poll waits (us, median over gemv CTAs)", "gemv0_busy_us", ".2f"),
    ("gemv1 busy, span less poll waits (us, median over gemv CTAs)", "gemv1_busy_us", ".2f"),
    ("take round trip (ns, median)", "take_ns", ".0f"),
)


# the experiment's two readings of a figure: what the take adds to the static build, and
# what the ticket build loses to the static build's placement (docs/whatif/ticket_k1.md)
EFFECTS = (("take", "static_take", "static"), ("placement", "tickets", "tickets_static"))


def effects(row: dict[str, Any], key: str) -> dict[str, float | None]:
    """A shape's figure ``key``: each effect's difference (build less its reference)."""
    out: dict[str, float | None] = {}
    for name, build, base in EFFECTS:
        a, b = row.get(build, {}).get(key), row.get(base, {}).get(key)
        out[name] = None if a is None or b is None else a - b
    return out


def tables(rep: dict[str, Any]) -> str:
    out = []
    for title, key, fmt in FIGURES:
        out.append(f"{title}:\n")
        out.append("| R x L | " + " | ".join(BUILDS) + " |")
        out.append("|" + "---|" * (len(BUILDS) + 1))
        for name, r in rep["shapes"].items():
            cells = [cell(r.get(b, {}).get(key), fmt) for b in BUILDS]
            out.append(f"| {name.replace('x', ' x ')} | " + " | ".join(cells) + " |")
        out.append("")
    names = [e[0] for e in EFFECTS]
    read = [f for f in FIGURES if f[1] != "take_ns"]  # a static build has no take to less
    out.append(
        "the readings: take = static_take - static, placement = tickets - tickets_static "
        "(each figure's units as above):\n"
    )
    out.append(
        "| R x L | " + " | ".join(f"{key}: {' / '.join(names)}" for _, key, _ in read) + " |"
    )
    out.append("|" + "---|" * (len(read) + 1))
    for name, r in rep["shapes"].items():
        cells = []
        for _, key, fmt in read:
            e = effects(r, key)
            cells.append(" / ".join(cell(e[n], "+" + fmt) for n in names))
        out.append(f"| {name.replace('x', ' x ')} | " + " | ".join(cells) + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dir", type=Path, required=True, help="the run's s/ folder of traces")
    ap.add_argument("--bench", type=Path, help="the run's kernel_bench_probe.json")
    ap.add_argument("--json", type=Path, help="write the figures as JSON here (not overwritten)")
    a = ap.parse_args(argv)
    return report_main("ticket_probe_report", lambda: report(a.dir, a.bench), tables, a.json)


if __name__ == "__main__":
    sys.exit(main())
