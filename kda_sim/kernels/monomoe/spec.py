"""The ``monomoe`` kernel object: the mono MoE ticket queue's regions, build, display
and default costs."""

from __future__ import annotations

from kda_sim.kernels.monomoe.config import MonoMoeConfig
from kda_sim.kernels.monomoe.protocol import ROLE, build, launch_size, regions, work_items
from kda_sim.kernels.spec import Kernel

STAGES = ("route", "sort", "shared_gu", "gemm1", "shared_down", "gemm2")  # ticket order

# Illustrative costs (ns: base, a unit of work), not measured: the README gives no stage
# times, only "a few microseconds" for each replaced kernel at M <= 16. A Compute's units
# are tokens (route pairs for the sort).
DEFAULT_COSTS: dict[str, tuple[float, float]] = {
    "moe.topk": (400.0, 0.0),
    "moe.sort": (300.0, 20.0),
    "moe.shared_gu": (900.0, 30.0),
    "moe.shared_down": (900.0, 30.0),
    "moe.gemm1": (700.0, 60.0),
    "moe.gemm2": (700.0, 60.0),
}

KERNEL = Kernel(
    name="monomoe",
    description=(
        "mono MoE ticket queue after vLLM's Kimi-K3 launch: top-k, sort, shared expert, "
        "gemm1 and gemm2 tiles, a routed flag with a launch epoch, counters cleared by the "
        "last ticket's taker"
    ),
    config_type=MonoMoeConfig,
    build_fn=build,
    regions_fn=regions,
    launch_size=launch_size,
    roles=(ROLE,),
    stages=STAGES,
    role_colors={ROLE: "#1f77b4"},
    stage_colors={
        "route": "#8c564b",
        "sort": "#7f7f7f",
        "shared_gu": "#17becf",
        "gemm1": "#ff7f0e",
        "shared_down": "#2ca02c",
        "gemm2": "#d62728",
    },
    cost_keys=tuple(DEFAULT_COSTS),
    default_costs=DEFAULT_COSTS,
    threads=256,  # one workgroup of 256 threads a CU, as the design's
    regs_per_thread=128,
    work_items=work_items,
)
