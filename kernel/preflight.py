"""Co-residency pre-flight: before a launch, how many K1 CTAs the GPU holds at once, from
the compiled kernel's registers, shared memory and threads, and whether the protocol
finishes with that many resident (the simulator's deadlock check). An unsafe launch is
refused with the simulator's explanation instead of hanging the GPU.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.kernels.k1.constants import BLOCKS
from kda_sim.machine.profile import GpuProfile, KernelResources, load_profile


class UnsafeLaunch(RuntimeError):
    """The launch would deadlock: some CTA's producer could never become resident."""


@dataclass(frozen=True)
class SmLimits:
    """One SM's budgets (sm_90 values are the defaults; read the device where possible)."""

    sms: int = 132
    threads: int = 2048
    regs: int = 65536
    shared: int = 233472  # 228 KiB
    shared_reserved_per_cta: int = 1024  # the driver's reserve a CTA (sm_80+)
    max_ctas: int = 32
    reg_alloc_unit: int = 256  # registers are allocated per warp in units of 256

    @classmethod
    def of_device(cls, device: int = 0) -> SmLimits:
        import torch

        p = torch.cuda.get_device_properties(device)
        return cls(
            sms=p.multi_processor_count,
            threads=p.max_threads_per_multi_processor,
            regs=getattr(p, "regs_per_multiprocessor", cls.regs),
            shared=getattr(p, "shared_memory_per_multiprocessor", cls.shared),
        )


@dataclass(frozen=True)
class Residency:
    regs_per_thread: int
    shared_bytes: int
    threads: int
    per_sm: int
    limited_by: str
    sms: int

    @property
    def slots(self) -> int:
        return self.per_sm * self.sms

    def describe(self) -> str:
        return (
            f"{self.regs_per_thread} registers x {self.threads} threads, "
            f"{self.shared_bytes} B shared: {self.per_sm} CTAs an SM (limited by "
            f"{self.limited_by}) x {self.sms} SMs = {self.slots} resident, launch {BLOCKS}"
        )


def residency(regs: int, shared: int, threads: int, lim: SmLimits) -> Residency:
    warps = -(-threads // 32)
    regs_a_warp = -(-(max(regs, 1) * 32) // lim.reg_alloc_unit) * lim.reg_alloc_unit
    limits = {
        "threads": lim.threads // threads,
        "registers": lim.regs // (regs_a_warp * warps),
        "shared memory": lim.shared // (shared + lim.shared_reserved_per_cta),
        "CTAs an SM": lim.max_ctas,
    }
    by = min(limits, key=lambda k: limits[k])
    return Residency(regs, shared, threads, limits[by], by, lim.sms)


def of_compiled(kernel: Any, lim: SmLimits) -> Residency:
    """From Triton's compiled kernel: n_regs, metadata.shared, num_warps."""
    if getattr(kernel, "n_regs", None) is None and hasattr(kernel, "_init_handles"):
        kernel._init_handles()  # loads the module: registers are known from then on
    md = kernel.metadata
    return residency(int(kernel.n_regs), int(md.shared), int(md.num_warps) * 32, lim)


def simulator_profile(res: Residency, base: str = "h200") -> GpuProfile:
    """The simulator's profile with this kernel's measured resources. The Triton K1 reads
    x from L2, not from LDS, so the seed's x-in-LDS budget does not bound its shapes."""
    prof = load_profile(base)
    return dataclasses.replace(
        prof,
        units=res.sms,
        kernel=KernelResources(res.threads, res.regs_per_thread, res.shared_bytes),
        x_lds_budget=1 << 30,
    )


def check(cfg: LaunchConfig, res: Residency, *, simulate: bool = True) -> str:
    """Raise :class:`UnsafeLaunch` if the launch cannot finish; else a one-line verdict."""
    if simulate:
        from kda_sim.engine.simulate import simulate as sim

        out = sim(cfg, simulator_profile(res), occupancy=res.per_sm)
        if out.deadlock:
            why = "\n  ".join(
                f"CTA {w.cta} {w.stage} {w.region}[{w.index}]: {w.reason}"
                for w in out.timeline.stuck[:12]
            )
            raise UnsafeLaunch(
                f"refusing to launch K1 {cfg.label()}: {res.describe()}; the simulator "
                f"finds a deadlock:\n  {why}"
            )
        return f"safe: {res.describe()}; simulated launch finishes"
    if res.slots < BLOCKS:
        # kda_tickets keeps the static placement's requirement: its tasks, whoever takes
        # them, poll PROJ rows that gemv CTAs up to 252 put (docs/whatif/ticket_k1.md)
        why = (
            " (kda_tickets keeps the static requirement: the kda tasks poll PROJ rows "
            "of gemv CTAs up to 252)"
            if cfg.kda_tickets
            else ""
        )
        raise UnsafeLaunch(
            f"refusing to launch K1 {cfg.label()}: {res.describe()}: "
            f"{BLOCKS - res.slots} CTAs could never be resident while the others spin{why}"
        )
    return f"safe: {res.describe()}"
