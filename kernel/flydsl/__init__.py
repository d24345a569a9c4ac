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
    """The entry point's ``flydsl`` backend: builds K1 for gfx942 / gfx950 (compile-only
    anywhere) and runs it on a ROCm GPU (:mod:`kda_kernel.flydsl.run`; untested on AMD
    hardware)."""

    name = "flydsl"
    faults: tuple[str, ...] = ()
    ktrace = True  # builds K1 with FlyDSL ktrace events (kernel run --ktrace)

    def available(self) -> tuple[bool, str]:
        from kda_kernel.flydsl.run import unavailable_reason

        why = unavailable_reason()
        return (why is None), (why or "")

    def default_config(
        self, R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any
    ) -> LaunchConfig:
        """The variants given; the others the seed's order."""
        return given_config(R, L, nb, kda0, **variants)

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> Any:
        """``k1.build_k1``: options ``arch`` (default gfx950), ``dump_dir`` (default a new
        temporary folder), ``timeline``, ``markers``, ``bounded``, ``delta``."""
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
        """Caller-given inputs are not served yet (``run_shape`` makes its own): says
        why not, the machine's reason first."""
        from kda_kernel.flydsl.run import NoRocmGpu, unavailable_reason

        why = unavailable_reason()
        raise NoRocmGpu(
            why or "the FlyDSL backend runs its own inputs only (kda-sim kernel run)",
            what="backend",
            where="flydsl",
        )

    def run_shape(self, cfg: LaunchConfig, **request: Any) -> dict[str, Any]:
        """``kda-sim kernel run --backend flydsl``: ``run.run`` at ``cfg``'s shape."""
        from kda_kernel.flydsl.run import run

        return run(cfg, **request)

    def exit_code(self, error: BaseException) -> int | None:
        """2: cannot run here, an invalid request, a launch the pre-flight refused;
        1: the outputs differ from the reference, or a bounded wait gave up."""
        from kda_sim.errors import InvalidInput

        if isinstance(error, ImportError | ValueError | InvalidInput):
            return 2
        from kda_kernel.flydsl.health import KernelStuck
        from kda_kernel.preflight import UnsafeLaunch
        from kda_kernel.triton.run import CheckFailed

        if isinstance(error, CheckFailed | KernelStuck):
            return 1
        if isinstance(error, UnsafeLaunch):
            return 2
        return None


backend = FlydslBackend()
