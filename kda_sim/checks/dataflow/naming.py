"""The data-flow findings' words: cells in the kernel's own terms (its ``name_cell``
hook, else ``REGION[index]``), ops by CTA or ticket item, stage, task and op, and the
unit (CTA or item) the kernel's layout gives a cell to."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kda_sim.checks.findings import Category, Finding, Severity
from kda_sim.kernels.registry import spec_for
from kda_sim.kernels.spec import hook
from kda_sim.protocol.access import NO_UNIT, TASK_UNIT0, Accesses
from kda_sim.protocol.tickets import MAX_ITEMS

MAX_SHOWN = 4  # findings a check reports one by one; the rest are counted in one more


@dataclass
class Namer:
    acc: Accesses
    cfg: Any

    def __post_init__(self) -> None:
        spec = spec_for(self.cfg)
        self._name_cell = hook(spec, "name_cell")
        self._expected = hook(spec, "expected_writers")

    # -- cells -----------------------------------------------------------------------------
    def cell(self, gid: int) -> str:
        space = self.acc.launch.space
        if not 0 <= gid < space.total:
            return f"cell {gid} (outside the launch's {space.total} cells)"
        region, index = space.split(gid)
        if self._name_cell is not None:
            return str(self._name_cell(self.cfg, region.name, index))
        return f"{region.name}[{index}]"

    def cell_details(self, gid: int) -> dict[str, Any]:
        space = self.acc.launch.space
        if not 0 <= gid < space.total:
            return {"cell": int(gid), "region": None, "index": None, "name": self.cell(gid)}
        region, index = space.split(gid)
        return {"cell": int(gid), "region": region.name, "index": index, "name": self.cell(gid)}

    # -- who -------------------------------------------------------------------------------
    def cta(self, cta: int) -> str:
        role = next((p.role for p in self.acc.launch.programs if p.cta == cta), "")
        return f"CTA {cta} ({role})" if role else f"CTA {cta}"

    def unit(self, key: int) -> str:
        """A unit key (:meth:`kda_sim.protocol.access.Accesses.unit_of_op`) in words."""
        if key >= 0:
            return self.cta(key)
        if key <= TASK_UNIT0:
            return f"task {TASK_UNIT0 - key}"
        loop, item = divmod(-1 - key, MAX_ITEMS)
        label = self.acc.loops[loop].label if loop < len(self.acc.loops) else f"loop {loop}"
        return f"item {item} of the ticket loop '{label}'"

    def site(self, row: int) -> str:
        """``CTA 3 (attn) in gate, op 5`` or ``item 4 of the ticket loop 'x' in k.conv
        (task 4), op 8``."""
        seq = self.acc.seq_of(row)
        who = self.cta(seq.cta) if seq.loop < 0 else self.unit(seq.unit)
        stage = self.acc.stage_of(row)
        task = int(self.acc.op_task[row])
        where = f" in {stage}" + (f" (task {task})" if task >= 0 else "") if stage else ""
        return f"{who}{where}, op {int(self.acc.op_pos[row])}"

    def site_details(self, row: int) -> dict[str, Any]:
        seq = self.acc.seq_of(row)
        return {
            "cta": seq.cta if seq.loop < 0 else None,
            "loop": seq.loop if seq.loop >= 0 else None,
            "item": seq.item if seq.loop >= 0 else None,
            "stage": self.acc.stage_of(row),
            "task": int(self.acc.op_task[row]),
            "op": int(self.acc.op_pos[row]),
        }

    def expected(self) -> np.ndarray | None:
        """Each cell's unit as the kernel's layout gives it (``NO_UNIT`` none), or None
        where the kernel does not say."""
        if self._expected is None:
            return None
        space = self.acc.launch.space
        out = np.full(space.total, NO_UNIT, dtype=np.int64)
        for r, (size, off) in enumerate(zip(space.sizes, space.offsets, strict=True)):
            idx = np.arange(size, dtype=np.int64)
            out[off : off + size] = self._expected(self.cfg, space.name(r), idx)
        return out

    def writer_hint(self, expected: np.ndarray | None, gid: int) -> str:
        """``; it should be put by CTA 56 (gemv)`` where the kernel says, else ``""``."""
        if expected is None or not 0 <= gid < expected.size or expected[gid] == NO_UNIT:
            return ""
        return f"; the kernel's layout gives it to {self.unit(int(expected[gid]))}"


def sites_in(details: object) -> list[dict[str, Any]]:
    """Every site (:meth:`Namer.site_details`) nested in a finding's details."""
    if isinstance(details, dict):
        here = [details] if "cta" in details and "op" in details else []
        return here + [s for v in details.values() for s in sites_in(v)]
    if isinstance(details, list):
        return [s for v in details for s in sites_in(v)]
    return []


def capped(findings: list, make_more: Any) -> list:
    """The first :data:`MAX_SHOWN` findings, and one more counting the rest
    (``make_more(n)``) where there are more."""
    if len(findings) <= MAX_SHOWN:
        return findings
    return [*findings[:MAX_SHOWN], make_more(len(findings) - MAX_SHOWN)]


def rest(category: Category, severity: Severity, n: int, what: str) -> Finding:
    """The finding that counts what :func:`capped` leaves out."""
    return Finding(
        category,
        severity,
        f"and {n} more {what}, of the same kind as above",
        "as for the ones above (--json holds the count; fix those and check again)",
        {"more": n},
    )
