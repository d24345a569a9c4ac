"""K1's cells in its own terms, for the data-flow checks' findings: what a cell holds
(region, request, head, chunk, row, decoded from the layout of :mod:`.regions`) and
which CTA or ticket item the layout gives it to (its one writer)."""

from __future__ import annotations

import numpy as np

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import (
    BETA_0,
    FA_0,
    G2_0,
    GEMV0,
    HD,
    NH,
    NPROJ,
    NVCH,
    PROJ,
    ROWS,
    VCH,
)
from kda_sim.kernels.k1.regions import Region
from kda_sim.protocol.access import NO_UNIT, item_unit, task_unit

K1_LOOP = 0  # a ticket launch has one loop, number 0


def _token(cfg: LaunchConfig, t: int) -> str:
    return f"token {t} (request {t // cfg.L}, position {t % cfg.L})"


def _proj_row(row: int) -> str:
    """An in_proj row: q / k / v / g2 (head, dim), f_a (dim), beta (head) or padding."""
    if row < G2_0:
        part, within = divmod(row, PROJ)
        return f"{'qkv'[part]} row, head {within // HD}, dim {within % HD}"
    if row < FA_0:
        return f"g2 row, head {(row - G2_0) // HD}, dim {(row - G2_0) % HD}"
    if row < BETA_0:
        return f"f_a row, dim {row - FA_0}"
    if row < BETA_0 + NH:
        return f"beta row, head {row - BETA_0}"
    return f"pad row {row - BETA_0 - NH}"


def name_cell(cfg: LaunchConfig, region: str, index: int) -> str:
    """``REGION[terms]``: K1's words for the cell ``index`` of ``region``."""
    s, ns, lng = cfg.S, cfg.NS, cfg.L
    if region == Region.PART.name:
        a, rest = divmod(index, s * ns * 2)
        t, q = divmod(rest, ns * 2)
        return f"PART[slice {a}, {_token(cfg, t)}, source {q // 2}, {('sq', 'dot')[q % 2]}]"
    if region == Region.WGT.name:
        t, k = divmod(index, ns + 1)
        return f"WGT[{_token(cfg, t)}, weight {k}]"
    if region == Region.MSQ.name:
        a, t = divmod(index, s)
        return f"MSQ[slice {a}, {_token(cfg, t)}]"
    if region in (Region.XRDY.name, Region.X.name):
        return f"{region}[slice {index}]"
    if region == Region.PROJ.name:
        t, row = divmod(index, NPROJ)
        return f"PROJ[{_token(cfg, t)}, group {row // ROWS}, {_proj_row(row)}]"
    if region == Region.QK.name:
        head, rest = divmod(index, lng * 2 * HD)
        j, rest = divmod(rest, 2 * HD)
        part, lane = divmod(rest, HD)
        req, h = divmod(head, NH)
        return (
            f"QK[request {req}, head {h}, position {j}, {'qk'[part]}, chunk {lane // VCH}, "
            f"lane {lane}]"
        )
    if region == Region.ONRM.name:
        head, rest = divmod(index, lng * NVCH)
        j, ch = divmod(rest, NVCH)
        req, h = divmod(head, NH)
        return f"ONRM[request {req}, head {h}, position {j}, chunk {ch}]"
    return f"{region}[{index}]"


def expected_writers(cfg: LaunchConfig, region: str, index: np.ndarray) -> np.ndarray:
    """The unit whose put the layout gives each cell of ``region`` (``NO_UNIT`` none):
    a kda task's cells its task's (:func:`~kda_sim.protocol.access.task_unit`, wherever
    it runs), a gemv group's its CTA or, in a gemv ticket launch, its item, the attn
    roles' their CTA (slice a on CTA a, token t's gate on CTA t)."""
    idx = np.asarray(index, dtype=np.int64)
    s, ns, lng = cfg.S, cfg.NS, cfg.L
    if region == Region.PART.name:
        return idx // (s * ns * 2)
    if region == Region.WGT.name:
        return np.full(idx.shape, NO_UNIT) if cfg.gate_local else idx // (ns + 1)
    if region == Region.MSQ.name:
        return idx // s
    if region in (Region.XRDY.name, Region.X.name):
        return idx.copy()
    if region == Region.PROJ.name:
        rg = (idx % NPROJ) // ROWS
        if cfg.gemv_tickets:
            return item_unit(K1_LOOP, rg)
        return GEMV0 + rg // 2
    if region == Region.QK.name:
        head, lane = idx // (lng * 2 * HD), idx % HD
        return task_unit(head * NVCH + lane // VCH)
    if region == Region.ONRM.name:
        return task_unit((idx // (lng * NVCH)) * NVCH + idx % NVCH)
    return np.full(idx.shape, NO_UNIT)


KDA_STAGES: tuple[str, ...] = ("k.stage", "k.conv", "k.gates", "k.recur", "k.norm")


def work_items(cfg: LaunchConfig) -> dict[str, range]:
    """Each kda stage runs every task of the launch exactly once (static placement or
    ticket items alike); the gemv groups are checked through their PROJ puts."""
    return {stage: range(cfg.n_tasks) for stage in KDA_STAGES}
