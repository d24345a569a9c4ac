"""Run our FlyDSL K1 on a ROCm GPU, where there is one.

This machine has none, and nothing here has run on AMD hardware: :func:`run_k1` says
so with :class:`NoRocmGpu` (an :class:`~kda_sim.errors.InvalidInput`, which the CLI
turns into exit 2) before touching FlyDSL's runtime. Compile-only builds are
:func:`kda_kernel.flydsl.k1.build_k1`.
"""

from __future__ import annotations

import glob
import os
from pathlib import Path

from kda_sim.errors import InvalidInput
from kda_sim.kernels.k1.config import LaunchConfig

KFD = Path("/dev/kfd")


class NoRocmGpu(InvalidInput):
    """No ROCm GPU on this machine: the kernel can be compiled, not run."""


def rocm_gpu_present() -> bool:
    """A ROCm GPU needs the KFD device node and at least one render node."""
    return KFD.exists() and bool(glob.glob("/dev/dri/renderD*"))


def run_k1(cfg: LaunchConfig, arch: str | None = None) -> None:
    """Run one launch of K1 on the local ROCm GPU."""
    if os.environ.get("COMPILE_ONLY") == "1" or not rocm_gpu_present():
        raise NoRocmGpu(
            "no ROCm GPU here (no /dev/kfd and /dev/dri/renderD*): the FlyDSL K1 compiles "
            "(kda-sim isa / build_k1, COMPILE_ONLY=1) but cannot run; nothing of it has "
            "run on AMD hardware",
            what="backend",
            where="flydsl",
        )
    raise NoRocmGpu(
        f"a ROCm GPU is present but the FlyDSL K1 runner for {cfg.label()} on "
        f"{arch or 'this GPU'} is not written: its inputs, scratch and epoch set-up have "
        "never been run on hardware",
        what="backend",
        where="flydsl",
    )
