"""The static data-flow checks: silent on every unmutated kernel, and each fault class
caught on a hand-made mutant, with the mutated CTA, stage and cell named."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import pytest

from kda_sim.checks.dataflow import check_dataflow
from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.checks.mutations import Case, with_ops, with_programs
from kda_sim.cli import main
from kda_sim.commands.common import kernel_config
from kda_sim.errors import InvalidInput
from kda_sim.kernels.bugs.case import BugCase
from kda_sim.kernels.bugs.corpus import cases
from kda_sim.kernels.examples.pingpong import PingPongConfig
from kda_sim.kernels.examples.ticketqueue import TicketQueueConfig
from kda_sim.kernels.examples.ticketqueue import build as ticketqueue
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import GEMV0, NA
from kda_sim.kernels.k1.mutations import BY_NAME
from kda_sim.kernels.k1.program import build_launch
from kda_sim.kernels.k1.regions import Region
from kda_sim.kernels.registry import BUG_KERNELS, BUILTIN, get
from kda_sim.machine.profile import load_profile
from kda_sim.protocol.batches import poll
from kda_sim.protocol.ops import Begin, Compute, End, Publish, Put
from kda_sim.protocol.program import CtaProgram, Launch
from kda_sim.protocol.space import CellSpace

H200 = load_profile("h200")


def _failing(launch: Launch, cfg=None) -> list[Finding]:
    return check_dataflow(launch, cfg).failing


def _one(findings: list[Finding], category: Category) -> Finding:
    mine = [f for f in findings if f.category is category]
    assert mine, (category, [f.text() for f in findings])
    return mine[0]


# -- no false alarms ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "cfg",
    [
        LaunchConfig(1, 1),
        LaunchConfig(3, 2, nb=4, kda0=77),
        LaunchConfig(2, 4, kda0=200, gate_local=True, nw_first=True, onw_first=True),
        LaunchConfig(2, 2, kda_tickets=True),
        LaunchConfig(1, 3, gemv_tickets=True),
    ],
    ids=str,
)
def test_unmutated_k1_has_no_finding(cfg: LaunchConfig) -> None:
    rep = check_dataflow(build_launch(cfg))
    assert rep.findings == [], [f.text() for f in rep.findings]
    assert rep.declares_reads and rep.reads > 0 and rep.cells_written > 0
    assert rep.line().split(": ", 1)[1].startswith("ok (")


def test_unmutated_k1_over_the_whole_grid() -> None:
    """R 1..8 x L 1..4, every shape a launch holds (10 to 13 s on a loaded 2-core machine,
    building the launches included)."""
    shapes = 0
    for R in range(1, 9):
        for L in range(1, 5):
            try:
                cfg = LaunchConfig(R, L).validate()
            except InvalidInput:
                continue  # S = R L past what one launch holds
            shapes += 1
            found = check_dataflow(build_launch(cfg)).findings
            assert found == [], (R, L, [f.text() for f in found])
    assert shapes >= 20


@pytest.mark.parametrize("name", sorted(set(BUILTIN) - {"k1"} - set(BUG_KERNELS)))
def test_every_example_kernel_is_clean(name: str) -> None:
    spec = get(name)
    cfg = spec.default_config()
    assert check_dataflow(spec.build(cfg), cfg).findings == []


@pytest.mark.parametrize("case", cases(), ids=str)
def test_every_corpus_fix_is_clean(case: BugCase) -> None:
    spec = get(case.kernel)
    cfg = kernel_config(spec, [*case.args, *case.fix_args])
    assert check_dataflow(spec.build(cfg), cfg).findings == []


# -- each fault, on one CTA, named ---------------------------------------------------------------
def _mutant(name: str, cfg: LaunchConfig) -> Case:
    return BY_NAME[name].apply(cfg, H200)


@pytest.mark.parametrize("cfg", [LaunchConfig(1, 1), LaunchConfig(2, 3, kda0=9)], ids=str)
def test_a_dropped_poll_cell_is_an_unguarded_read_named_with_reader_and_writer(cfg) -> None:
    case = _mutant("poll-drops-a-cell", cfg)
    f = _one(_failing(case.launch), Category.COVERAGE)
    assert f.message.startswith(f"CTA {GEMV0} (gemv) in load_x")
    assert "X[slice 1] (flagged by XRDY[slice 1])" in f.message
    assert "put by CTA 1 (attn) in mix" in f.message
    assert f.details["reader"]["cta"] == GEMV0 and f.details["region"] == "X"
    assert f.details["index"] == 1 and f.fix


def test_a_put_into_the_next_region_names_region_and_index() -> None:
    case = _mutant("put-into-next-region", LaunchConfig(2, 2))
    f = _one(_failing(case.launch), Category.BOUNDS)
    assert f.message.startswith(f"CTA {NA - 1} (attn) in mix")
    assert "writes MSQ, but a cell it names lies in XRDY: XRDY[slice 0]" in f.message
    assert f.details["declared_region"] == "MSQ" and f.details["cells"] == 1


def test_an_item_on_two_ctas_is_run_twice_and_its_cells_written_twice() -> None:
    cfg = LaunchConfig(1, 2, kda0=5)
    found = _failing(_mutant("item-on-two-ctas", cfg).launch)
    items = _one(found, Category.ITEMS)
    assert "work item k.stage[task 0] runs twice" in items.message
    assert "by CTA 5 (attn) in k.stage (task 0)" in items.message
    assert "by CTA 6 (attn) in k.stage (task 0)" in items.message
    writers = _one(found, Category.WRITERS)
    assert writers.message.startswith("QK[request 0, head 0, position 0, q, chunk 0, lane 0]")
    assert {w["cta"] for w in writers.details["writers"]} == {5, 6}
    assert {w["stage"] for w in writers.details["writers"]} == {"k.conv"}


def test_a_put_before_its_poll_is_an_order_fault() -> None:
    found = _failing(_mutant("put-before-poll", LaunchConfig(2, 1)).launch)
    f = _one(found, Category.ORDER)
    assert f.message.startswith("CTA 0 (attn) in gate, op 9 puts a value computed from PART[")
    assert "which it polls only later (op 10)" in f.message
    assert f.details["reader"] == {
        "cta": 0,
        "loop": None,
        "item": None,
        "stage": "gate",
        "task": -1,
        "op": 9,
    }
    assert {f.category for f in found} == {Category.ORDER}


def test_a_publish_without_drain_on_one_cta_is_named() -> None:
    cfg = LaunchConfig(1, 1)
    base = build_launch(cfg)
    p = base.programs[3]
    ops = [replace(op, drain=False) if isinstance(op, Publish) else op for op in p.ops]
    found = _failing(with_programs(base, {3: with_ops(p, ops)}))
    assert len(found) == 1
    f = _one(found, Category.VISIBILITY)
    assert f.message.startswith("CTA 3 (attn) in mix")
    assert "raises XRDY[slice 3] without draining its stores of X[slice 3]" in f.message


def test_a_permutation_that_writes_each_pair_once_but_the_wrong_ones() -> None:
    cfg = LaunchConfig(1, 1, kda0=30)
    found = _failing(_mutant("permuted-put", cfg).launch)
    assert {f.category for f in found} == {Category.WRITERS}
    f = found[0]
    assert f.message.startswith("CTA 30 (attn) in k.conv (task 0)")
    assert "QK[request 0, head 0, position 0, q, chunk 1, lane 16]" in f.message
    assert "the kernel's layout gives to task 1" in f.message


def test_a_missing_put_names_who_should_have_put_it() -> None:
    found = _failing(_mutant("missing-put", LaunchConfig(1, 1)).launch)
    f = _one(found, Category.WRITERS)
    assert f.message.startswith("no op of this launch writes PROJ[token 0")
    assert f"it should be put by CTA {GEMV0} (gemv)" in f.message
    assert f.details["expected"] == f"CTA {GEMV0} (gemv)"


def test_a_placement_fault_is_not_a_data_fault() -> None:
    """A kda task moved to another CTA writes its own cells: the layout gives them to the
    task, wherever it runs (the deadlock checks own this fault)."""
    assert _failing(_mutant("task-behind-own-producer", LaunchConfig(1, 1)).launch) == []


def test_a_poll_whose_data_is_never_read_is_advice() -> None:
    cfg = LaunchConfig(1, 1)
    base = build_launch(cfg)
    p = base.programs[2]
    extra = poll("PROJ", base.space.gid(Region.PROJ, np.array([[5]])), width=12)
    k = next(k for k, op in enumerate(p.ops) if isinstance(op, Begin) and op.stage == "mix")
    launch = with_programs(base, {2: with_ops(p, [*p.ops[: k + 1], extra, *p.ops[k + 1 :]])})
    rep = check_dataflow(launch)
    assert rep.failing == []
    f = _one(rep.findings, Category.UNREAD)
    assert f.severity is Severity.ADVICE
    assert f.message.startswith("CTA 2 (attn) in mix") and "PROJ[token 0" in f.message


# -- kernels without hooks, and ticket items ------------------------------------------------------
def _pp(ops0: list, ops1: list, space: CellSpace | None = None) -> Launch:
    space = space or CellSpace.from_sizes({"VAL": 2, "NEXT": 2})
    progs = (CtaProgram(0, "producer", (), tuple(ops0)), CtaProgram(1, "consumer", (), tuple(ops1)))
    return Launch(PingPongConfig(), space, progs)


def test_without_hooks_cells_are_region_and_index() -> None:
    val = poll("VAL", np.array([[0]]), width=1)
    found = _failing(
        _pp(
            [Begin("produce"), Put(0, np.array([2])), End("produce")],
            [Begin("consume"), val, Compute("c", reads=np.array([0, 1])), End("consume")],
        )
    )
    bounds = _one(found, Category.BOUNDS)
    assert bounds.message == (
        "CTA 0 (producer) in produce, op 1 writes VAL, but a cell it names lies in NEXT: NEXT[0]"
    )
    missing = _one(found, Category.WRITERS)
    assert missing.message.startswith("no op of this launch writes VAL[0]")
    assert "should be put by" not in missing.message  # the kernel cannot say


def test_overlapping_regions_are_a_bounds_fault() -> None:
    space = CellSpace((2, 2), (0, 1), ("A", "B"))
    found = _failing(_pp([], [], space))
    assert "regions A (cells 0..1) and B (from cell 1) overlap" in found[0].message


def test_a_ticket_item_also_run_by_a_static_program_is_run_twice() -> None:
    cfg = TicketQueueConfig(ctas=2, items=4)
    base = ticketqueue(cfg)
    p = base.programs[1]
    extra = (Begin("item", 3), End("item", 3))
    found = _failing(with_programs(base, {1: with_ops(p, [*extra, *p.ops])}), cfg)
    f = _one(found, Category.ITEMS)
    assert f.message.startswith("work item item[task 3] runs twice in one launch: by CTA 1")
    assert "item 3 of the ticket loop 'items'" in f.message


def test_a_work_item_run_nowhere_is_named() -> None:
    cfg = TicketQueueConfig(ctas=1, items=3)
    launch = ticketqueue(cfg)
    found = _failing(replace(launch, cfg=replace(cfg, items=4)), replace(cfg, items=4))
    assert "work item item[task 3] runs on no CTA" in _one(found, Category.ITEMS).message


# -- the report -----------------------------------------------------------------------------------
def test_every_kernels_report_has_the_section(capsys) -> None:
    assert main(["check", "--kernel", "pingpong", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["dataflow"] == {
        "cells_written": 1,
        "reads": 1,
        "declares_reads": True,
        "faults": 0,
    }
    assert main(["check", "--kernel", "gridbarrier"]) == 0
    text = capsys.readouterr().out
    assert "data flow, static (one writer a cell, writes in bounds, reads after polls): ok" in text
