"""Static data-flow checks over a launch's reads and writes
(:mod:`kda_sim.protocol.access`), exact and independent of timing: one writer a cell
(:mod:`.writers`), every write inside its region (:mod:`.bounds`), every read ordered
after its write by a poll and every put after the polls of its inputs (:mod:`.coverage`),
flags raised after their data drained (:mod:`.drain`), every work item once
(:mod:`.items`), no word cleared while a waiter or an add of it is unordered with the
clear (:mod:`.resets`). Findings name the CTA or ticket item, stage and op, and the cell in the
kernel's own terms (:mod:`.naming`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kda_sim.checks.dataflow.bounds import check_bounds
from kda_sim.checks.dataflow.coverage import check_coverage
from kda_sim.checks.dataflow.drain import check_drain
from kda_sim.checks.dataflow.items import check_items
from kda_sim.checks.dataflow.naming import Namer
from kda_sim.checks.dataflow.resets import check_resets
from kda_sim.checks.dataflow.writers import check_writers
from kda_sim.checks.findings import Finding
from kda_sim.protocol.access import Accesses, Kind, accesses
from kda_sim.protocol.program import Launch


@dataclass
class DataflowReport:
    cells_written: int  # distinct cells the launch writes
    reads: int  # reads of produced cells, polls left out
    declares_reads: bool  # whether the kernel says what its ops read (else coverage is vacuous)
    findings: list[Finding] = field(default_factory=list)

    @property
    def failing(self) -> list[Finding]:
        return [f for f in self.findings if f.fails]

    def line(self) -> str:
        head = "  data flow, static (one writer a cell, writes in bounds, reads after polls): "
        if self.failing:
            cats = sorted({f.category.value for f in self.failing})
            n = len(self.failing)
            return head + f"{n} fault{'s' if n != 1 else ''} ({', '.join(cats)})"
        if not self.cells_written:
            return head + "ok (no pair or flagged data written: hand-offs through words only)"
        said = (
            f"{self.reads} read{'s' if self.reads != 1 else ''} of produced cells, each after "
            "its poll"
            if self.declares_reads
            else "the kernel says no reads beyond its polls: coverage not checked"
        )
        cells = f"{self.cells_written} cell{'s' if self.cells_written != 1 else ''}"
        return head + f"ok ({cells} written once; {said})"

    def to_dict(self) -> dict[str, Any]:
        return {
            "cells_written": self.cells_written,
            "reads": self.reads,
            "declares_reads": self.declares_reads,
            "faults": len(self.failing),
        }


def check_dataflow(
    launch: Launch, cfg: Any | None = None, acc: Accesses | None = None
) -> DataflowReport:
    """Every data-flow check of ``launch`` (``cfg``: its configuration, for the kernel's
    hooks; default the launch's own)."""
    cfg = launch.cfg if cfg is None else cfg
    acc = accesses(launch) if acc is None else acc
    namer = Namer(acc, cfg)
    findings = [
        *check_writers(acc, namer),
        *check_bounds(acc, namer),
        *check_coverage(acc, namer),
        *check_drain(acc, namer),
        *check_items(acc, namer, cfg),
        *check_resets(acc, namer),
    ]
    produced = acc.write_count > 0
    inside = (acc.r_cell >= 0) & (acc.r_cell < acc.total)
    data = produced[acc.r_cell[inside]] & (acc.r_kind[inside] != Kind.POLL)
    reads = int(np.count_nonzero(data)) + acc.shortcut_reads
    return DataflowReport(int(np.count_nonzero(produced)), reads, acc.declares_reads(), findings)
