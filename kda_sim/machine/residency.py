"""How many CTAs a unit (CU / SM) holds at once, and whether a shape fits at all."""

from __future__ import annotations

from dataclasses import dataclass

from kda_sim.config import LaunchConfig
from kda_sim.constants import COLS, F32, HD, VCH, x_lds_bytes
from kda_sim.errors import InvalidInput
from kda_sim.machine.profile import GpuProfile


def lds_bytes(cfg: LaunchConfig, prof: GpuProfile) -> int:
    """LDS a CTA takes: the roles' arrays alias (one kernel, one allocation), so the
    largest of x rows, the attn CTA's source values and the kda task's arrays, plus the
    reserve for the small ones (reading: the seed does not give the layout)."""
    if prof.kernel.lds_bytes is not None:
        return int(prof.kernel.lds_bytes)
    vals = cfg.S * cfg.NS * COLS * F32
    kda = cfg.L * HD * F32 * 4 + cfg.L * VCH * F32 * 2
    return max(x_lds_bytes(cfg.S), vals, kda) + prof.lds_reserve


@dataclass(frozen=True)
class Residency:
    per_unit: int
    slots: int
    limited_by: str
    overridden: bool

    def holds(self, blocks: int) -> bool:
        return self.slots >= blocks


def check_fits(cfg: LaunchConfig, prof: GpuProfile) -> None:
    need = x_lds_bytes(cfg.S)
    if need > prof.x_lds_budget:
        raise InvalidInput(
            f"S = {cfg.S}: x rows take {need} B of LDS, over {prof.name}'s budget of "
            f"{prof.x_lds_budget} B (S <= {prof.x_lds_budget // (need // cfg.S)})",
            what="x rows LDS budget",
        )


def residency(cfg: LaunchConfig, prof: GpuProfile, occupancy: int | None = None) -> Residency:
    """CTAs a unit holds, from threads, registers and LDS (or ``occupancy`` if given)."""
    if occupancy is not None:
        if occupancy < 1:
            raise InvalidInput(f"--occupancy {occupancy}: at least 1", what="occupancy")
        return Residency(occupancy, occupancy * prof.units, "--occupancy", True)
    k = prof.kernel
    limits = {
        "threads": prof.threads_per_unit // k.threads,
        "registers": prof.regs_per_unit // (k.regs_per_thread * k.threads),
        "LDS": prof.lds_per_unit // lds_bytes(cfg, prof),
        "CTAs a unit": prof.max_ctas_per_unit,
    }
    by = min(limits, key=lambda n: limits[n])
    n = limits[by]
    return Residency(n, n * prof.units, by, False)
