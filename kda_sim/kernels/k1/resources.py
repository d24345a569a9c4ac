"""What a K1 CTA takes of a unit: LDS from the shape, and the x rows' LDS budget."""

from __future__ import annotations

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import COLS, F32, HD, VCH, x_lds_bytes
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


def check_fits(cfg: LaunchConfig, prof: GpuProfile) -> None:
    need = x_lds_bytes(cfg.S)
    if need > prof.x_lds_budget:
        raise InvalidInput(
            f"S = {cfg.S}: x rows take {need} B of LDS, over {prof.name}'s budget of "
            f"{prof.x_lds_budget} B (x_lds_budget; S <= {prof.x_lds_budget // (need // cfg.S)})",
            what="x rows LDS budget",
        )
