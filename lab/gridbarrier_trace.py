"""The grid barrier probe's stamps as kda-sim timelines (``lab.gridbarrier_probe`` runs
the kernel; this module is pure Python, no GPU).

A CTA of the probe leaves one record of ``record_words(rounds)`` 64-bit words (the
layout below, the kernel's too): its SM, how many of its waits gave up, each work's
begin and end stamp (rounds + 1 of them, the last the work after the last barrier),
and for each barrier its begin (before the add), the value its add returned, the
wait's first issue (after the add returned), the time the wait was satisfied, the
tries it took, and its end. Stamps are ``%globaltimer`` ns.

The timeline records them the way the engine records the example kernel
``gridbarrier`` (``kda_sim/kernels/examples/gridbarrier.py``): each CTA's ``work`` and
``barrier`` spans (task = the round), the add as a put of ``ARRIVE`` (the engine's
``PutRecord`` of an ``Atomic``, at the add's serialization: here the midpoint of its
issue and return, the two stamps around it), and the wait as the engine's counter
``Wait`` record: label ``ARRIVE>={(r + 1) * ctas}``, one cell of ``ARRIVE``, the
first issue, the satisfied time, its retries (tries - 1) and its producer, the CTA
whose add returned ``(r + 1) * ctas - 1`` (the add that made the count the target).

A launch whose stamps disagree with its configuration (a CTA or a round missing, a
count that is not each CTA's one add a round, times out of order, a wait given up) is
refused, named.

    python -m lab.gridbarrier_trace RUN.json --dir DIR

writes every launch of a probe run as ``DIR/gridbarrier_ctas{C}_rounds{R}_{i}.json``
(the launches after the first) and ``DIR/cold/gridbarrier_ctas{C}_rounds{R}_0.json``
(the first after the compile), our Chrome JSON, which ``kda-sim compare`` and ``kda-sim
calibrate --kernel gridbarrier`` read.
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from kda_sim.errors import InvalidInput
from kda_sim.kernels.examples.gridbarrier import GridBarrierConfig
from kda_sim.timeline.chrome import write_chrome
from kda_sim.timeline.model import (
    CellRange,
    CtaTrack,
    Meta,
    PollRecord,
    PutRecord,
    StageSpan,
    Timeline,
)

KERNEL = "gridbarrier"
REGION = "ARRIVE"  # the example kernel's counter region
CLOCK = "globaltimer ns (32 ns steps on the H100 and H200), origin the earliest CTA start"
# a CTA's record: its head, then the works, then the barriers (the kernel's layout too)
SMID, GAVE_UP = 0, 1
HEAD = 2
WORK = 2  # a work's words: begin, end
B_BEGIN, B_OLD, B_FIRST, B_SAT, B_TRIES, B_END = range(6)
BAR = 6  # a barrier's words


def work_slot(r: int) -> int:
    """The first word of work ``r``'s stamps (r = rounds: the last work)."""
    return HEAD + WORK * r


def barrier_slot(rounds: int, r: int) -> int:
    """The first word of barrier ``r``'s stamps."""
    return HEAD + WORK * (rounds + 1) + BAR * r


def record_words(rounds: int) -> int:
    """The words a CTA's record holds at ``rounds`` barriers."""
    return barrier_slot(rounds, rounds)


def record_slots(rounds: int) -> int:
    """The record's words in the kernel: the next power of two (a Triton range's size)."""
    return 1 << (record_words(rounds) - 1).bit_length()


def _refuse(msg: str, where: str, what: str = "stamps") -> InvalidInput:
    return InvalidInput(msg, what=what, where=where)


def _check(s: np.ndarray, ctas: int, rounds: int, sms: int, where: str) -> None:
    """Refuses stamps that are not a whole launch of (ctas, rounds), naming the record."""
    if s.ndim != 2 or s.shape[0] != ctas:
        got = s.shape[0] if s.ndim == 2 else s.shape
        raise _refuse(f"{got} CTA records, the configuration has ctas = {ctas}", where, "ctas")
    if s.shape[1] < record_words(rounds):
        raise _refuse(
            f"{s.shape[1]} words a CTA, {record_words(rounds)} at rounds = {rounds}",
            where,
            "rounds",
        )
    for c in range(ctas):
        row = s[c]
        if not 0 <= row[SMID] < sms:
            raise _refuse(f"CTA {c}: SM {row[SMID]}, the GPU has {sms}", where, "smid")
        if row[GAVE_UP]:
            raise _refuse(
                f"CTA {c} gave up {row[GAVE_UP]} wait(s) (bounded spin): the launch did not "
                "pass its barriers",
                where,
                "gave up",
            )
        times: list[tuple[str, int]] = []
        for r in range(rounds + 1):
            w = work_slot(r)
            times += [(f"work {r} begin", row[w]), (f"work {r} end", row[w + 1])]
            if r == rounds:
                continue
            b = barrier_slot(rounds, r)
            if row[b + B_TRIES] < 1:
                raise _refuse(f"CTA {c}: round {r}'s wait made no try (not stamped)", where)
            for k, name in ((B_BEGIN, "begin"), (B_FIRST, "first issue"), (B_SAT, "satisfied")):
                times.append((f"barrier {r} {name}", row[b + k]))
            times.append((f"barrier {r} end", row[b + B_END]))
        for name, t in times:
            if t <= 0:
                raise _refuse(f"CTA {c}: {name} not stamped (a round missing)", where, "rounds")
        for (a, ta), (b_, tb) in itertools.pairwise(times):
            if tb < ta:
                raise _refuse(f"CTA {c}: {b_} ({tb}) before {a} ({ta})", where, "order")
    for r in range(rounds):
        olds = sorted(int(v) for v in s[:, barrier_slot(rounds, r) + B_OLD])
        if olds != list(range(r * ctas, (r + 1) * ctas)):
            raise _refuse(
                f"round {r}: the adds returned {olds[:4]}..{olds[-4:]}, not {r * ctas} .. "
                f"{(r + 1) * ctas - 1} (one add a CTA a round)",
                where,
                "counter",
            )


def timeline_of(
    stamps: Any,
    ctas: int,
    rounds: int,
    *,
    gpu: str,
    sms: int,
    extra: dict[str, Any] | None = None,
    where: str = "stamps",
) -> Timeline:
    """One launch's records ([ctas, words] int64) as a measured ``gridbarrier`` timeline
    (module docstring); InvalidInput, naming ``where``, for records that are not a whole
    launch of (ctas, rounds) on a GPU of ``sms`` SMs."""
    cfg = GridBarrierConfig(ctas=ctas, rounds=rounds).validate()
    s = np.asarray(stamps, dtype=np.int64)
    _check(s, ctas, rounds, sms, where)
    t0 = int(s[:, work_slot(0)].min())
    last = {}  # round -> the CTA whose add made the count its target, and the add's time
    for c in range(ctas):
        for r in range(rounds):
            b = barrier_slot(rounds, r)
            if s[c, b + B_OLD] == (r + 1) * ctas - 1:
                last[r] = c
    tracks = []
    for c in range(ctas):
        row = [int(v) - t0 for v in s[c]]
        tr = CtaTrack(cta=c, role="member", unit=int(s[c, SMID]), xcd=0)
        tr.start, tr.end = float(row[work_slot(0)]), float(row[work_slot(rounds) + 1])
        for r in range(rounds + 1):
            w = work_slot(r)
            tr.stages.append(StageSpan("work", r, float(row[w]), float(row[w + 1])))
            if r == rounds:
                continue
            b = barrier_slot(rounds, r)
            tr.stages.append(StageSpan("barrier", r, float(row[b]), float(row[b + B_END])))
            # the add's serialization: between its issue and its return
            put = (row[b + B_BEGIN] + row[b + B_FIRST]) / 2
            tr.puts.append(PutRecord("barrier", r, REGION, 1, 0, put))
        tracks.append(tr)
    for c, tr in enumerate(tracks):
        for r in range(rounds):
            b = barrier_slot(rounds, r)
            prod = last[r]
            tr.polls.append(
                PollRecord(
                    "barrier",
                    r,
                    f"{REGION}>={(r + 1) * ctas}",
                    1,
                    1,
                    float(s[c, b + B_FIRST] - t0),
                    float(s[c, b + B_SAT] - t0),
                    int(s[c, b + B_TRIES]) - 1,
                    producer=prod,
                    put_time=tracks[prod].puts[r].time,
                    put_ref=r,
                    cells=[CellRange(REGION, 0, 0, 1)],
                )
            )
    # never "triton" at the top of extra: that marks a trace of our K1 (Meta.measured_build)
    ext = {"sms": sms, **(extra or {})}
    meta = Meta.for_launch(
        cfg, kernel=KERNEL, source="measured", gpu=gpu, clock=CLOCK, extra=ext, blocks=ctas
    )
    return Timeline(meta=meta, ctas=tracks)


NAME = re.compile(rf"{KERNEL}_ctas(\d+)_rounds(\d+)_(\d+)\.json")  # what trace_name gives


def trace_name(ctas: int, rounds: int, i: int) -> str:
    """A launch's file name: the kernel, its configuration, the launch's index."""
    return f"{KERNEL}_ctas{ctas}_rounds{rounds}_{i}.json"


def launches(
    doc: dict[str, Any], skip_bad: bool = False
) -> tuple[list[tuple[Path, Timeline]], list[tuple[Path, str]]]:
    """Every launch of a probe run as (relative file name, timeline), the first after the
    compile under ``cold/``, the rest at the top; and the launches refused, with why
    (``skip_bad``; else the first refused raises its InvalidInput)."""
    env = doc["env"]
    gpu, sms = str(env["gpu"]), int(env["sms"])
    common = {k: doc[k] for k in ("work_iters", "nbytes", "max_tries")}
    out, bad = [], []
    for row in doc["rows"]:
        c, r = int(row["ctas"]), int(row["rounds"])
        runs = [("cold", 0, row["compile_launch"])] + [
            ("", i, st) for i, st in enumerate(row["launches"])
        ]
        for folder, i, st in runs:
            name = Path(folder) / trace_name(c, r, i)
            extra = {
                **common,
                "probe": "lab.gridbarrier_probe",
                "after_compile": folder == "cold",
                "env": env,
            }
            try:
                tl = timeline_of(st, c, r, gpu=gpu, sms=sms, extra=extra, where=str(name))
            except InvalidInput as e:
                if not skip_bad:
                    raise
                bad.append((name, str(e)))
                continue
            out.append((name, tl))
    return out, bad


def _median(xs: Sequence[float]) -> float:
    return float(statistics.median(xs)) if xs else float("nan")


def summarize(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """Per configuration, medians over the launches after the first (and the first after
    the compile apart): the makespan, a work's span, a barrier's span, a wait's tries;
    and how many launches were refused (``refused``; why in ``why``)."""
    made, bad = launches(doc, skip_bad=True)
    rows: dict[tuple[int, int, bool], dict[str, Any]] = {}

    def row(name: Path, c: int, r: int) -> dict[str, Any]:
        key = (c, r, name.parent.name == "cold")
        if key not in rows:
            rows[key] = {"ctas": c, "rounds": r, "cold": key[2], "refused": 0, "why": []}
            rows[key] |= {"makespan": [], "work": [], "barrier": [], "tries": []}
        return rows[key]

    for name, tl in made:
        x = row(name, tl.meta.params["ctas"], tl.meta.params["rounds"])
        spans: dict[str, list[float]] = {"work": [], "barrier": []}
        for tr in tl.ctas:
            for st in tr.stages:
                spans[st.name].append(st.dur)
        x["makespan"].append(tl.makespan)
        x["work"].append(_median(spans["work"]))
        x["barrier"].append(_median(spans["barrier"]))
        x["tries"].append(_median([p.retries + 1 for tr in tl.ctas for p in tr.polls]))
    for name, why in bad:
        c, r = (int(v) for v in NAME.fullmatch(name.name).groups()[:2])  # type: ignore[union-attr]
        x = row(name, c, r)
        x["refused"] += 1
        x["why"].append(why)
    out = sorted(rows.values(), key=lambda x: (x["rounds"], x["ctas"], not x["cold"]))
    for x in out:
        x["launches"] = len(x["makespan"])
        for k in ("makespan", "work", "barrier", "tries"):
            x[k] = _median(x[k])
    return out


def report(doc: dict[str, Any]) -> str:
    """The run's table: a row a configuration, the first launch after the compile apart;
    the launches refused and why below it."""
    lines = [
        f"{doc['env'].get('gpu')}: a work is {doc['work_iters']} FMA rounds and "
        f"{doc['nbytes']} B loaded a CTA; medians over launches",
        "| ctas | rounds | launches | makespan (us) | work (us) | barrier (us) | tries a wait "
        "| refused |",
        "|---|---|---|---|---|---|---|---|",
    ]
    whys = []
    for r in summarize(doc):
        which = " (first after compile)" if r["cold"] else ""
        lines.append(
            f"| {r['ctas']} | {r['rounds']}{which} | {r['launches']} | {r['makespan'] / 1e3:.2f} "
            f"| {r['work'] / 1e3:.2f} | {r['barrier'] / 1e3:.2f} | {r['tries']:.0f} "
            f"| {r['refused']} |"
        )
        whys += r["why"]
    return "\n".join(lines + [f"refused: {w}" for w in whys])


def write_traces(doc: dict[str, Any], folder: Path, skip_bad: bool = False) -> list[Path]:
    """Every launch of ``doc`` written under ``folder`` (which exists); an existing file,
    or a launch refused (unless ``skip_bad``: then it is left out and said on stderr), is
    refused before any file is written."""
    from kda_sim.commands.common import refuse_overwrite

    made, bad = launches(doc, skip_bad)
    for name, why in bad:
        print(f"gridbarrier_trace: left out {name}: {why}", file=sys.stderr)
    if not folder.is_dir():
        raise InvalidInput("no such directory", what="directory", where=str(folder))
    paths = [folder / name for name, _ in made]
    (folder / "cold").mkdir(exist_ok=True)
    for p in paths:
        refuse_overwrite(p, force=False)
    for p, (_, tl) in zip(paths, made, strict=True):
        write_chrome(tl, p)
    return paths


def main(argv: list[str] | None = None) -> int:
    import json

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("run", type=Path, help="a lab.gridbarrier_probe run (its --out)")
    ap.add_argument("--dir", type=Path, required=True, help="write the traces here (exists)")
    ap.add_argument(
        "--skip-bad", action="store_true", help="leave out the launches refused (said on stderr)"
    )
    a = ap.parse_args(argv)
    try:
        doc = json.loads(a.run.read_text())
        paths = write_traces(doc, a.dir, a.skip_bad)
    except InvalidInput as e:
        print(f"gridbarrier_trace: {e}", file=sys.stderr)
        return 2
    except (OSError, ValueError, KeyError, TypeError) as e:
        print(f"gridbarrier_trace: {a.run}: not a gridbarrier_probe run ({e})", file=sys.stderr)
        return 2
    print(f"wrote {len(paths)} traces under {a.dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
