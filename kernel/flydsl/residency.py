"""How many K1 workgroups an AMD CU holds at once (gfx942 / gfx950), from the compiled
kernel's metadata: the pre-flight's input on a ROCm GPU (``kda_kernel.preflight.check``
refuses a launch whose 256 CTAs cannot all be resident).

CDNA3 / CDNA4 (AMD's ISA guides, LLVM's AMDGPUUsage): a CU has 4 SIMDs; a SIMD holds at
most 8 waves and 512 VGPRs a lane, shared by the unified arch VGPRs and AGPRs
(allocated in granules of 8); a workgroup's waves are spread over the 4 SIMDs; LDS is
64 KiB a CU on gfx942, 160 KiB on gfx950. Untested on AMD hardware.
"""

from __future__ import annotations

from pathlib import Path

from kda_kernel.preflight import Residency
from kda_sim.isa.parser import Kernel, parse

SIMDS_PER_CU = 4
WAVES_PER_SIMD = 8
VGPRS_PER_SIMD_LANE = 512
VGPR_GRANULE = 8
AGPR_ALIGN = 4  # AGPRs start at accum_offset, the arch VGPRs rounded up to 4
WAVE_LANES = 64
LDS_PER_CU = {"gfx942": 64 * 1024, "gfx950": 160 * 1024}


def _up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def unified_vgprs(vgprs: int, agprs: int) -> int:
    """A wave's share of the SIMD's unified register file, allocation granules included."""
    total = _up(vgprs, AGPR_ALIGN) + agprs if agprs else vgprs
    return _up(max(total, 1), VGPR_GRANULE)


def cu_residency(kernel: Kernel, arch: str, cus: int) -> Residency:
    """Workgroups of ``kernel`` one CU holds (and what limits it), ``cus`` CUs."""
    if arch not in LDS_PER_CU:
        raise ValueError(f"arch {arch!r}: the residency rule knows {', '.join(LDS_PER_CU)}")
    threads = kernel.max_threads or WAVE_LANES
    waves = -(-threads // WAVE_LANES)
    per_simd = -(-waves // SIMDS_PER_CU)  # one workgroup's waves on its fullest SIMD
    regs = unified_vgprs(kernel.vgprs, kernel.agprs)
    waves_by_regs = min(WAVES_PER_SIMD, VGPRS_PER_SIMD_LANE // regs)
    limits = {
        "registers": waves_by_regs // per_simd,
        "waves": WAVES_PER_SIMD // per_simd,
        "LDS": LDS_PER_CU[arch] // max(kernel.lds_bytes, 1),
    }
    by = min(limits, key=lambda k: limits[k])
    return Residency(regs, kernel.lds_bytes, threads, limits[by], by, cus)


def of_isa(isa: Path | str, arch: str, cus: int) -> Residency:
    """The residency of the one kernel in a dumped ISA file."""
    [kernel] = parse(Path(isa).read_text(), where=str(isa)).kernels
    return cu_residency(kernel, arch, cus)
