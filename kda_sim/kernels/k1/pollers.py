"""Which CTA and stage poll a given pair: for naming the reader of a stale pass.

The candidate comes from the seed's index arithmetic; it is then confirmed against that
one CTA's program (cheap: one CTA, not a launch), so the protocol stays the authority.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BETA_0, FA_0, G2_0, GEMV0, HD, NH, NPROJ, NVCH, PROJ, VCH
from kda_sim.kernels.k1.kda import kda_program, task_cta
from kda_sim.kernels.k1.program import cta_program
from kda_sim.kernels.k1.regions import Region
from kda_sim.kernels.k1.tickets import gemv_item
from kda_sim.protocol.ops import Begin, Op, Poll
from kda_sim.protocol.space import CellSpace


def _candidate(cfg: LaunchConfig, region: Region, index: int) -> tuple[int, int]:
    """(CTA, kda task or -1) that polls ``region[index]``."""
    s, ns, lng = cfg.S, cfg.NS, cfg.L
    if region is Region.PART:
        t = (index // (ns * 2)) % s
        return (0 if cfg.gate_local else t), -1
    if region in (Region.WGT, Region.MSQ):
        return 0, -1
    if region is Region.XRDY:
        return GEMV0, -1
    if region is Region.PROJ:
        t, row = divmod(index, NPROJ)
        req = t // lng
        if row < G2_0:
            h, ch = (row % PROJ) // HD, (row % HD) // VCH
        elif row < FA_0:
            h, ch = (row - G2_0) // HD, ((row - G2_0) % HD) // VCH
        elif BETA_0 <= row < BETA_0 + NH:
            h, ch = row - BETA_0, 0
        else:
            h, ch = 0, 0
        task = (req * NH + h) * NVCH + ch
        return task_cta(task, cfg), task
    head = index // (lng * 2 * HD) if region is Region.QK else index // (lng * NVCH)
    task = head * NVCH
    return task_cta(task, cfg), task


def _polling_stage(ops: Iterable[Op], gid: int) -> tuple[str, int] | None:
    """(stage, task) of the first poll of ``gid`` in ``ops``, or None."""
    stage, task = "start", -1
    for op in ops:
        if isinstance(op, Begin):
            stage, task = op.stage, op.task
        elif isinstance(op, Poll) and np.isin(gid, op.cells):
            return stage, task
    return None


def poller(cfg: LaunchConfig, region: Region, index: int) -> tuple[int | None, str, int] | None:
    """(CTA, stage, task) of a poll of ``region[index]`` in a launch of ``cfg``, or None.
    The CTA is None for work taken from a ticket counter (``cfg.tickets``): no CTA is
    placed to run it, whichever takes its ticket does."""
    cta, task = _candidate(cfg, region, index)
    space = CellSpace.of(cfg)
    gid = int(space.gid(region, index))
    if cfg.tickets:
        # the kda tasks are ticket items in both schedules; under gemv_tickets the gemv
        # groups (the XRDY pollers) are too: the item's own ops say who polls
        if task >= 0:
            item = kda_program(task, cfg, space)
        elif cfg.gemv_tickets and region is Region.XRDY:
            item = gemv_item(0, cfg, space)
        else:
            item = None
        if item is not None:
            got = _polling_stage(item, gid)
            return None if got is None else (None, *got)
    got = _polling_stage(cta_program(cta, cfg, space).ops, gid)
    return None if got is None else (cta, *got)
