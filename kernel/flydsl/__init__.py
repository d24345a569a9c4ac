"""Our FlyDSL kernels, compiled compile-only (no ROCm GPU here): K1 ``kda_pre``
(:mod:`kda_kernel.flydsl.k1`), the probes ``kda-sim isa`` is tested on
(:mod:`kda_kernel.flydsl.probes`), the toolchain check (:mod:`kda_kernel.flydsl.toolchain`,
installed by ``scripts/flydsl_env.sh``), and the entry point's ``flydsl`` backend
(``backend``). Importing this package does not import FlyDSL."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kda_kernel.backend import Result, given_config
from kda_sim.kernels.k1.config import LaunchConfig


class FlydslBackend:
    """The entry point's ``flydsl`` backend: builds K1 for gfx942 / gfx950 (compile-only);
    running it needs a ROCm GPU, and this machine has none."""

    name = "flydsl"
    faults: tuple[str, ...] = ()

    def available(self) -> tuple[bool, str]:
        from kda_kernel.flydsl.run import rocm_gpu_present

        if not rocm_gpu_present():
            return False, (
                "no ROCm GPU here: the FlyDSL K1 is compile-only on this machine "
                "(backend.build compiles it for gfx942 / gfx950)"
            )
        return False, "a ROCm GPU is present, but the FlyDSL K1's runner is not written"

    def default_config(
        self, R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any
    ) -> LaunchConfig:
        """The variants given; the others the seed's order."""
        return given_config(R, L, nb, kda0, **variants)

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> Any:
        """``k1.build_k1``: options ``arch`` (default gfx950), ``dump_dir`` (default a new
        temporary folder), ``timeline``, ``markers``."""
        import tempfile
        from pathlib import Path

        from kda_kernel.flydsl.k1 import build_k1

        opts = dict(options or {})
        arch = opts.pop("arch", "gfx950")
        dump = opts.pop("dump_dir", None) or tempfile.mkdtemp(prefix="kda_flydsl_")
        return build_k1(cfg, arch, Path(dump), **opts)

    def run(
        self, inputs: Mapping[str, Any], cfg: LaunchConfig, *, trace: bool = False, **options: Any
    ) -> Result:
        from kda_kernel.flydsl.run import run_k1

        run_k1(cfg, options.get("arch"))  # raises NoRocmGpu (an InvalidInput) here
        raise AssertionError("unreachable: run_k1 runs nothing yet")

    def run_shape(
        self, cfg: LaunchConfig, *, arch: str | None = None, **request: Any
    ) -> dict[str, Any]:
        """``kda-sim kernel run --backend flydsl``: says why it cannot run here."""
        from kda_kernel.flydsl.run import run_k1

        run_k1(cfg, arch)  # NoRocmGpu (InvalidInput): exit 2 in kda_sim.cli
        raise AssertionError("unreachable: run_k1 runs nothing yet")

    def exit_code(self, error: BaseException) -> int | None:
        return 2 if isinstance(error, ValueError) else None


backend = FlydslBackend()
