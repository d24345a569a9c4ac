"""The backend interface every K1 implementation offers, and the result of one call.

A backend is a small object (``Backend``): its ``name``; ``available()``, whether it can
run here and, if not, why; ``default_config(R, L, ...)``, the configuration it recommends
where a user leaves a variant unsaid; ``build(cfg, options)``, what it compiles for a
configuration (exactly what it says, or an error naming the field it cannot build);
``run(inputs, cfg, ...)``, one layer step on the inputs, returning the outputs and, on
request, the measured trace. ``kda_kernel.kda_pre`` picks one by name; ``kda-sim kernel
run`` finds them through the entry points of the group ``kda_sim.backends``
(pyproject.toml), so ``kda_sim`` never imports this package.

The command line asks two more things of a backend, both optional to implement:
``run_shape(cfg, **request)``, a whole run on inputs the backend makes for the shape
(checks, watchdog, trace file) reported as a dict, and ``exit_code(error)``, the command's
exit code for an error the backend raised (1: a property failed, 2: impossible here or an
invalid request; None: not the backend's).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kda_sim.kernels.k1.config import LaunchConfig
from kda_sim.timeline.model import Timeline

# what a step returns, by name: the prefix rows (p'), the core output, the two states
OUTPUTS = ("prefix", "core_out", "conv_state", "rstate")


@dataclass(frozen=True)
class Result:
    """One step's outputs (``OUTPUTS``) and, where asked for and recorded, its trace."""

    outputs: dict[str, Any]
    trace: Timeline | None = None
    info: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Backend(Protocol):
    name: str
    faults: tuple[
        str, ...
    ]  # the faults its watchdog can plant (kda_sim.kernels.k1.constants.FAULTS)

    def available(self) -> tuple[bool, str]:
        """Whether it can run here; if not, why (a sentence for the user)."""
        ...

    def default_config(
        self, R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any
    ) -> LaunchConfig:
        """The configuration it recommends at (R, L, nb, kda0): each variant given kept,
        each left unsaid (None or absent) filled in as this backend runs best."""
        ...

    def build(self, cfg: LaunchConfig, options: Mapping[str, Any] | None = None) -> Any:
        """What it compiles for ``cfg`` with its own ``options``: exactly what ``cfg``
        says, or an error naming the field it cannot build."""
        ...

    def run(
        self, inputs: Mapping[str, Any], cfg: LaunchConfig, *, trace: bool = False, **options: Any
    ) -> Result:
        """One step on ``inputs`` (``kda_kernel.inputs.make_inputs``)."""
        ...


def given_config(R: int, L: int, nb: int = 8, kda0: int = 0, **variants: Any) -> LaunchConfig:
    """A ``LaunchConfig`` with the variants given (not None); the others the seed's order:
    ``default_config`` of a backend that recommends nothing else."""
    return LaunchConfig(R, L, nb, kda0, **{k: v for k, v in variants.items() if v is not None})


class BackendUnavailable(RuntimeError):
    """The backend cannot run here (the message says why)."""
