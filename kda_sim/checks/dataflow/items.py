"""Every work item exactly once a launch: each stage the kernel's ``work_items`` hook
names begins each of its tasks once, over the programs (static placement) and the ticket
loops' items alike; two loops that share a ticket counter but not their items are a
fault wherever the hook is absent (the counter hands each ticket to one of them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from kda_sim.checks.dataflow.naming import Namer, capped, rest
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.access import Accesses
from kda_sim.protocol.ops import Begin

TWICE_FIX = "place each item on one CTA (or take it from the ticket queue only)"
NEVER_FIX = "place the item on a CTA, or give it a ticket"
CLASH_FIX = "give each ticket loop its own counter, or run one loop with every item"


def check_items(acc: Accesses, namer: Namer, cfg: Any) -> list[Finding]:
    fs = [
        Finding(
            Category.ITEMS,
            Severity.FAIL,
            f"CTA {cta} runs a ticket loop on the counter of loop '{acc.loops[loop].label}' "
            "with other items: each ticket goes to one of the two, so items of both run "
            "once or not at all",
            CLASH_FIX,
            {"cta": cta, "loop": acc.loops[loop].label},
        )
        for loop, cta in acc.clashes
    ]
    items = hook(spec_for(cfg), "work_items")
    if items is None:
        return fs
    rows = np.array([k for k, op in enumerate(acc.ops) if type(op) is Begin], dtype=np.int64)
    stages = np.array([acc.ops[r].stage for r in rows.tolist()], dtype=object)
    for stage, tasks in items(cfg).items():
        want = np.asarray(list(tasks), dtype=np.int64)
        mine = rows[stages == stage]
        got = acc.op_task[mine]
        fs += _twice(namer, stage, mine, got)
        fs += _never(namer, stage, want, got)
        fs += _unknown(namer, stage, mine, got, want)
    return capped(fs, lambda m: rest(Category.ITEMS, Severity.FAIL, m, "work items"))


def _twice(namer: Namer, stage: str, rows: np.ndarray, tasks: np.ndarray) -> list[Finding]:
    if tasks.size < 2:
        return []
    order = np.argsort(tasks, kind="stable")
    t, r = tasks[order], rows[order]
    dup = np.flatnonzero((t[1:] == t[:-1]) & np.r_[True, t[1:-1] != t[:-2]])
    return [
        Finding(
            Category.ITEMS,
            Severity.FAIL,
            f"work item {stage}[task {int(t[k])}] runs twice in one launch: by "
            f"{namer.site(int(r[k]))} and by {namer.site(int(r[k + 1]))}",
            TWICE_FIX,
            {
                "stage": stage,
                "task": int(t[k]),
                "runs": [namer.site_details(int(r[k])), namer.site_details(int(r[k + 1]))],
            },
        )
        for k in dup.tolist()
    ]


def _never(namer: Namer, stage: str, want: np.ndarray, got: np.ndarray) -> list[Finding]:
    missing = np.setdiff1d(want, got)
    if not missing.size:
        return []
    more = f" and {missing.size - 1} more tasks" if missing.size > 1 else ""
    return [
        Finding(
            Category.ITEMS,
            Severity.FAIL,
            f"work item {stage}[task {int(missing[0])}]{more} runs on no CTA and in no "
            "ticket item of this launch",
            NEVER_FIX,
            {"stage": stage, "tasks": missing[:64].tolist(), "count": int(missing.size)},
        )
    ]


def _unknown(
    namer: Namer, stage: str, rows: np.ndarray, got: np.ndarray, want: np.ndarray
) -> list[Finding]:
    odd = np.flatnonzero(~np.isin(got, want))
    if not odd.size:
        return []
    k = int(odd[0])
    return [
        Finding(
            Category.ITEMS,
            Severity.FAIL,
            f"{namer.site(int(rows[k]))} runs {stage}[task {int(got[k])}], which is not a work "
            "item of this launch",
            NEVER_FIX,
            {"stage": stage, "task": int(got[k]), "count": int(odd.size)},
        )
    ]
