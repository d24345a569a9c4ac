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

Host side: ``launch`` (``Build``, the backend's options; the scratch layout; one launch),
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
    """The entry point's ``triton`` backend: a CUDA GPU; options are ``Build`` fields."""

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

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> Any:
        """The compile key (``launch.Build``) for ``cfg`` with ``options``, validated;
        Triton compiles it at the first launch (``offline.compile_k1`` without a GPU)."""
        from kda_kernel.triton.launch import Build

        return Build.of(cfg, **dict(options or {})).validate()

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
        build = dict(request.pop("build", None) or {})
        if cfg.gate_local:
            build["gate_local"] = True
        return run.run(cfg.R, cfg.L, cfg.nb, cfg.kda0, build=build or None, **request)

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
