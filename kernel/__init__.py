"""K1 ``kda_pre``, the fused Kimi-K3 KDA layer: the torch reference beside the Triton and
FlyDSL kernels, behind one entry point and one backend interface.

    from kda_kernel import get_backend, kda_pre
    from kda_kernel.inputs import make_inputs

    cfg = get_backend("triton").default_config(2, 2)  # its recommended variants, said
    ref = kda_pre(make_inputs(cfg), cfg)  # backend="torch": the reference, CPU or GPU
    got = kda_pre(make_inputs(cfg, device="cuda"), cfg, backend="triton", trace=True)
    got.outputs["core_out"], got.trace  # a kda_sim Timeline

The backends (``backend.Backend``): ``torch`` (``reference.py``), ``triton``
(``triton/``, a CUDA GPU), ``flydsl`` (``flydsl/``, compile-only here). Importing this
package imports neither torch, Triton nor FlyDSL.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from kda_kernel.backend import OUTPUTS, Backend, BackendUnavailable, Result
from kda_sim.kernels.k1.config import LaunchConfig

__all__ = [
    "BACKENDS",
    "OUTPUTS",
    "Backend",
    "BackendUnavailable",
    "Result",
    "get_backend",
    "kda_pre",
]

# backend name -> the module whose ``backend`` it is (the entry points of the group
# kda_sim.backends in pyproject.toml name the same objects)
BACKENDS = {
    "torch": "kda_kernel.reference",
    "triton": "kda_kernel.triton",
    "flydsl": "kda_kernel.flydsl",
}


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``BACKENDS``)."""
    if name not in BACKENDS:
        raise ValueError(f"backend {name!r}: one of {', '.join(BACKENDS)}")
    return importlib.import_module(BACKENDS[name]).backend


def kda_pre(
    inputs: Mapping[str, Any], cfg: LaunchConfig, backend: str = "torch", **options: Any
) -> Result:
    """One K1 step on ``inputs`` (``kda_kernel.inputs.make_inputs(cfg)``) at the launch
    configuration ``cfg`` by ``backend``, which runs exactly what ``cfg`` says (its
    ``default_config`` recommends the variants); ``options`` are the backend's own (the
    Triton backend: ``trace``, ``watchdog_ms`` and the ``triton.launch.Build`` options).
    Raises BackendUnavailable, saying why, where the backend cannot run here, and an
    ``InvalidInput`` naming the field of ``cfg`` a backend cannot build."""
    be = get_backend(backend)
    ok, why = be.available()
    if not ok:
        raise BackendUnavailable(f"backend {be.name}: {why}")
    return be.run(inputs, cfg.validate(), **options)
