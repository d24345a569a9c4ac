"""Where a launch's makespan goes, shape by shape: the critical path split by what holds it.

(No GPU.) For every launch of a spread folder (``k1_R{R}_L{L}_{i}.json``, as ``lab.
trace_spread record`` writes them) the real critical path, and the model's run of that
launch (a fold profile of the shape, ``--folds``, or one profile, ``--profile``; each
launch placed as it ran, as ``lab.loo_spread`` runs it), is split into parts that add up
to the path's length:

- each stage kind's own time on the path (``compare``'s path ``by_stage``); a kda stage
  on a CTA's later task (its second slot: the unrolled copy) is counted apart, as
  ``KIND#2``;
- each hand-off on the path, by the regions its poll asked for (``<-XRDY``, ``<-PROJ``,
  ...): put to satisfied poll;
- time between stages and waiting for a slot, where the path holds any.

Beside the path, each stage kind's median duration, wait and compute over the launch's
CTAs (``compare``'s split), real and simulated, and the path's parts summed in three
phases: the attn CTAs' work up to and with the XRDY hand-off, the gemv CTA's load_x,
gemv0 and gemv1, and the rest (the kda tasks).

Per shape, the median over the launches of every part; the differences between shapes
along L (R fixed) and along R (L fixed). ``plot`` draws per shape a stacked bar of the
path's time by part, real beside the model's. ``durations`` reads the traces alone: each
gemv group's duration by what shares the gemv CTA's SM, k.recur's by its task's slot and
by whether another k.recur shares its SM, and how many k.recur run across the GPU beside
each (``lab.recur_growth`` fits k.recur's cost forms on these).

Usage::

    python -m lab.makespan_parts collect SPREAD_DIR (--folds DIR | --profile P) --json OUT
    python -m lab.makespan_parts table OUT.json [--sim]
    python -m lab.makespan_parts plot LABEL=OUT.json... --png FIG.png
    python -m lab.makespan_parts durations SPREAD_DIR [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

from tqdm import tqdm

from kda_sim.compare.diff import Comparison
from kda_sim.compare.spread import launches_by_shape, model_comparison, read_launch
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.spec import STAGE_COLORS, STAGES
from kda_sim.timeline.critical import CriticalPath
from kda_sim.timeline.model import CtaTrack, Timeline
from lab.gpu_jobs import report_main
from lab.loo_spread import add_spread_args, fold_file

HANDOFF = "<-"  # a hand-off part's prefix, as compare's kind sequence writes it
LATER = "#2"  # a kda stage run as a CTA's later task
BETWEEN = "(between stages)"
SLOT = "(waiting for a slot)"
GEMV_IN = "XRDY"  # the hand-off that ends the attn phase of a path
GEMV: tuple[str, ...] = ("load_x", "gemv0", "gemv1")  # the gemv phase
RECUR = "k.recur"
# the parts' display order: the attn roles' stages and hand-offs, the gemv's, the kda's
ORDER: tuple[str, ...] = (
    "slice",
    "<-PART",
    "gate",
    "<-WGT",
    "mix",
    "<-MSQ",
    "<-XRDY",
    "load_x",
    "gemv0",
    "gemv1",
    "<-PROJ",
    "k.stage",
    "k.conv",
    "k.gates",
    "<-QK",
    "<-QK+PROJ",
    "k.recur",
    "<-ONRM+PROJ",
    "k.norm",
)


def _slots(c: Comparison) -> dict[tuple[int, int], int]:
    """(CTA, kda task) -> the task's slot on its CTA (0: its first task)."""
    tasks: dict[int, set[int]] = {}
    for m in c.matched:
        if m.task >= 0:
            tasks.setdefault(m.cta, set()).add(m.task)
    return {(cta, t): k for cta, ts in tasks.items() for k, t in enumerate(sorted(ts))}


def path_parts(c: Comparison, real: bool) -> dict[str, float]:
    """One side's critical path split into parts (ns) that add up to its length: stage
    kinds (a later task's kda stage as ``KIND#2``), hand-offs by polled regions, time
    between stages and waiting for a slot. The stage spans are ``compare``'s matched
    stages on its aligned clock."""
    path: CriticalPath | None = c.real_path if real else c.sim_path
    if path is None:
        return {}
    slot = _slots(c)
    spans: dict[int, list[tuple[str, float, float]]] = {}
    for m in c.matched:
        name = m.stage + (LATER if m.task >= 0 and slot[m.cta, m.task] > 0 else "")
        start = m.real_start if real else m.sim_start
        dur = m.real_dur if real else m.sim_dur
        spans.setdefault(m.cta, []).append((name, start, start + dur))
    out: dict[str, float] = {}

    def add(k: str, v: float) -> None:
        out[k] = out.get(k, 0.0) + v

    for s in path.steps:
        if s.kind == "handoff":
            add(HANDOFF + (s.polled or s.label), s.dur)
        elif s.kind == "slot":
            add(SLOT, s.dur)
        else:
            covered = 0.0
            for name, a, b in spans.get(s.cta, []):
                lo, hi = max(a, s.start), min(b, s.end)
                if hi > lo:
                    add(name, hi - lo)
                    covered += hi - lo
            if s.dur - covered > 0:
                add(BETWEEN, s.dur - covered)
    return out


def phases(parts: dict[str, float]) -> dict[str, float]:
    """A path's parts in three phases (ns): the attn CTAs' work up to and with the XRDY
    hand-off, the gemv (load_x, gemv0, gemv1), and the rest (the kda tasks, the
    hand-offs into them, time between stages and slot waits)."""
    attn = set(ORDER[: ORDER.index(HANDOFF + GEMV_IN) + 1])
    out = {"attn": 0.0, "gemv": 0.0, "kda": 0.0}
    for k, v in parts.items():
        out["attn" if k in attn else "gemv" if k in GEMV else "kda"] += v
    return out


def launch_parts(c: Comparison) -> dict[str, Any]:
    """One launch's figures, real and simulated (see the module docstring)."""
    out: dict[str, Any] = {}
    for side, real in (("real", True), ("sim", False)):
        path = c.real_path if real else c.sim_path
        out[side] = {
            "makespan_ns": c.real_makespan if real else c.sim_makespan,
            "path_ns": path.length if path else None,
            "path": path_parts(c, real),
            "phases": phases(path_parts(c, real)),
            "kinds": c.real_kinds if real else c.sim_kinds,
            "split": {
                k: {
                    "dur": v[f"{side}_dur_ns"],
                    "wait": v[f"{side}_wait_ns"],
                    "compute": v[f"{side}_compute_ns"],
                    "n": v[f"{side}_n"],
                }
                for k, v in c.split.items()
            },
        }
    return out


def collect(
    folder: Path, folds: Path | None = None, profile: str | None = None, progress: bool = True
) -> dict[str, Any]:
    """Every launch of ``folder`` against its shape's fold (or ``profile``): per launch
    its parts, per shape their medians."""
    groups = launches_by_shape(folder)
    if folds is not None:
        for R, L in groups:
            if not fold_file(folds, R, L).is_file():
                raise InvalidInput("no such fold profile", where=str(fold_file(folds, R, L)))
    shapes: dict[str, Any] = {}
    bar = tqdm(total=sum(len(v) for v in groups.values()), desc="launches", disable=not progress)
    for (R, L), paths in groups.items():
        prof = str(fold_file(folds, R, L)) if folds is not None else profile
        launches = {}
        for p in paths:
            launches[p.name] = launch_parts(model_comparison(read_launch(p), prof)[1])
            bar.update()
        shapes[f"{R}x{L}"] = {"R": R, "L": L, "profile": prof, "launches": launches}
        shapes[f"{R}x{L}"]["median"] = medians(list(launches.values()))
    bar.close()
    return {
        "folder": str(folder),
        "folds": str(folds) if folds else None,
        "profile": profile,
        "shapes": shapes,
    }


def _med(xs: list[float]) -> float:
    return float(statistics.median(xs)) if xs else 0.0


def medians(launches: list[dict[str, Any]]) -> dict[str, Any]:
    """Per side, the median over the launches of each part (a part a launch's path does
    not hold counts 0 there), of each phase, and of each kind's split figures."""
    out: dict[str, Any] = {}
    for side in ("real", "sim"):
        ls = [x[side] for x in launches]
        keys = sorted({k for x in ls for k in x["path"]})
        kinds = sorted({k for x in ls for k in x["split"]})
        out[side] = {
            "makespan_ns": _med([x["makespan_ns"] for x in ls]),
            "path": {k: _med([x["path"].get(k, 0.0) for x in ls]) for k in keys},
            # the mean too: means add up where medians need not
            "path_mean": {k: statistics.fmean(x["path"].get(k, 0.0) for x in ls) for k in keys},
            "phases": {
                k: _med([x["phases"][k] for x in ls if k in x["phases"]])
                for k in ("attn", "gemv", "kda")
            },
            "split": {
                k: {
                    f: _med(
                        [x["split"][k][f] for x in ls if x["split"].get(k, {}).get(f) is not None]
                    )
                    for f in ("dur", "wait", "compute")
                }
                for k in kinds
            },
        }
    return out


def part_order(keys: set[str]) -> list[str]:
    """The parts in display order: ``ORDER``, each kda stage's later-task part after it,
    then any other part, between-stage time and slot waits last."""
    known = [k for base in ORDER for k in (base, base + LATER)]
    rest = sorted(k for k in keys if k not in known and k not in (BETWEEN, SLOT))
    return [k for k in [*known, *rest, BETWEEN, SLOT] if k in keys]


def _shape_rows(rep: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return sorted(rep["shapes"].items(), key=lambda kv: (kv[1]["R"], kv[1]["L"]))


def table(rep: dict[str, Any], side: str = "real") -> str:
    """Per shape the median of each part on ``side``'s path (us), the phases, and the
    steps along L and along R: markdown."""
    rows = _shape_rows(rep)
    keys = part_order({k for _, s in rows for k in s["median"][side]["path"]})
    head = ["shape", "makespan", "attn", "gemv", "kda", *keys]
    lines = ["| " + " | ".join(head) + " |", "|---" * len(head) + "|"]
    vals: dict[str, list[float]] = {}
    for name, s in rows:
        m = s["median"][side]
        ph = m["phases"]
        v = [
            m["makespan_ns"],
            ph["attn"],
            ph["gemv"],
            ph["kda"],
            *(m["path"].get(k, 0.0) for k in keys),
        ]
        vals[name] = v
        lines.append(f"| {name} | " + " | ".join(f"{x / 1e3:.2f}" for x in v) + " |")
    lines += [
        "",
        "Steps (us):",
        "",
        "| step | " + " | ".join(head[1:]) + " |",
        "|---" * len(head) + "|",
    ]
    for a, b in steps([n for n, _ in rows]):
        d = [y - x for x, y in zip(vals[a], vals[b], strict=True)]
        lines.append(f"| {a} -> {b} | " + " | ".join(f"{x / 1e3:+.2f}" for x in d) + " |")
    return "\n".join(lines)


def steps(names: list[str]) -> list[tuple[str, str]]:
    """The neighbouring shapes along L (R fixed), then along R (L fixed)."""
    rl = sorted((tuple(map(int, n.split("x"))), n) for n in names)
    by = {k: n for k, n in rl}
    out = []
    for (R, L), n in rl:
        nxt = [k for k in by if k[0] == R and k[1] > L]
        if nxt:
            out.append((n, by[min(nxt)]))
    for (R, L), n in sorted(rl, key=lambda x: (x[0][1], x[0][0])):
        nxt = [k for k in by if k[1] == L and k[0] > R]
        if nxt:
            out.append((n, by[min(nxt)]))
    return out


def split_table(rep: dict[str, Any]) -> str:
    """Per shape and kind, the median over the launches of each kind's median duration,
    wait and compute over its CTAs, real / simulated (us)."""
    rows = _shape_rows(rep)
    kinds = [k for k in STAGES if any(k in s["median"]["real"]["split"] for _, s in rows)]
    lines = ["| shape | part | " + " | ".join(kinds) + " |", "|---" * (len(kinds) + 2) + "|"]
    for name, s in rows:
        for f in ("dur", "wait", "compute"):
            cells = []
            for k in kinds:
                r = s["median"]["real"]["split"].get(k, {}).get(f)
                m = s["median"]["sim"]["split"].get(k, {}).get(f)
                cells.append("" if r is None else f"{r / 1e3:.2f} / {(m or 0) / 1e3:.2f}")
            lines.append(f"| {name} | {f} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _neighbour(t: Timeline, c: CtaTrack, by_unit: dict[int | None, list[CtaTrack]]) -> str:
    """What shares a gemv CTA's SM: nothing, an attn CTA, or a gemv CTA dispatched after
    it (``gemv-first``: this one is the earlier) or before it."""
    other = [o for o in by_unit[c.unit] if o.cta != c.cta]
    if not other:
        return "alone"
    if other[0].role != "gemv":
        return other[0].role
    return "gemv-first" if other[0].cta > c.cta else "gemv-second"


def recur_spans(t: Timeline) -> list[dict[str, Any]]:
    """Every k.recur of a launch: its CTA, duration, the task's slot on its CTA (0: the
    first kda task), the share of its span another k.recur on its SM ran beside it, and
    how many other k.recur ran across the GPU meanwhile (their overlap with its span over
    its span: the time-mean count in flight)."""
    spans = []
    for c in t.ctas:
        tasks = sorted({s.task for s in c.stages if s.task >= 0})
        spans += [(c, s, tasks.index(s.task)) for s in c.stages if s.name == RECUR]
    out = []
    for c, s, slot in spans:
        on_sm = in_flight = 0.0
        for d, o, _ in spans:
            if o is s:
                continue
            ov = max(0.0, min(s.end, o.end) - max(s.start, o.start))
            in_flight += ov
            if d.unit == c.unit:
                on_sm += ov
        dur = max(s.dur, 1e-9)
        out.append(
            {
                "cta": c.cta,
                "dur": s.dur,
                "slot": slot,
                "sm_share": on_sm / dur,
                "in_flight": in_flight / dur,
            }
        )
    return out


def durations(folder: Path) -> dict[str, Any]:
    """From the traces alone, per shape: each gemv group's duration by what shares the
    gemv CTA's SM, and k.recur's by the task's slot on its CTA and by whether another
    k.recur ran on its SM for more than half its span; each the median over the pooled
    CTAs of the launches, and the range of the launches' own medians. Beside them
    (``recur_in_flight``) the median over a shape's k.recur of the others in flight
    across the GPU (:func:`recur_spans`)."""
    shapes: dict[str, Any] = {}
    in_flight: dict[str, float] = {}
    for (R, L), paths in launches_by_shape(folder).items():
        pooled: dict[str, list[float]] = {}
        launch: dict[str, list[float]] = {}
        flying: list[float] = []
        for p in paths:
            t = read_launch(p)
            by_unit: dict[int | None, list[CtaTrack]] = {}
            for c in t.ctas:
                by_unit.setdefault(c.unit, []).append(c)
            mine: dict[str, list[float]] = {}
            for c in t.ctas:
                for s in c.stages:
                    if s.name in GEMV[1:]:
                        mine.setdefault(f"{s.name} {_neighbour(t, c, by_unit)}", []).append(s.dur)
            for r in recur_spans(t):
                shared = "shared" if r["sm_share"] > 0.5 else "alone"
                mine.setdefault(f"{RECUR} slot {r['slot']} {shared}", []).append(r["dur"])
                flying.append(r["in_flight"])
            for k, v in mine.items():
                pooled.setdefault(k, []).extend(v)
                launch.setdefault(k, []).append(_med(v))
        shapes[f"{R}x{L}"] = {
            k: {
                "median_ns": _med(v),
                "per_launch": len(v) / len(paths),
                "launch_medians_ns": [min(launch[k]), max(launch[k])],
            }
            for k, v in sorted(pooled.items())
        }
        in_flight[f"{R}x{L}"] = _med(flying)
    return {"folder": str(folder), "shapes": shapes, "recur_in_flight": in_flight}


def durations_table(rep: dict[str, Any]) -> str:
    """The durations report as markdown: one row a shape, a column a (stage, neighbour)."""
    keys = sorted({k for s in rep["shapes"].values() for k in s})
    head = [*keys, "k.recur in flight (others, median)"]
    lines = ["| shape | " + " | ".join(head) + " |", "|---" * (len(head) + 1) + "|"]
    for name, s in sorted(rep["shapes"].items(), key=lambda kv: kv[0]):
        cells = []
        for k in keys:
            x = s.get(k)
            cells.append(
                ""
                if x is None
                else f"{x['median_ns'] / 1e3:.2f} ({x['launch_medians_ns'][0] / 1e3:.2f}.."
                f"{x['launch_medians_ns'][1] / 1e3:.2f}; {x['per_launch']:.0f})"
            )
        flying = rep.get("recur_in_flight", {}).get(name)
        cells.append("" if flying is None else f"{flying:.0f}")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def _color(part: str) -> str:
    base = part.removesuffix(LATER)
    if base in STAGE_COLORS:
        return STAGE_COLORS[base]
    return "#dddddd" if part in (BETWEEN, SLOT) else "#555555"


def plot(reps: list[tuple[str, dict[str, Any]]], png: Path) -> None:
    """Per shape a stacked bar of the real path's parts (medians over the launches) and
    beside it each report's model (the label names it)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = _shape_rows(reps[0][1])
    keys = part_order(
        {
            k
            for _, rep in reps
            for _, s in _shape_rows(rep)
            for side in ("real", "sim")
            for k in s["median"][side]["path"]
        }
    )
    bars: list[tuple[str, str, dict[str, float]]] = []
    for name, _ in rows:
        bars.append((name, "real", reps[0][1]["shapes"][name]["median"]["real"]["path"]))
        for label, rep in reps:
            bars.append((name, label, rep["shapes"][name]["median"]["sim"]["path"]))
    width = len(reps) + 1
    fig, ax = plt.subplots(figsize=(1.0 + 0.45 * len(bars), 4.8))
    xs = [i + i // width * 0.6 for i in range(len(bars))]
    for k in keys:
        bottoms = [sum(b[2].get(j, 0.0) for j in keys[: keys.index(k)]) / 1e3 for b in bars]
        h = [b[2].get(k, 0.0) / 1e3 for b in bars]
        hatch = "//" if k.endswith(LATER) else None
        ax.bar(
            xs,
            h,
            0.85,
            bottom=bottoms,
            color=_color(k),
            label=k,
            hatch=hatch,
            edgecolor="white",
            linewidth=0.3,
        )
    ax.set_xticks(xs, [f"{n}\n{lab}" for n, lab, _ in bars], fontsize=6)
    ax.set_ylabel("critical path, us (median over the launches, by part)")
    ax.legend(fontsize=6, ncol=2, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.savefig(png, dpi=90, bbox_inches="tight")
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="every launch's path parts, real and the model's")
    add_spread_args(c)
    c.add_argument("--json", type=Path, required=True, help="write the report here")
    t = sub.add_parser("table", help="a collected report's tables")
    t.add_argument("report", type=Path)
    t.add_argument("--sim", action="store_true", help="the model's path, not the real one")
    t.add_argument("--split", action="store_true", help="each kind's duration, wait, compute")
    d = sub.add_parser("durations", help="gemv groups by SM neighbour, k.recur by slot")
    d.add_argument("folder", type=Path, help="a spread folder (k1_R{R}_L{L}_{i}.json)")
    d.add_argument("--json", type=Path, default=None, help="also write the report here")
    p = sub.add_parser("plot", help="stacked bars of the path's parts, real beside the model")
    p.add_argument("report", nargs="+", help="LABEL=REPORT.json, the first's real")
    p.add_argument("--png", type=Path, required=True)
    a = ap.parse_args(argv)
    if a.cmd == "collect":
        return report_main(
            "makespan_parts", lambda: collect(a.folder, a.folds, a.profile), table, a.json
        )
    if a.cmd == "durations":
        return report_main("makespan_parts", lambda: durations(a.folder), durations_table, a.json)
    if a.cmd == "table":
        return report_main(
            "makespan_parts",
            lambda: _read(a.report),
            lambda r: split_table(r) if a.split else table(r, "sim" if a.sim else "real"),
            None,
        )
    return report_main(
        "makespan_parts",
        lambda: plot([_labelled(x) for x in a.report], a.png) or {},
        lambda _: f"wrote {a.png}",
        None,
        a.png,
    )


def _read(p: Path) -> dict[str, Any]:
    try:
        return json.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise InvalidInput(f"not a makespan_parts report: {e}", where=str(p)) from e


def _labelled(arg: str) -> tuple[str, dict[str, Any]]:
    label, _, path = arg.rpartition("=")
    return (label or Path(path).stem, _read(Path(path)))


if __name__ == "__main__":
    sys.exit(main())
