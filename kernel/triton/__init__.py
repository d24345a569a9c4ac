"""The Triton K1 (NVIDIA; written for the H200, the AMD build untested) and its backend.

Device code, one concern a module (the compiled kernel is ``k1.kda_pre_k1``):

    constexprs  the protocol constants and record layouts as constexprs
    limits      the fixed sizes host and device share (warps, 16-token tiles, nb)
    machine     clocks, SM id, sleeps and back-off, L2 prefetch, bf16 rounding, dots
    record      the trace record in registers
    mailbox     put, poll (inline-asm loads, CTA-wide stale count), alarm record, layout
    attn        the attn role: slice, gate, mix, x rows and XRDY
    gemv        the gemv role: x times w_in (FMA or tensor cores), PROJ puts
    kda         one kda task
    k1          the persistent kernel: 256 programs, the roles, the kda tasks, the trace

Host side: ``defaults`` (the recommended ``LaunchConfig``: the variants nobody chose),
``launch`` (``Build``: the configuration and the backend's options; the scratch layout;
one launch),
``run`` (what ``kda-sim kernel run`` and the entry point call), ``watchdog`` and
``alarm_layout``, ``trace`` and ``trace_layout`` (the record -> a kda_sim timeline),
``interp`` / ``stage_kernels`` / ``interp_check`` (the device code under Triton's
interpreter), ``offline`` (an sm_90 compile without a GPU), ``warm`` (fill the compile
cache before a GPU session). Public device functions for probes: ``mailbox.put``,
``mailbox.poll``, ``mailbox.load_pairs``, ``mailbox.count_bad``, ``machine.now``,
``machine.smid``, ``gemv.gemv``.

Importing this package imports neither torch nor Triton.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kda_kernel.backend import Result
from kda_kernel.faults import FAULTS
from kda_sim.kernels.k1.config import LaunchConfig


class TritonBackend:
    """The entry point's ``triton`` backend: a CUDA GPU; ``cfg`` is run as it says (a
    variant the kernel cannot build is refused, naming the field); options are the
    ``Build`` options (compile and launch switches)."""

    name = "triton"
    faults: tuple[str, ...] = FAULTS

    def available(self) -> tuple[bool, str]:
        try:
            import torch
            import triton  # noqa: F401
        except ImportError as e:
            return False, f"needs torch and triton ({e.name} missing)"
        if not torch.cuda.is_available():
            return False, "no CUDA GPU here (the Triton K1 runs on an NVIDIA GPU)"
        return True, ""

    def default_config(
        self, R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any
    ) -> LaunchConfig:
        """The recommended configuration at (R, L, nb, kda0); the variants given are kept
        (``defaults.default_config``)."""
        from kda_kernel.triton.defaults import default_config

        return default_config(R, L, nb, kda0, **variants)

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> Any:
        """The compile key (``launch.Build``) for ``cfg`` with ``options``, validated;
        Triton compiles it at the first launch (``offline.compile_k1`` without a GPU).
        Raises ``launch.Unsupported`` naming a field of ``cfg`` it cannot build."""
        from kda_kernel.triton.launch import Build, options_only

        return Build(cfg, **options_only(dict(options or {}))).validate()

    def run(
        self, inputs: Mapping[str, Any], cfg: LaunchConfig, *, trace: bool = False, **options: Any
    ) -> Result:
        from kda_kernel.triton.run import run_inputs

        return run_inputs(dict(inputs), cfg, trace=trace, **options)

    def run_shape(
        self, cfg: LaunchConfig, *, arch: str | None = None, **request: Any
    ) -> dict[str, Any]:
        """``kda-sim kernel run``: ``run.run`` at ``cfg``'s shape (inputs made here)."""
        from kda_kernel.triton import run

        if arch is not None:
            raise ValueError("--arch is the FlyDSL backend's (Triton compiles for this GPU)")
        return run.run(cfg, **request)

    def exit_code(self, error: BaseException) -> int | None:
        """2: no GPU, torch or Triton missing, an invalid request, a launch the pre-flight
        refused; 1: the watchdog gave up or the outputs differ from the reference."""
        if isinstance(error, ImportError | ValueError):
            return 2
        from kda_kernel.preflight import UnsafeLaunch
        from kda_kernel.triton.run import CheckFailed, KernelUnavailable
        from kda_kernel.triton.watchdog import KernelStuck

        if isinstance(error, KernelStuck | CheckFailed):
            return 1
        if isinstance(error, KernelUnavailable | UnsafeLaunch):
            return 2
        return None


backend = TritonBackend()
