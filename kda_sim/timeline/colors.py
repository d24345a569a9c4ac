"""Display order and colours of stages and roles, shared by the Gantt figure, the
summary and the app (kept free of plotting imports, so the app's first render does not
pay for matplotlib).

A kernel's own order and colours are its spec's (:func:`display`). Views that do not
yet pass the kernel read K1's from the module names below: this module is the one place
the timeline layer asks for K1.
"""

from __future__ import annotations

from typing import Any

from kda_sim.kernels.registry import get

_K1 = get("k1")  # the views' default kernel until each passes its timeline's
STAGES: tuple[str, ...] = tuple(_K1.stages)
ROLES: tuple[str, ...] = tuple(_K1.roles)
STAGE_COLORS: dict[str, str] = dict(_K1.stage_colors)
ROLE_COLORS: dict[str, str] = dict(_K1.role_colors)
PALETTE: tuple[str, ...] = (
    "#1f77b4",
    "#ff7f0e",
    "#2ca02c",
    "#d62728",
    "#9467bd",
    "#8c564b",
    "#e377c2",
    "#7f7f7f",
    "#bcbd22",
    "#17becf",
)


def display(kernel: str) -> Any:
    """The spec of ``kernel`` (roles, stages, their colours); K1's if it is not known."""
    from kda_sim.errors import InvalidInput

    try:
        return get(kernel)
    except InvalidInput:
        return _K1


def color_of(name: str, colors: dict[str, str], order: tuple[str, ...]) -> str:
    """``name``'s colour, else one of :data:`PALETTE` by its place in ``order``."""
    if name in colors:
        return colors[name]
    i = order.index(name) if name in order else abs(hash(name))
    return PALETTE[i % len(PALETTE)]
