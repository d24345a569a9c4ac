"""A head's chunks at k.recur's end: when each kda task starts and ends k.recur, what it
last waited for before it, and how far apart a head's chunks (and the whole launch's
tasks) end, in the launches and in seeded runs of the model (docs/calibration.md, "A
head's chunks at k.recur's end"). No GPU.

k.recur polls nothing: it begins when its task's k.gates ends, after k.gates' three
polls (f_a, the head's QK from all 8 chunks' k.conv, beta). Per shape, over the launches
(each on one clock, as ``compare`` reads it) and over ``--seeds`` seeded runs of the
model (``lab.cta_spread.seeded_run``, run i placed as launch i mod n ran):

- each head (its 8 chunk tasks, launch by launch): the spread (last less first) of its
  chunks' QK poll satisfied, beta poll satisfied (k.gates' last poll), k.gates end (=
  k.recur's start) and k.recur end; the chunks' k.recur duration; and, pooled over the
  heads, the slope of a chunk's k.recur duration on its start, both taken from its
  head's mean (0: equal work, the end follows the start; -1: the chunks end together
  whenever they start);
- what each chunk last waited for: the last of its k.gates polls whose last put (as
  ``compare.diff.put_estimates`` places it) came after the poll's first issue, and whose
  that put was (QK: the task's own k.conv or another chunk's; f_a, beta: the gemv's);
  "none" where every put was there when the poll began;
- the launch as a whole, each task slot apart (0: a CTA's first kda task): the p10..p90
  width of the tasks' beta satisfied and of their k.recur ends, and the least-squares
  slope of k.gates' end and of k.recur's end on beta satisfied over every task of the
  slot (1: each task ends as it started; 0: the launch's tasks end k.recur together).

``--detail N`` prints each chunk's row of the first N heads of the first launch and of
the first model run.

Usage::

    python -m lab.recur_ends TRACE_DIR (--folds DIR | --profile P) [--shapes 4x4,2x2]
        [--spread SD --stages gemv0,gemv1] [--seeds N] [--detail N] [--json OUT]

(``TRACE_DIR``'s ``k1_R{R}_L{L}_{i}.json``, as ``lab.trace_spread record`` writes them.)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.compare.diff import put_estimates
from kda_sim.compare.model import model_view, op_stage
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.constants import NVCH
from kda_sim.kernels.k1.kda import task_coords
from kda_sim.timeline.model import Timeline
from lab.gpu_jobs import report_main
from lab.knorm_wait import (
    Sides,
    _polls_by_op,
    _q,
    _quantiles,
    both_sides,
    side_args,
    sides_of,
)

GATES_POLLS = ("f_a", "QK", "beta")  # k.gates' polls in program order
# what a chunk last waited for before k.recur
WAITS = ("QK, another chunk", "QK, own", "f_a", "beta", "none")
HEAD_KEYS = ("qk_sat", "beta_sat", "gates_end", "recur_end")  # a head's spreads (ns)
SLOT_KEYS = ("beta_width", "recur_width", "gates_slope", "recur_slope")
WIDTH_Q = (0.1, 0.9)  # a launch-wide width: p10 to p90


def _waited(mv: Any, cta: int, task: int, polls: list[tuple[int, Any]], ops: dict[int, int]) -> str:
    """What a task last waited for among its k.gates polls ``polls`` (trace index,
    record), in program order: the last whose last put came after its first issue."""
    progs = mv.handoffs.launch.programs
    waited = "none"
    for (i, p), name in zip(polls, GATES_POLLS, strict=True):
        puts = put_estimates(mv, cta, ops[i], p.satisfied) if i in ops else []
        if not puts:
            continue
        t, d, kd, _ = max(puts)
        if t <= p.first_issue:
            continue
        if name == "QK":
            own = op_stage(progs[d].ops, kd)[1] == task
            waited = "QK, own" if own else "QK, another chunk"
        else:
            waited = name
    return waited


def chunk_rows(tl: Timeline) -> list[dict[str, Any]]:
    """One launch's (or run's) kda tasks, on its own clock: each task's head, chunk, CTA,
    slot, its QK and beta polls' satisfaction, k.gates' end, k.recur's start and end, and
    what it last waited for (see the module)."""
    mv = model_view(tl)
    out: list[dict[str, Any]] = []
    for c in tl.ctas:
        ops = _polls_by_op(mv, c.cta)
        spans = {(s.name, s.task): s for s in c.stages}
        gates: dict[int, list[tuple[int, Any]]] = defaultdict(list)
        for i, p in enumerate(c.polls):
            if p.stage == "k.gates" and p.task >= 0:
                gates[p.task].append((i, p))
        tasks = [s.task for s in c.stages if s.name == "k.recur"]
        for slot, task in enumerate(tasks):
            polls = gates.get(task, [])
            if len(polls) != len(GATES_POLLS) or any(p.satisfied is None for _, p in polls):
                continue
            req, h, ch = task_coords(task)
            recur = spans[("k.recur", task)]
            out.append(
                {
                    "head": [req, h],
                    "chunk": ch,
                    "cta": c.cta,
                    "slot": slot,
                    "qk_sat": float(polls[1][1].satisfied),
                    "beta_sat": float(polls[2][1].satisfied),
                    "gates_end": float(spans[("k.gates", task)].end),
                    "recur_start": float(recur.start),
                    "recur_end": float(recur.end),
                    "waited": _waited(mv, c.cta, task, polls, ops),
                }
            )
    return out


def _slope(x: np.ndarray, y: np.ndarray) -> float | None:
    """Least-squares slope of y on x (each taken from its mean); None without spread."""
    x, y = x - x.mean(), y - y.mean()
    sxx = float(x @ x)
    return float(x @ y) / sxx if sxx > 0 else None


def run_figures(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """One launch's (or run's) heads and task slots (see the module)."""
    by_head: dict[tuple[int, int], list[dict[str, Any]]] = defaultdict(list)
    by_slot: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        by_head[tuple(r["head"])].append(r)
        by_slot[r["slot"]].append(r)
    heads = []
    dx: list[float] = []  # a chunk's k.recur start and duration, from its head's means
    dy: list[float] = []
    for chunks in by_head.values():
        col = {k: np.array([r[k] for r in chunks]) for k in (*HEAD_KEYS, "recur_start")}
        dur = col["recur_end"] - col["recur_start"]
        heads.append(
            {"chunks": len(chunks), "recur_dur": float(np.median(dur))}
            | {k: float(np.ptp(col[k])) for k in HEAD_KEYS}
        )
        dx += list(col["recur_start"] - col["recur_start"].mean())
        dy += list(dur - dur.mean())
    slots = {}
    for slot, rs in sorted(by_slot.items()):
        if len(rs) < NVCH:
            continue
        beta = np.array([r["beta_sat"] for r in rs])
        gates = np.array([r["gates_end"] for r in rs])
        ends = np.array([r["recur_end"] for r in rs])
        lo, hi = np.quantile(beta, WIDTH_Q)
        elo, ehi = np.quantile(ends, WIDTH_Q)
        slots[str(slot)] = {
            "tasks": len(rs),
            "beta_width": float(hi - lo),
            "recur_width": float(ehi - elo),
            "gates_slope": _slope(beta, gates),
            "recur_slope": _slope(beta, ends),
        }
    return {
        "heads": heads,
        "dev": [dx, dy],
        "slots": slots,
        "waited": dict(Counter(r["waited"] for r in rows)),
    }


def side_summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """p10, median, p90 of each head figure pooled over a side's launches or runs; the
    pooled within-head slope; each slot's figures, the median over the launches; the
    shares of what the chunks last waited for."""
    heads = [h for run in runs for h in run["heads"]]
    out: dict[str, Any] = {"heads": len(heads)}
    for k in (*HEAD_KEYS, "recur_dur"):
        out[k] = _quantiles([h[k] for h in heads])
    dx = np.array([x for run in runs for x in run["dev"][0]])
    dy = np.array([y for run in runs for y in run["dev"][1]])
    out["dur_on_start"] = _slope(dx, dy) if dx.size else None
    slots: dict[str, Any] = {}
    for s in sorted({s for run in runs for s in run["slots"]}):
        got = [run["slots"][s] for run in runs if s in run["slots"]]
        slots[s] = {"tasks": int(np.median([g["tasks"] for g in got]))}
        for k in SLOT_KEYS:
            vals = [g[k] for g in got if g[k] is not None]
            slots[s][k] = float(np.median(vals)) if vals else None
    out["slots"] = slots
    n = Counter()
    for run in runs:
        n.update(run["waited"])
    total = sum(n.values())
    out["waited"] = {k: n[k] / total for k in WAITS} if total else {}
    return out


def _detail(rows: list[dict[str, Any]], heads: int) -> list[dict[str, Any]]:
    """The chunk rows of the first ``heads`` heads (by request, head), each time from the
    head's first k.gates end."""
    keys = sorted({tuple(r["head"]) for r in rows})[:heads]
    out = []
    for key in keys:
        chunks = sorted((r for r in rows if tuple(r["head"]) == key), key=lambda r: r["chunk"])
        t0 = min(r["gates_end"] for r in chunks)
        for r in chunks:
            out.append(
                {
                    **{k: r[k] for k in ("head", "chunk", "cta", "slot", "waited")},
                    **{
                        k: r[k] - t0
                        for k in ("qk_sat", "beta_sat", "gates_end", "recur_start", "recur_end")
                    },
                }
            )
    return out


def ends_report(s: Sides, detail: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for label, real, sim in both_sides(s, chunk_rows):
        shape: dict[str, Any] = {
            "real": side_summary([run_figures(r) for r in real]),
            "model": side_summary([run_figures(r) for r in sim]),
        }
        if detail:
            shape["detail"] = {"real": _detail(real[0], detail), "model": _detail(sim[0], detail)}
        out[label] = shape
    return {**s.header(), "shapes": out}


def _f(v: float | None, fmt: str = ".2f") -> str:
    return "-" if v is None else format(v, fmt)


HEAD_COLUMNS = (
    ("QK satisfied", "qk_sat"),
    ("beta satisfied", "beta_sat"),
    ("k.gates end", "gates_end"),
    ("k.recur end", "recur_end"),
    ("k.recur", "recur_dur"),
)


def show(rep: dict[str, Any]) -> str:
    heads = [c for c, _ in HEAD_COLUMNS] + ["dur on start", "last waited: " + " / ".join(WAITS)]
    lines = [
        "a head's chunks, last less first (ns; median, p10..p90 over the heads); k.recur its"
        " duration; dur on start: the within-head slope:",
        "| shape | side | " + " | ".join(heads) + " |",
        "|---|---|" + "---|" * len(heads),
    ]
    for shape, sides in rep["shapes"].items():
        for side in ("real", "model"):
            s = sides[side]
            cells = [_q(s[k]) for _, k in HEAD_COLUMNS] + [_f(s["dur_on_start"])]
            cells.append(" / ".join(f"{s['waited'].get(k, 0):.2f}" for k in WAITS))
            lines.append(f"| {shape} | {side} | " + " | ".join(cells) + " |")
    lines += [
        "",
        "the launch's tasks, a slot at a time (median over the launches or runs): p10..p90"
        " width (ns) and slope on beta satisfied:",
        "| shape | side | slot | tasks | beta satisfied | k.recur end | k.gates end's slope"
        " | k.recur end's slope |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for shape, sides in rep["shapes"].items():
        for side in ("real", "model"):
            for slot, v in sides[side]["slots"].items():
                lines.append(
                    f"| {shape} | {side} | {slot} | {v['tasks']} | {_f(v['beta_width'], '.0f')}"
                    f" | {_f(v['recur_width'], '.0f')} | {_f(v['gates_slope'])}"
                    f" | {_f(v['recur_slope'])} |"
                )
    for shape, sides in rep["shapes"].items():
        for side, rows in sides.get("detail", {}).items():
            lines += [
                "",
                f"{shape}, {side}, the first run's first heads (ns from the head's first"
                " k.gates end):",
                "| head | chunk | CTA | slot | QK sat | beta sat | k.recur start | k.recur end"
                " | k.recur | last waited |",
                "|---|---|---|---|---|---|---|---|---|---|",
            ]
            for r in rows:
                lines.append(
                    f"| {r['head'][0]}.{r['head'][1]} | {r['chunk']} | {r['cta']} | {r['slot']}"
                    f" | {r['qk_sat']:.0f} | {r['beta_sat']:.0f} | {r['recur_start']:.0f}"
                    f" | {r['recur_end']:.0f} | {r['recur_end'] - r['recur_start']:.0f}"
                    f" | {r['waited']} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    side_args(ap)
    ap.add_argument("--detail", type=int, default=0, help="chunk rows of the first N heads")
    ap.add_argument("--json", type=Path, help="write the report here too")
    a = ap.parse_args(argv)

    def make() -> Any:
        sides = sides_of(a)
        if a.detail < 0:
            raise InvalidInput(f"0 heads or more, not {a.detail}", what="--detail")
        try:
            return ends_report(sides, a.detail)
        except (OSError, ValueError, KeyError) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    return report_main("recur_ends", make, show, a.json)


if __name__ == "__main__":
    sys.exit(main())
