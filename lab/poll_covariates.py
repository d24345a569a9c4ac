"""What sets a poll's time in the bundled H200 traces (no GPU): every recorded poll with
its retries, its span, and what else was going on when it was issued.

Per poll (``first issue -> satisfied``, ``retries``):

* the site's code (``kernel/triton``, as ``kda_sim.kernels.k1.poll_sites`` holds it): the
  poll tensor's pairs a thread (a try counts the stale pairs one register slot at a time,
  a CTA barrier each) and its back-off (``nanosleep`` of ``Build.sleep_ns`` between tries,
  or none);
* the HBM stream's state: how many gemv CTAs were inside gemv0 / gemv1 (streaming their
  weights) at the first issue, and that count averaged over the poll's span;
* the SM and its TPC: whether the CTA sharing the SM, and those on the TPC's other SM,
  were streaming weights at the first issue;
* contention on the polled lines: how many polls of the same label were in flight at
  the first issue;
* the hand-off: the producer whose put released the poll and that put's latest time
  (``kda_sim.compare.diff.annotate_producers``: the producer's first recorded event
  after the put), so ``satisfied - put`` is the put-to-seen latency of a poll that
  waited (retries >= 1).

A try's cost is read per poll as (span - the median span of the site's polls that passed
at once in the same trace) / retries, and regressed on the covariates one at a time and
together (R^2). ``--json`` writes every row and the tables.

Usage: ``python -m lab.poll_covariates [TRACE.json ...] [--json OUT]`` (default: the nine
``traces/k1_h200_R*_L*.json.gz``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.counterpart import read_k1_trace
from kda_sim.compare.diff import annotate_producers
from kda_sim.compare.model import model_view
from kda_sim.kernels.k1 import poll_sites as sites
from kda_sim.kernels.k1.constants import HD
from kda_sim.timeline.model import Timeline

ROOT = Path(__file__).resolve().parent.parent
SHAPES = ("R1_L1", "R1_L2", "R1_L4", "R2_L1", "R2_L2", "R2_L4", "R4_L1", "R4_L2", "R4_L4")
GEMV_STAGES = ("gemv0", "gemv1")
SLEEP_NS = 128  # kernel/triton/launch.py Build.sleep_ns: the long polls' back-off


def site_code(stage: str, label: str, n_cells: int, L: int) -> tuple[str, int, int]:
    """(site name, pairs a thread, back-off ns) of a recorded poll: the model's facts of
    the Triton K1's sites (``kda_sim.kernels.k1.poll_sites``), told apart by stage, label
    and, for k.gates' two PROJ polls, size (f_a polls L HD cells, beta L)."""
    if label == "PART":
        name, site = "gate PART", sites.PART
    elif label == "WGT":
        name, site = "mix WGT", sites.WGT
    elif label == "MSQ":
        name, site = "mix MSQ", sites.msq(L)
    elif label == "XRDY":
        name, site = "load_x XRDY", sites.XRDY
    elif stage == "k.conv":
        name, site = "k.conv PROJ", sites.CONV
    elif stage == "k.gates" and label == "PROJ" and n_cells >= HD:
        name, site = "k.gates PROJ f_a", sites.GATES_FA
    elif stage == "k.gates" and label == "PROJ":
        name, site = "k.gates PROJ beta", sites.GATES_BETA
    elif label == "QK":
        name, site = "k.gates QK", sites.qk(L)
    elif label == "ONRM+PROJ":
        name, site = "k.norm ONRM+PROJ", sites.NORM
    else:
        return f"{stage} {label}", 1, 0
    return name, site.lanes, SLEEP_NS if site.backoff else 0


def _inside(stages: list[tuple[float, float]], t: float) -> bool:
    return any(s <= t < e for s, e in stages)


def poll_rows(path: Path) -> list[dict[str, Any]]:
    """One row a recorded poll of the trace at ``path`` (see the module)."""
    tl: Timeline = read_k1_trace(path)
    mv = model_view(tl)
    ann = annotate_producers(tl, mv)
    L = int(mv.cfg.L)
    shape = f"{mv.cfg.R}x{L}"
    streams: dict[int, list[tuple[float, float]]] = {}
    by_unit: dict[int, list[int]] = defaultdict(list)
    for c in tl.ctas:
        by_unit[c.unit].append(c.cta)
        streams[c.cta] = [(s.start, s.end) for s in c.stages if s.name in GEMV_STAGES]
    g0 = np.array([s for v in streams.values() for s, _ in v])
    g1 = np.array([e for v in streams.values() for _, e in v])
    label_spans: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for c in tl.ctas:
        for p in c.polls:
            if p.satisfied is not None:
                label_spans[p.label].append((p.first_issue, p.satisfied))
    rows: list[dict[str, Any]] = []
    for c, ca in zip(tl.ctas, ann.ctas, strict=True):
        mates = [d for d in by_unit[c.unit] if d != c.cta]
        tpc = by_unit.get(c.unit ^ 1, [])  # H100/H200: SMs 2k and 2k + 1 share a TPC
        for p, pa in zip(c.polls, ca.polls, strict=True):
            if p.satisfied is None or p.retries is None:
                continue
            t0, t1 = p.first_issue, p.satisfied
            site, lanes, sleep = site_code(p.stage, p.label, p.n_cells, L)
            span = t1 - t0
            if span > 0 and g0.size:
                over = np.clip(np.minimum(g1, t1) - np.maximum(g0, t0), 0, None).sum() / span
            else:
                over = float(((g0 <= t0) & (g1 > t0)).sum()) if g0.size else 0.0
            rows.append(
                {
                    "shape": shape,
                    "cta": c.cta,
                    "site": site,
                    "task": p.task,
                    "n_cells": p.n_cells,
                    "lanes": lanes,
                    "sleep_ns": sleep,
                    "first_issue": t0,
                    "span": span,
                    "retries": int(p.retries),
                    "gemv_streaming": int(((g0 <= t0) & (g1 > t0)).sum()) if g0.size else 0,
                    "gemv_streaming_mean": float(over),
                    "sm_mate_streaming": sum(_inside(streams[d], t0) for d in mates),
                    "tpc_streaming": sum(_inside(streams[d], t0) for d in tpc),
                    "same_label_polls": sum(s <= t0 < e for s, e in label_spans[p.label]),
                    "put_to_seen": None if pa.put_time is None else t1 - pa.put_time,
                }
            )
    return rows


def try_costs(rows: list[dict[str, Any]], pooled: bool = False) -> list[dict[str, Any]]:
    """The polls that retried, each with ``try_ns``: (span - the median span of its site's
    polls with no retry in the same trace) / retries; sites with no such poll drop out.
    ``pooled``: where the trace has none (gate's PART retries at every shape but 1x4, its
    S polls starting together), the site's polls with no retry in every trace given stand
    for them (the site table; the prices keep to the same trace)."""
    base: dict[tuple[str, str], list[float]] = defaultdict(list)
    every: dict[str, list[float]] = defaultdict(list)
    for r in rows:
        if r["retries"] == 0:
            base[(r["shape"], r["site"])].append(r["span"])
            every[r["site"]].append(r["span"])
    out = []
    for r in rows:
        b = base.get((r["shape"], r["site"])) or (every.get(r["site"]) if pooled else None)
        if r["retries"] >= 1 and b:
            out.append({**r, "try_ns": (r["span"] - float(np.median(b))) / r["retries"]})
    return out


def r2(y: np.ndarray, cols: Sequence[np.ndarray]) -> tuple[float, list[float]]:
    """R^2 of a least-squares line (with intercept) of ``y`` on ``cols``, and its
    coefficients (intercept first)."""
    x = np.column_stack([np.ones(len(y)), *cols])
    coef, *_ = np.linalg.lstsq(x, y, rcond=None)
    res = y - x @ coef
    tot = float(((y - y.mean()) ** 2).sum())
    return (1.0 - float((res**2).sum()) / tot if tot > 0 else 0.0), [float(c) for c in coef]


COVARIATES = (
    "sleep_ns",
    "lanes",
    "gemv_streaming_mean",
    "sm_mate_streaming",
    "tpc_streaming",
    "same_label_polls",
)


def _med(v: list[float]) -> float | None:
    return float(np.median(v)) if v else None


def site_table(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per site: polls, the code's lanes and back-off, the span of a poll that passed at
    once, a try's cost, put-to-seen of a poll that waited; medians over the polls, and a
    try's range over the traces' medians."""
    tries = try_costs(rows, pooled=True)
    out = []
    for site in dict.fromkeys(r["site"] for r in rows):
        rs = [r for r in rows if r["site"] == site]
        ts = [r for r in tries if r["site"] == site]
        per_shape = defaultdict(list)
        for r in ts:
            per_shape[r["shape"]].append(r["try_ns"])
        shape_meds = [float(np.median(v)) for v in per_shape.values()]
        out.append(
            {
                "site": site,
                "polls": len(rs),
                "retried": sum(r["retries"] > 0 for r in rs),
                "lanes": sorted({r["lanes"] for r in rs}),
                "sleep_ns": rs[0]["sleep_ns"],
                "pass_at_once_ns": _med([r["span"] for r in rs if r["retries"] == 0]),
                "try_ns": _med([r["try_ns"] for r in ts]),
                "try_ns_range": [min(shape_meds), max(shape_meds)] if shape_meds else None,
                "put_to_seen_ns": _med(
                    [r["put_to_seen"] for r in rs if r["retries"] > 0 and r["put_to_seen"]]
                ),
            }
        )
    return out


def regression(rows: list[dict[str, Any]], exclude: Sequence[str] = ()) -> dict[str, Any]:
    """A try's cost against each covariate alone and all together (R^2, slope)."""
    ts = [r for r in try_costs(rows) if r["site"] not in exclude and r["site"] != "load_x XRDY"]
    y = np.array([r["try_ns"] for r in ts], float)
    out: dict[str, Any] = {"polls": len(ts), "median_try_ns": float(np.median(y)), "alone": {}}
    for c in COVARIATES:
        x = np.array([r[c] for r in ts], float)
        fit, coef = r2(y, [x])
        out["alone"][c] = {"r2": fit, "slope": coef[1]}
    fit, coef = r2(y, [np.array([r[c] for r in ts], float) for c in COVARIATES])
    out["all"] = {"r2": fit, "coef": dict(zip(("intercept", *COVARIATES), coef, strict=True))}
    site_mean = defaultdict(list)
    for r in ts:
        site_mean[r["site"]].append(r["try_ns"])
    means = {s: float(np.mean(v)) for s, v in site_mean.items()}
    pred = np.array([means[r["site"]] for r in ts])
    out["site_alone_r2"] = 1.0 - float(((y - pred) ** 2).sum()) / float(((y - y.mean()) ** 2).sum())
    return out


PRICED = ("poll", "poll_lane", "backoff")  # the profile's figures printed
PRICE_EXCLUDE = ("k.norm ONRM+PROJ",)  # its first try is slow for a reason the code does not say


def try_prices(rows: list[dict[str, Any]]) -> dict[str, float]:
    """The profile's poll figures from the polls' retries: a retry's cost regressed on the
    code's facts, ``a + b sleep_ns + c lanes``, is a try (poll + (lanes - 1) poll_lane)
    and its back-off (backoff where the site sleeps): poll = a + c, poll_lane = c,
    backoff = b SLEEP_NS. k.norm's ONRM+PROJ is left out (``PRICE_EXCLUDE``)."""
    ts = [r for r in try_costs(rows) if r["site"] not in PRICE_EXCLUDE]
    y = np.array([r["try_ns"] for r in ts], float)
    sleep = np.array([r["sleep_ns"] for r in ts], float)
    lanes = np.array([r["lanes"] for r in ts], float)
    fit, (a, b, c) = r2(y, [sleep, lanes])
    return {"poll": a + c, "poll_lane": c, "backoff": b * SLEEP_NS, "r2": fit, "polls": len(ts)}


def mate_effect(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Polls that passed at once (one try), by whether the CTA sharing the SM was
    streaming weights at the first issue: the poll-behind-weight-loads hypothesis."""
    out = []
    for site in dict.fromkeys(r["site"] for r in rows):
        one = [r for r in rows if r["site"] == site and r["retries"] == 0]
        on = [r["span"] for r in one if r["sm_mate_streaming"] > 0]
        off = [r["span"] for r in one if r["sm_mate_streaming"] == 0]
        if on and off:
            out.append({"site": site, "alone": _med(off), "beside_stream": _med(on), "n": len(on)})
    return out


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.0f}"


def markdown(
    sites: list[dict[str, Any]],
    reg: dict[str, Any],
    bare: dict[str, Any],
    mates: list[dict[str, Any]],
) -> str:
    """The three tables: per site; a retry's cost against each covariate, over every site
    and without k.norm's (``bare``); one try beside a weight stream and not."""
    lines = [
        "| site | polls | retried | lanes a thread | back-off (ns) | one try, passed at once (ns) "
        "| a retry (ns) | a retry, range of the traces' medians (ns) | put to seen, polls that "
        "waited (ns) |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in sites:
        rng = s["try_ns_range"]
        lines.append(
            f"| {s['site']} | {s['polls']} | {s['retried']} | "
            f"{', '.join(map(str, s['lanes']))} | {s['sleep_ns']} | {_fmt(s['pass_at_once_ns'])} "
            f"| {_fmt(s['try_ns'])} | {'-' if rng is None else f'{rng[0]:.0f} to {rng[1]:.0f}'} "
            f"| {_fmt(s['put_to_seen_ns'])} |"
        )
    lines += [
        "",
        f"| covariate of a retry's cost | R^2 alone, all sites ({reg['polls']} polls) | slope "
        f"| R^2 alone, without k.norm ({bare['polls']} polls) | slope | together, without "
        "k.norm: coefficient |",
        "|---|---|---|---|---|---|",
    ]
    for c, v in reg["alone"].items():
        w = bare["alone"][c]
        lines.append(
            f"| {c} | {v['r2']:.3f} | {v['slope']:+.1f} | {w['r2']:.3f} | {w['slope']:+.1f} "
            f"| {bare['all']['coef'][c]:+.2f} |"
        )
    lines.append(
        f"| all six together | {reg['all']['r2']:.3f} | | {bare['all']['r2']:.3f} | "
        f"| intercept {bare['all']['coef']['intercept']:.0f} |"
    )
    lines.append(
        f"| the site alone (its mean) | {reg['site_alone_r2']:.3f} | | "
        f"{bare['site_alone_r2']:.3f} | | |"
    )
    lines += [
        "",
        "| site (one try, passed at once) | SM's other CTA not streaming (ns) | streaming (ns) "
        "| polls beside a stream |",
        "|---|---|---|---|",
    ]
    for m in mates:
        lines.append(
            f"| {m['site']} | {_fmt(m['alone'])} | {_fmt(m['beside_stream'])} | {m['n']} |"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="*", type=Path)
    ap.add_argument("--json", type=Path, help="write every row and the tables here")
    a = ap.parse_args(argv)
    paths = a.traces or [ROOT / "traces" / f"k1_h200_{s}.json.gz" for s in SHAPES]
    rows = [r for p in paths for r in poll_rows(p)]
    sites = site_table(rows)
    reg = regression(rows)
    reg_no_norm = regression(rows, exclude=("k.norm ONRM+PROJ",))
    mates = mate_effect(rows)
    prices = try_prices(rows)
    print(markdown(sites, reg, reg_no_norm, mates))
    print(
        f"\nprices (R^2 {prices['r2']:.2f}, {prices['polls']} polls): "
        + " ".join(f"--pin {k}={prices[k]:.0f}" for k in PRICED)
    )
    if a.json:
        a.json.write_text(
            json.dumps(
                {
                    "sites": sites,
                    "prices": prices,
                    "regression": reg,
                    "regression_without_knorm": reg_no_norm,
                    "sm_mate": mates,
                    "rows": rows,
                },
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
