"""The stage tables of a run, real and simulated side by side (pandas frames for
``st.dataframe``): per-stage means, kda stages by task slot, role stages by what shares
the CTA's unit. A module of its own so that a page without tables never imports pandas."""

from __future__ import annotations

import pandas as pd

from kda_sim.app.figures import stage_order
from kda_sim.timeline.model import Timeline
from kda_sim.timeline.summary import partners_side_by_side, slots_side_by_side, stage_stats


def stage_table(real: Timeline | None, sim: Timeline | None) -> pd.DataFrame:
    """Per-stage means side by side; with both runs, the simulation's relative error."""
    rows: dict[str, dict[str, float | int | str]] = {}
    for label, tl in (("real", real), ("sim", sim)):
        if tl is None:
            continue
        for s in stage_stats(tl):
            r = rows.setdefault(s.stage, {"stage": s.stage})
            r[f"{label} count"] = s.count
            r[f"{label} mean us"] = round(s.mean_ns / 1e3, 3)
            r[f"{label} max us"] = round(s.max_ns / 1e3, 3)
            r[f"{label} poll wait us"] = round(s.poll_wait_ns / 1e3, 3)
            r[f"{label} retries"] = s.retries
    if real is not None and sim is not None:
        for r in rows.values():
            a, b = r.get("real mean us"), r.get("sim mean us")
            if isinstance(a, float) and isinstance(b, float) and a > 0:
                r["sim error %"] = round(100 * (b - a) / a, 1)
    shown = next((tl for tl in (real, sim) if tl is not None), None)
    names = [str(r["stage"]) for r in rows.values()]
    order = {s: i for i, s in enumerate(stage_order(shown, names) if shown else names)}
    return pd.DataFrame(sorted(rows.values(), key=lambda r: order.get(str(r["stage"]), 99)))


def slot_table(real: Timeline | None, sim: Timeline | None) -> pd.DataFrame | None:
    """kda stages' medians by task slot, real and simulated side by side; None where no
    CTA runs a second task (nothing to tell apart)."""
    rows = slots_side_by_side({"real": real, "sim": sim})
    if not rows:
        return None
    out = []
    for r in rows:
        row: dict[str, float | int | str] = {"stage": r["stage"], "task slot": r["slot"] + 1}
        for label in ("real", "sim"):
            if f"{label}_count" in r:
                row[f"{label} count"] = r[f"{label}_count"]
                row[f"{label} median us"] = round(r[f"dur_{label}_median_ns"] / 1e3, 3)
        out.append(row)
    return pd.DataFrame(out)


def partner_table(real: Timeline | None, sim: Timeline | None) -> pd.DataFrame | None:
    """Role stages' medians by what shares the CTA's unit (SM / CU), real and simulated
    side by side; None where every CTA of a stage has the same company."""
    rows = partners_side_by_side({"real": real, "sim": sim})
    if not rows:
        return None
    out = []
    for r in rows:
        row: dict[str, float | int | str] = {
            "stage": r["stage"],
            "beside": r["partners"] or "alone",
        }
        for label in ("real", "sim"):
            if f"{label}_count" in r:
                row[f"{label} count"] = r[f"{label}_count"]
                row[f"{label} median us"] = round(r[f"dur_{label}_median_ns"] / 1e3, 3)
                row[f"{label} max us"] = round(r[f"dur_{label}_max_ns"] / 1e3, 3)
        out.append(row)
    return pd.DataFrame(out)
