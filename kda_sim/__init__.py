"""kda-sim: a simulator and visual debugger for the mailbox protocols of GPU persistent
kernels.

The public face (imported when first used, so ``import kda_sim`` stays cheap)::

    from kda_sim import get_kernel, load_gpu, simulate
    k = get_kernel("pingpong")              # a registered name, or "path/to/kernel.py"
    res = simulate(k.default_config(), load_gpu("h200"))
    res.timeline                            # a Timeline: write_chrome(res.timeline, path)
    res.timeline.meta.extra["costs"]        # which kernel costs ran: "pingpong default_costs ..."
    profile_for("h200", "k1")               # the GPU with K1's fitted costs (else stock, else
                                            # its default_costs); .costs_from says which
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_PUBLIC: dict[str, tuple[str, str]] = {
    "simulate": ("kda_sim.engine.simulate", "simulate"),
    "SimResult": ("kda_sim.engine.simulate", "SimResult"),
    "load_gpu": ("kda_sim.machine.profile", "load_gpu"),
    "profile_for": ("kda_sim.machine.costs", "profile_for"),
    "get_kernel": ("kda_sim.kernels.registry", "get"),
    "load_kernel": ("kda_sim.kernels.registry", "load_kernel"),
    "kernel_names": ("kda_sim.kernels.registry", "names"),
    "KernelSpec": ("kda_sim.kernels.spec", "KernelSpec"),
    "Kernel": ("kda_sim.kernels.spec", "Kernel"),
    "Launch": ("kda_sim.protocol.program", "Launch"),
    "CtaProgram": ("kda_sim.protocol.program", "CtaProgram"),
    "CellSpace": ("kda_sim.protocol.space", "CellSpace"),
    "Timeline": ("kda_sim.timeline.model", "Timeline"),
    "write_chrome": ("kda_sim.timeline.chrome", "write_chrome"),
    "read_chrome": ("kda_sim.timeline.chrome", "read_chrome"),
    "InvalidInput": ("kda_sim.errors", "InvalidInput"),
}

__all__ = sorted(_PUBLIC)


def __getattr__(name: str) -> Any:
    where = _PUBLIC.get(name)
    if where is None:
        raise AttributeError(f"module 'kda_sim' has no attribute {name!r}")
    value = getattr(import_module(where[0]), where[1])
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])
