"""A bug modelled on an example kernel's machinery: the bug's own configuration (the
thread's names and sizes) mapped onto the example's, with the example's roles, stages,
colours, costs and resources."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from kda_sim.kernels.spec import Kernel
from kda_sim.protocol.program import Launch


def on_example(
    base: Kernel,
    *,
    name: str,
    description: str,
    config_type: type,
    inner: Callable[[Any], Any],
    fields: Mapping[str, str],
) -> Kernel:
    """``base``'s protocol under the name ``name``; ``inner(cfg)`` is the example's
    configuration for the bug's ``cfg`` (the launch keeps the bug's, so reports and
    timelines say the bug's names); ``fields`` names the bug's field for each of the
    example's that its ``launch_size`` hook names (a refusal names the bug's flags)."""

    def regions(cfg: Any) -> Mapping[str, int]:
        return base.regions(inner(cfg))

    def build(cfg: Any) -> Launch:
        launch = base.build(inner(cfg))
        return Launch(cfg, launch.space, launch.programs)

    def launch_size(cfg: Any) -> tuple[int, tuple[str, ...]]:
        ops, named = base.launch_size(inner(cfg))
        return ops, tuple(fields[f] for f in named)

    return Kernel(
        name=name,
        description=description,
        config_type=config_type,
        build_fn=build,
        regions_fn=regions,
        launch_size=launch_size if base.launch_size is not None else None,
        roles=base.roles,
        stages=base.stages,
        role_colors=base.role_colors,
        stage_colors=base.stage_colors,
        cost_keys=base.cost_keys,
        default_costs=base.default_costs,
        threads=base.threads,
        regs_per_thread=base.regs_per_thread,
    )
