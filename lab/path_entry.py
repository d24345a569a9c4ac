"""Where the critical path enters the first kda task on it, and the race that decides it,
in the launches and in seeded runs of the model (docs/calibration.md, "The path's entry
into the first kda task"). No GPU.

From the gemv on, a path reaches its first kda task in one of three ways: a gemv CTA's
f_a (or beta) put releases a task's k.gates (``k.gates``); a gemv CTA's PROJ put
releases the k.conv of the chunk whose QK put then released that k.gates (``k.conv``);
or that chunk's CTA ran into k.conv by its own program order, its PROJ rows there when
its poll began, after its k.stage (``k.stage``: a gemv CTA's own first kda task, begun
after its gemv1). For each launch and run, at the first k.gates on the path (task G):

- ``gates_slack``: G's last f_a-or-beta put less the last QK put into G (> 0: the gemv's
  put came last and the path enters at k.gates);
- at the chunk whose QK put came last (task Q, its CTA): ``conv_slack``, its k.conv
  PROJ poll's last put less the poll's first issue (> 0: the put came after the CTA
  reached the poll, the path enters at k.conv; <= 0: by the CTA's order, ``k.stage``);
- the producers: the f_a-or-beta put's and Q's PROJ put's gemv CTA, each with what
  shares its SM (``lab.makespan_parts``' class: alone, attn, gemv-first: the earlier of
  two gemv CTAs, gemv-second: the later) and its gemv1 end as a rank among the gemv
  CTAs (0: the first to end, 1: the last); Q's CTA's role and class, and, when it is a
  gemv CTA, its gemv1 end's rank and its k.stage's duration.

Puts are placed as ``compare`` places them (``compare.diff.put_estimates``: a measured
trace records stages and polls, not puts), so a launch's slack is read within its
stage's bounds; the gemv1 ends and k.stage durations are measured.

Usage::

    python -m lab.path_entry TRACE_DIR (--folds DIR | --profile P) [--shapes 4x1,1x2]
        [--spread SD --stages gemv0,gemv1] [--seeds N] [--json OUT]
"""

from __future__ import annotations

import statistics
import sys
from collections import Counter
from typing import Any

from kda_sim.compare.diff import annotate_producers, put_estimates
from kda_sim.compare.model import ModelView, model_view, op_stage
from kda_sim.kernels.k1.kda import task_coords
from kda_sim.timeline.critical import EPS_NS, CriticalPath, critical_path
from kda_sim.timeline.model import CtaTrack, PollRecord, Timeline
from lab.knorm_wait import Sides, _polls_by_op, both_sides, sides_main
from lab.makespan_parts import _neighbour

KDA_ENTRY = ("k.stage", "k.conv", "k.gates")  # the stages a path can enter a kda task by
KDA = (*KDA_ENTRY, "k.recur", "k.norm")
ENTRIES = ("k.gates", "k.conv", "k.stage")
GATES_POLLS = ("f_a", "QK", "beta")  # k.gates' polls in program order
CHAIN = (
    "proj_by_gemv1_end",
    "conv_by_gemv1_end",
    "conv_put",
    "q_gemv1_end",
    "q_stage_end",
    "q_conv_sat",
    "q_conv_end",
    "qk_put",
)


def _gemv_ranks(tl: Timeline) -> dict[int, tuple[float, float]]:
    """Each gemv CTA's gemv1 end and its rank among the gemv CTAs' (0 first, 1 last)."""
    ends = {
        c.cta: s.end for c in tl.ctas if c.role == "gemv" for s in c.stages if s.name == "gemv1"
    }
    order = sorted(ends, key=lambda k: ends[k])
    n = max(len(order) - 1, 1)
    return {k: (ends[k], i / n) for i, k in enumerate(order)}


def _last_put(mv: ModelView, cta: int, ops: dict[int, int], i: int, p: PollRecord) -> Any:
    """The last put poll ``i`` of ``cta`` waited on: (time, producer, producer's op)."""
    if i not in ops or p.satisfied is None:
        return None
    puts = put_estimates(mv, cta, ops[i], p.satisfied)
    return max(puts)[:3] if puts else None


def _first_kda(tl: Timeline, path: CriticalPath) -> tuple[str, int, int] | None:
    """The first kda stage the path runs through: (its name, CTA, task)."""
    for s in path.steps:
        if s.kind != "run":
            continue
        for st in tl.ctas[s.cta].stages:
            if st.name in KDA and st.end >= s.start - EPS_NS and st.start < s.end - EPS_NS:
                return st.name, s.cta, st.task
    return None


def _first_gates(tl: Timeline, path: CriticalPath) -> tuple[int, int] | None:
    for s in path.steps:
        if s.kind != "run":
            continue
        for st in tl.ctas[s.cta].stages:
            if st.name == "k.gates" and st.end >= s.start - EPS_NS and st.start < s.end - EPS_NS:
                return s.cta, st.task
    return None


def _producer(
    tl: Timeline, cta: int, ranks: dict[int, tuple[float, float]], by_unit: dict, stage: str = ""
) -> dict[str, Any]:
    c = tl.ctas[cta]
    out: dict[str, Any] = {"cta": cta, "role": c.role, "stage": stage}
    if c.role == "gemv":
        out["class"] = _neighbour(tl, c, by_unit)
        out["gemv1_end"], out["gemv1_rank"] = ranks.get(cta, (None, None))
    return out


def entry_row(tl: Timeline) -> dict[str, Any] | None:
    """One launch's (or run's) entry into its path's first kda task (see the module), on
    its own clock; None where the path has no k.gates."""
    if not any(c.puts for c in tl.ctas):  # a measured trace: name its polls' producers
        tl = annotate_producers(tl, model_view(tl))
    path = critical_path(tl)
    if path is None:
        return None
    first, gk = _first_kda(tl, path), _first_gates(tl, path)
    if first is None or gk is None:
        return None
    mv = model_view(tl)
    progs = mv.handoffs.launch.programs
    ranks = _gemv_ranks(tl)
    by_unit: dict[int | None, list[CtaTrack]] = {}
    for c in tl.ctas:
        by_unit.setdefault(c.unit, []).append(c)
    gcta, gtask = gk
    ops = _polls_by_op(mv, gcta)
    polls = [
        (i, p)
        for i, p in enumerate(tl.ctas[gcta].polls)
        if p.stage == "k.gates" and p.task == gtask
    ]
    if len(polls) != len(GATES_POLLS):
        return None
    last = {
        name: _last_put(mv, gcta, ops, i, p)
        for (i, p), name in zip(polls, GATES_POLLS, strict=True)
    }
    if any(v is None for v in last.values()):
        return None
    proj = max(last["f_a"], last["beta"])
    qk_t, q_cta, q_op = last["QK"]
    q_task = op_stage(progs[q_cta].ops, q_op)[1]
    qc = tl.ctas[q_cta]
    qops = _polls_by_op(mv, q_cta)
    conv = [(i, p) for i, p in enumerate(qc.polls) if p.stage == "k.conv" and p.task == q_task]
    spans = {(s.name, s.task): s for s in qc.stages}
    row: dict[str, Any] = {
        "entry": first[0],
        "gates": {"cta": gcta, "task": gtask, "first_issue": polls[0][1].first_issue},
        "proj_kind": "f_a" if proj is last["f_a"] else "beta",
        "proj_put": proj[0],
        "proj_by": _producer(tl, proj[1], ranks, by_unit, op_stage(progs[proj[1]].ops, proj[2])[0]),
        "qk_put": qk_t,
        "gates_slack": proj[0] - qk_t,
        "q": {
            **_producer(tl, q_cta, ranks, by_unit),
            "task": q_task,
            "chunk": task_coords(q_task)[2],
            "own": q_cta == gcta,
        },
    }
    if conv:
        i, p = conv[0]
        lp = _last_put(mv, q_cta, qops, i, p)
        if lp is not None:
            row["conv_put"], row["conv_issue"] = lp[0], p.first_issue
            row["conv_slack"] = lp[0] - p.first_issue
            row["conv_by"] = _producer(
                tl, lp[1], ranks, by_unit, op_stage(progs[lp[1]].ops, lp[2])[0]
            )
    st = spans.get(("k.stage", q_task))
    if st is not None:
        row["q"]["stage_start"], row["q"]["stage_dur"] = st.start, st.dur
    row["chain"] = _chain(row, spans, q_task, conv)
    return row


def _chain(
    row: dict[str, Any], spans: dict[tuple[str, int], Any], q_task: int, conv: list
) -> dict[str, float]:
    """The race's times from the gemv on, less the f_a-or-beta put's (ns): each
    producer's gemv1 end, Q's gemv1 end (a gemv CTA), k.stage end, k.conv poll satisfied
    and end, and the QK put."""
    t0 = row["proj_put"]
    out: dict[str, float] = {}

    def at(key: str, v: float | None) -> None:
        if v is not None:
            out[key] = v - t0

    at("proj_by_gemv1_end", row["proj_by"].get("gemv1_end"))
    at("conv_by_gemv1_end", row.get("conv_by", {}).get("gemv1_end"))
    at("conv_put", row.get("conv_put"))
    at("q_gemv1_end", row["q"].get("gemv1_end"))
    st, cv = spans.get(("k.stage", q_task)), spans.get(("k.conv", q_task))
    at("q_stage_end", None if st is None else st.end)
    at("q_conv_sat", conv[0][1].satisfied if conv else None)
    at("q_conv_end", None if cv is None else cv.end)
    at("qk_put", row["qk_put"])
    return out


def _med(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def _counts(rows: list[dict[str, Any]], key: str, field: str) -> dict[str, int]:
    """How many of ``rows``' ``key`` (a producer) have each ``field`` (its class: its
    role where it is no gemv CTA)."""
    return dict(Counter(r[key].get(field, r[key]["role"]) for r in rows if key in r))


def _rank(rows: list[dict[str, Any]], key: str) -> float | None:
    return _med(
        [r[key]["gemv1_rank"] for r in rows if r.get(key, {}).get("gemv1_rank") is not None]
    )


def side_summary(rows: list[dict[str, Any] | None]) -> dict[str, Any]:
    """Over a side's launches or runs: the entries' shares, and per entry the medians of
    the slacks, the race's times (``CHAIN``) and the producers' classes and ranks."""
    ok = [r for r in rows if r is not None]
    out: dict[str, Any] = {"n": len(ok)}
    out["entry"] = {e: sum(r["entry"] == e for r in ok) / max(len(ok), 1) for e in ENTRIES}
    for e in ENTRIES:
        rs = [r for r in ok if r["entry"] == e]
        if not rs:
            continue
        out[e] = {
            "n": len(rs),
            "gates_slack": _med([r["gates_slack"] for r in rs]),
            "conv_slack": _med([r["conv_slack"] for r in rs if "conv_slack" in r]),
            "proj_by_class": _counts(rs, "proj_by", "class"),
            "proj_by_stage": _counts(rs, "proj_by", "stage"),
            "proj_by_rank": _rank(rs, "proj_by"),
            "conv_by_class": _counts(rs, "conv_by", "class"),
            "conv_by_stage": _counts(rs, "conv_by", "stage"),
            "conv_by_rank": _rank(rs, "conv_by"),
            "q_class": _counts(rs, "q", "class"),
            "q_rank": _rank(rs, "q"),
            "q_stage_dur": _med([r["q"]["stage_dur"] for r in rs if "stage_dur" in r["q"]]),
            "q_own": sum(r["q"]["own"] for r in rs) / len(rs),
            "q_chunk_odd": sum(r["q"]["chunk"] % 2 for r in rs) / len(rs),
            "chain": {k: _med([r["chain"][k] for r in rs if k in r["chain"]]) for k in CHAIN},
        }
    return out


def entry_report(s: Sides) -> dict[str, Any]:
    out = {}
    for label, real, sim in both_sides(s, entry_row):
        out[label] = {
            "real": side_summary(real),
            "model": side_summary(sim),
            "real_rows": real,
            "model_rows": sim,
        }
    return {**s.header(), "shapes": out}


def _f(v: float | None, fmt: str = ".0f") -> str:
    return "-" if v is None else format(v, fmt)


def _cls(d: dict[str, int]) -> str:
    return " ".join(f"{k} {v}" for k, v in sorted(d.items(), key=lambda kv: -kv[1]))


def show(rep: dict[str, Any]) -> str:
    lines = [
        "| shape | side | entry | share | gates slack | conv slack | f_a/beta by (class; rank)"
        " | PROJ into Q's k.conv by (class; rank) | Q's CTA (class; rank; k.stage ns) |",
        "|" + "---|" * 9,
    ]
    for label, r in rep["shapes"].items():
        for side in ("real", "model"):
            s = r[side]
            for e in ENTRIES:
                if e not in s:
                    continue
                x = s[e]
                proj = f"{_cls(x['proj_by_class'])}; {_f(x['proj_by_rank'], '.2f')}"
                conv = f"{_cls(x['conv_by_class'])}; {_f(x['conv_by_rank'], '.2f')}"
                q = f"{_cls(x['q_class'])}; {_f(x['q_rank'], '.2f')}; {_f(x['q_stage_dur'])}"
                lines.append(
                    f"| {label} | {side} | {e} | {s['entry'][e]:.2f} | {_f(x['gates_slack'])}"
                    f" | {_f(x['conv_slack'])} | {proj} | {conv} | {q} |"
                )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    return sides_main("path_entry", __doc__, entry_report, show, argv)


if __name__ == "__main__":
    sys.exit(main())
