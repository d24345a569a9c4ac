"""k.norm's wait beside the spread between CTAs: which put each k.norm poll waited for last,
in the launches and in seeded runs of the model (docs/calibration.md, "A spread between
CTAs, and the path as a distribution"). No GPU.

A kda task (request, head, chunk) polls in k.norm its head's 8 chunks' ONRM flags (each
chunk's k.recur puts its own) and its 16 g2 rows of PROJ (one gemv group: gemv0 of a gemv
CTA for an even chunk, gemv1 for an odd one). Per shape, over the launches (each on one
clock, as ``compare`` reads it) and over ``--seeds`` seeded runs of the model
(``lab.cta_spread.seeded_run``, run i placed as launch i mod n ran):

- each k.norm span: its duration, its poll's satisfaction after the span's start, the put
  placed last among the poll's producers (``compare.diff.put_estimates``: a put the trace
  does not record at its stage's end, no later than the poll's satisfaction), that put's
  kind (the task's own ONRM, another chunk's ONRM, or the g2 rows' PROJ) and time after
  the span's start, and the g2 put's time after the span's start;
- each head (its 8 chunk tasks, launch by launch): the spread (last less first) of the
  chunks' k.gates f_a poll's first issue (their k.conv ends), of that poll's satisfaction,
  and of their k.recur ends (their ONRM puts); and each f_a poll's satisfaction after the
  put it waited for last (its release lag).

Usage::

    python -m lab.knorm_wait TRACE_DIR (--folds DIR | --profile P) [--shapes 2x2,4x4]
        [--spread SD --stages gemv0,gemv1] [--seeds N] [--json OUT]

(``TRACE_DIR``'s ``k1_R{R}_L{L}_{i}.json``, as ``lab.trace_spread record`` writes them.)
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from kda_sim.compare.clocks import aligned, fit_clocks
from kda_sim.compare.diff import put_estimates
from kda_sim.compare.model import ModelView, model_view, op_stage
from kda_sim.compare.spread import launches_by_shape, read_launch
from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.kda import task_coords
from kda_sim.timeline.model import Timeline
from lab.cta_spread import model_args, run_header, seeded_run, spread_map
from lab.gpu_jobs import report_main
from lab.loo_spread import fold_file

# the kinds of a k.norm poll's last put
OWN, CHUNK, G2 = "own ONRM", "another chunk's ONRM", "g2 PROJ"
SPAN_KEYS = ("dur", "sat", "last_put", "g2_put", "seen")  # a k.norm span's times (ns)
HEAD_KEYS = ("conv_end_spread", "fa_sat_spread", "recur_end_spread")  # a head's (ns)
QUANTILES = (0.1, 0.5, 0.9)
R_ = TypeVar("R_")  # what a reader makes of one launch or run


def _polls_by_op(mv: ModelView, cta: int) -> dict[int, int]:
    """Trace poll index -> the model's op index, for ``cta``."""
    return {i: k for k, i in mv.views[cta].poll_rec.items()}


def _last_put(mv: ModelView, cta: int, k: int, sat: float) -> list[tuple[float, int, str]]:
    """Every put poll op ``k`` of ``cta`` waited on: (time, producer, producer's stage)."""
    progs = mv.handoffs.launch.programs
    return [(t, d, op_stage(progs[d].ops, kd)[0]) for t, d, kd, _ in put_estimates(mv, cta, k, sat)]


def wait_rows(tl: Timeline) -> dict[str, list[Any]]:
    """One launch's (or run's) k.norm spans, heads and f_a release lags (see the module),
    on its own clock."""
    mv = model_view(tl)
    spans: list[dict[str, Any]] = []
    fa: dict[tuple[int, int], list[tuple[float, float]]] = defaultdict(list)  # head -> polls
    recur_end: dict[tuple[int, int], list[float]] = defaultdict(list)
    lags: list[float] = []
    for c in tl.ctas:
        ops = _polls_by_op(mv, c.cta)
        by_task = {(s.name, s.task): s for s in c.stages}
        gates_seen: set[int] = set()
        for i, p in enumerate(c.polls):
            if p.satisfied is None or i not in ops or p.task < 0:
                continue
            req, h, ch = task_coords(p.task)
            puts = _last_put(mv, c.cta, ops[i], p.satisfied)
            if p.stage == "k.gates" and p.task not in gates_seen and puts:
                gates_seen.add(p.task)  # the stage's first poll: f_a
                fa[(req, h)].append((p.first_issue, p.satisfied))
                lags.append(p.satisfied - max(puts)[0])
            if p.stage != "k.norm" or not puts:
                continue
            start = by_task[("k.norm", p.task)].start
            t, d, stage = max(puts)
            own = by_task.get(("k.recur", p.task))
            kind = G2 if stage.startswith("gemv") else OWN if own and d == c.cta else CHUNK
            g2 = [u for u, _, s in puts if s.startswith("gemv")]
            spans.append(
                {
                    "chunk": ch,
                    "dur": by_task[("k.norm", p.task)].dur,
                    "sat": p.satisfied - start,
                    "last_put": t - start,
                    "last": kind,
                    "g2_put": g2[0] - start if g2 else None,
                    "seen": p.satisfied - t,
                    "first_issue": p.first_issue,
                    "head": (req, h),
                    "put_at": t,
                    "satisfied": p.satisfied,
                }
            )
        for s in c.stages:
            if s.name == "k.recur":
                recur_end[task_coords(s.task)[:2]].append(s.end)
    for r in spans:  # the same head's other k.norm polls issued before its last put, waiting
        r["pollers"] = sum(
            q is not r
            and q["head"] == r["head"]
            and q["first_issue"] < r["put_at"] < q["satisfied"]
            for q in spans
        )
    for r in spans:
        for k in ("first_issue", "head", "put_at", "satisfied"):
            del r[k]
    heads = []
    for key, polls in fa.items():
        first, sat = (np.array(x) for x in zip(*polls, strict=True))
        ends = recur_end.get(key, [])
        heads.append(
            {
                "chunks": len(polls),
                "conv_end_spread": float(first.max() - first.min()),
                "fa_sat_spread": float(sat.max() - sat.min()),
                "recur_end_spread": float(max(ends) - min(ends)) if ends else None,
            }
        )
    return {"spans": spans, "heads": heads, "fa_lag": lags}


def real_clock(real: Timeline) -> Timeline:
    """A launch on one clock, as ``compare`` aligns it."""
    fit = fit_clocks(real, model_view(real), None, None)
    return aligned(real, fit) if fit is not None else real


def _quantiles(xs: list[float]) -> list[float] | None:
    return [float(v) for v in np.quantile(xs, QUANTILES)] if xs else None


def side_summary(runs: list[dict[str, list[Any]]]) -> dict[str, Any]:
    """p10, median, p90 of each figure pooled over a side's launches or runs, and the
    shares of the last put's kind."""
    spans = [r for run in runs for r in run["spans"]]
    heads = [r for run in runs for r in run["heads"]]
    out: dict[str, Any] = {"spans": len(spans)}
    for k in SPAN_KEYS:
        out[k] = _quantiles([r[k] for r in spans if r[k] is not None])
    for kind, key in ((OWN, "seen_own"), (CHUNK, "seen_chunk")):
        out[key] = _quantiles([r["seen"] for r in spans if r["last"] == kind])
    out["pollers"] = _quantiles([r["pollers"] for r in spans if r["last"] == CHUNK])
    n = Counter(r["last"] for r in spans)
    out["last"] = {k: n[k] / len(spans) for k in (OWN, CHUNK, G2)} if spans else {}
    for k in HEAD_KEYS:
        out[k] = _quantiles([r[k] for r in heads if r[k] is not None])
    out["fa_lag"] = _quantiles([x for run in runs for x in run["fa_lag"]])
    return out


def _shape(label: str) -> tuple[int, int]:
    r, sep, l_ = label.partition("x")
    if not sep or not r.isdigit() or not l_.isdigit():
        raise InvalidInput(f"a shape is RxL, as 2x2: not {label!r}", what="--shapes")
    return int(r), int(l_)


@dataclass(frozen=True)
class Sides:
    """What a report on both sides of a folder's shapes reads: the launches' folder, each
    shape's fold (or one profile for every shape), the shapes (none: every shape of the
    folder), the spread drawn on ``stages`` and the seeded runs a shape."""

    folder: Path
    folds: Path | None
    profile: str | None
    shapes: list[tuple[int, int]]
    spread: float
    stages: tuple[str, ...]
    seeds: int

    def header(self) -> dict[str, Any]:
        return run_header(
            [self.folder], self.folds, self.profile, self.spread, self.stages, self.seeds
        )


def both_sides(
    s: Sides, read: Callable[[Timeline], R_]
) -> Iterator[tuple[str, list[R_], list[R_]]]:
    """Each shape's label, ``read`` of its launches (each on one clock) and of ``s.seeds``
    seeded runs of its profile (run i placed as launch i mod n ran)."""
    by_kind = spread_map(s.spread, s.stages)
    groups = launches_by_shape(s.folder)
    for R, L in s.shapes or sorted(groups):
        if (R, L) not in groups:
            raise InvalidInput(f"no launch of {R}x{L}", where=str(s.folder))
        prof = str(fold_file(s.folds, R, L)) if s.folds is not None else s.profile
        if prof is None:
            raise InvalidInput("a fold folder or a profile is needed", what="--profile")
        launches = [read_launch(p) for p in groups[(R, L)]]
        real = [read(real_clock(t)) for t in launches]
        sim = [
            read(seeded_run(launches[i % len(launches)], prof, by_kind, i)) for i in range(s.seeds)
        ]
        yield f"{R}x{L}", real, sim


def wait_report(s: Sides) -> dict[str, Any]:
    out = {
        label: {"real": side_summary(real), "model": side_summary(sim)}
        for label, real, sim in both_sides(s, wait_rows)
    }
    return {**s.header(), "shapes": out}


def _q(v: list[float] | None) -> str:
    return "-" if v is None else f"{v[1]:.0f} ({v[0]:.0f}..{v[2]:.0f})"


# the two tables' columns: (heading, the summary's key)
SPAN_COLUMNS = (
    ("k.norm", "dur"),
    ("satisfied", "sat"),
    ("last put", "last_put"),
    ("put to seen: own last", "seen_own"),
    ("put to seen: another chunk's last", "seen_chunk"),
    ("the head's polls waiting at it", "pollers"),
)
HEAD_COLUMNS = (
    ("g2 put", "g2_put"),
    ("head: k.conv ends", "conv_end_spread"),
    ("f_a satisfied", "fa_sat_spread"),
    ("k.recur ends", "recur_end_spread"),
    ("f_a: put to seen", "fa_lag"),
)


def _table(rep: dict[str, Any], cols: tuple[tuple[str, str], ...], last: bool) -> list[str]:
    heads = [c for c, _ in cols] + (["last: own / chunk / g2"] if last else [])
    lines = ["| shape | side | " + " | ".join(heads) + " |", "|---|---|" + "---|" * len(heads)]
    for shape, sides in rep["shapes"].items():
        for side, s in sides.items():
            cells = [_q(s[k]) for _, k in cols]
            if last:
                cells.append(" / ".join(f"{s['last'].get(k, 0):.2f}" for k in (OWN, CHUNK, G2)))
            lines.append(f"| {shape} | {side} | " + " | ".join(cells) + " |")
    return lines


def show(rep: dict[str, Any]) -> str:
    return "\n".join(
        [
            "ns after the k.norm span's start, or after the put (median, p10..p90):",
            *_table(rep, SPAN_COLUMNS, True),
            "",
            "ns after the k.norm span's start; a head's: last less first (median, p10..p90):",
            *_table(rep, HEAD_COLUMNS, False),
        ]
    )


def side_args(ap: argparse.ArgumentParser) -> None:
    """The options of a report on both sides of a folder's shapes (:func:`both_sides`)."""
    ap.add_argument("folder", type=Path)
    ap.add_argument("--shapes", default="", help="RxL,... (default every shape of the folder)")
    ap.add_argument("--spread", type=float, default=0.0, help="cta_spread: a log's sd")
    model_args(ap)
    ap.add_argument("--seeds", type=int, default=8, help="model runs a shape (default 8)")


def sides_of(a: argparse.Namespace) -> Sides:
    """:func:`side_args`' options checked (InvalidInput where one is bad), as the report's
    :class:`Sides`."""
    if a.seeds < 1:
        raise InvalidInput(f"at least 1 run, not {a.seeds}", what="--seeds")
    for folder in (a.folder, a.folds):
        if folder is not None and not folder.is_dir():
            raise InvalidInput("no such folder", where=str(folder))
    shapes = [_shape(x) for x in a.shapes.split(",") if x]
    return Sides(a.folder, a.folds, a.profile, shapes, a.spread, a.stages, a.seeds)


def sides_main(
    name: str,
    doc: str,
    report: Callable[[Sides], Any],
    show: Callable[[Any], str],
    argv: list[str] | None,
) -> int:
    """A report on both sides of a folder's shapes as a command: :func:`side_args`'
    options and ``--json``; bad input (a folder, a fold, a figure) exits 2."""
    ap = argparse.ArgumentParser(description=doc.split("\n")[0])
    side_args(ap)
    ap.add_argument("--json", type=Path, help="write the report here too")
    a = ap.parse_args(argv)

    def make() -> Any:
        sides = sides_of(a)
        try:
            return report(sides)
        except (OSError, ValueError, KeyError) as e:
            raise InvalidInput(str(e) or type(e).__name__) from e

    return report_main(name, make, show, a.json)


def main(argv: list[str] | None = None) -> int:
    return sides_main("knorm_wait", __doc__, wait_report, show, argv)


if __name__ == "__main__":
    sys.exit(main())
